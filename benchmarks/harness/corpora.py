"""The registry of corpora the benchmarks run on.

* bundled: gensim's Wikipedia sample (``wiki``, ``load_wiki_sample()``: its own train/test
  split), gensim's ``lee_background.cor`` (``lee``), the ``lda`` package's Reuters sample
  (``reuters``);
* synthetic: LDA corpora with Zipf word frequencies and known topics (``synthetic_chunks``;
  ``synth1e4``, ``synth1e5``);
* tabular data of the SGLD benchmarks: ``stratified_split`` (their 75/25 split of a bundled
  scikit-learn data set, standardised on the training part);
* shared real corpora, read from the data folder (``$SIMPLEXSG_DATA`` or ``--data``): the UCI
  bag-of-words files ``corpora/<name>/docword.txt.gz`` (``UCI_CORPORA``) and msweb
  (``msweb/``). Where the folder or a file is absent, the loaders raise ``Absent`` (a
  ``FileNotFoundError``) saying what is missing and how to point at it; the scripts skip
  that corpus with its message.

``lda_corpus(name, data_dir)`` gives the train/test pair of every LDA corpus by name;
``LDA_GROUPS`` says which corpora choose the LDA defaults (``tuning``) and which check them
(``heldout``).
"""
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from simplexsg.datasets import load_msweb, load_uci_bow, load_wiki_sample

#: The UCI bag-of-words corpora of the data folder (``corpora/<name>/docword.txt.gz``).
UCI_CORPORA = ("news", "parlspeech_en", "healthtweets", "fortunes", "wordnet_glosses", "gcide")
#: The LDA study's corpora: ``tuning`` ones chose the defaults, ``heldout`` ones check them.
LDA_GROUPS = {"tuning": ["news", "fortunes", "wiki", "synth1e4"],
              "heldout": ["parlspeech_en", "healthtweets", "wordnet_glosses", "gcide", "lee",
                          "reuters", "synth1e5"]}
#: The synthetic corpora by name: (documents, mean length).
SYNTHETIC = {"synth1e4": (10_000, 200), "synth1e5": (100_000, 60)}


class Absent(FileNotFoundError):
    """A corpus of the data folder is not there (or no data folder was given)."""


# ---------------------------------------------------------------------------- data folder
def data_path(data_dir, *parts):
    """``data_dir/parts...``; ``Absent`` (saying how to point at it) if there is no data
    folder or nothing at that path."""
    if not data_dir:
        raise Absent(f"no data folder for {'/'.join(parts)}: set SIMPLEXSG_DATA or pass --data")
    path = Path(data_dir, *parts)
    if not path.exists():
        raise Absent(f"no file at {path} (set SIMPLEXSG_DATA or --data)")
    return path


def uci_counts(name, data_dir):
    """The count matrix (documents x words, CSR int64) of the UCI corpus ``name``."""
    return load_uci_bow(data_path(data_dir, "corpora", name, "docword.txt.gz"))[0].tocsr()


def msweb(data_dir, subset):
    """msweb's ``subset`` ("train" or "test") as ``load_msweb`` gives it."""
    return load_msweb(data_path(data_dir, "msweb"), subset)


# ---------------------------------------------------------------------------- bundled
def wiki():
    """The bundled Wikipedia sample's ``(X_train, X_test)`` (200 / 50 articles)."""
    data = load_wiki_sample()
    return data.X_train, data.X_test


def lee_counts():
    """gensim's lee_background.cor (a document per line) vectorised; short ones (< 4) dropped."""
    from gensim.test.utils import datapath
    from sklearn.feature_extraction.text import CountVectorizer

    with open(datapath("lee_background.cor"), encoding="utf-8", errors="replace") as fh:
        lines = [line.lower() for line in fh]
    X = CountVectorizer(token_pattern=r"[a-z]{3,}", stop_words="english", min_df=2,
                        max_df=0.5).fit_transform(lines)
    return X[np.asarray(X.sum(axis=1)).ravel() >= 4]


def reuters_counts():
    """The ``lda`` package's Reuters sample."""
    import lda.datasets
    return lda.datasets.load_reuters()


# ---------------------------------------------------------------------------- synthetic
#: The synthetic LDA corpora: vocabulary, topics, Zipf exponent of the word frequencies, seed,
#: and the documents' topic-proportion prior (Dirichlet(SYNTH_ALPHA), symmetric).
SYNTH_WORDS, SYNTH_TOPICS, SYNTH_ZIPF, SYNTH_SEED, SYNTH_ALPHA = 20_000, 100, 1.1, 0, 0.1
#: The topics' Dirichlet concentration per word of the vocabulary (the default corpora's; a
#: smaller value makes topics that differ in their frequent words too, easier to find).
SYNTH_CONCENTRATION = 0.05


def _draw_synthetic_topics(rng, concentration):
    """The SYNTH_TOPICS true topics (rows, normalised) from ``rng``: Dirichlet(c V z)."""
    zipf = 1.0 / np.arange(1, SYNTH_WORDS + 1) ** SYNTH_ZIPF
    topics = rng.gamma(concentration * SYNTH_WORDS * zipf / zipf.sum(),
                       size=(SYNTH_TOPICS, SYNTH_WORDS))
    return topics / topics.sum(axis=1, keepdims=True)


def synthetic_references(score, concentration=SYNTH_CONCENTRATION):
    """Perplexities that place a fit on ``synthetic_chunks``' corpora, by ``score`` (a
    ``completion_perplexity``, with the corpora's own alpha): ``true_topics``, the topics the
    corpus was drawn from (what a fit can approach with enough data); ``unigram``, their
    average as a single topic (the population's word frequencies: a fit at or above it has
    found no topics)."""
    topics = _draw_synthetic_topics(np.random.default_rng(SYNTH_SEED), concentration)
    return {"true_topics": score(topics, SYNTH_ALPHA),
            "unigram": score(topics.mean(axis=0)[None], SYNTH_ALPHA)}


def documents_from_topic_counts(rng, cdfs, n_dk):
    """CSR counts (n, W) int64 of n documents whose tokens per topic are ``n_dk`` (n, K): each
    topic's tokens drawn at once from its words by inverse CDF (``cdfs`` (K, W): each row's
    cumulative sums, its last entry its total)."""
    n, (K, W) = n_dk.shape[0], cdfs.shape
    rows = [np.repeat(np.arange(n), n_dk[:, k]) for k in range(K)]
    cols = [np.searchsorted(cdfs[k], rng.random(r.size) * cdfs[k, -1], side="right")
            for k, r in enumerate(rows)]
    rows, cols = np.concatenate(rows), np.minimum(np.concatenate(cols), W - 1)
    X = sp.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, cols)), shape=(n, W))
    X.sum_duplicates()
    return X


def synthetic_chunks(n_docs, mean_length, chunk=None, concentration=SYNTH_CONCENTRATION):
    """An LDA corpus of ``n_docs`` documents as CSR chunks of ``chunk`` documents (None: one):
    SYNTH_TOPICS topics ~ Dirichlet(c V z) (c = ``concentration``), z_w ∝ 1 / (w + 1)^1.1
    over V = SYNTH_WORDS words; proportions ~ Dirichlet(SYNTH_ALPHA); lengths ~
    Poisson(mean_length); each topic's tokens of a chunk drawn at once by inverse CDF; empty
    documents dropped. One seeded stream (SYNTH_SEED) draws the topics, then the chunks in
    order, so a chunk is the same whatever comes after it, and one chunk of all the documents
    is ``synthetic_counts``."""
    rng = np.random.default_rng(SYNTH_SEED)
    cdf = np.cumsum(_draw_synthetic_topics(rng, concentration), axis=1)
    chunk = chunk or n_docs
    for start in range(0, n_docs, chunk):
        n = min(chunk, n_docs - start)
        doc_topic = rng.dirichlet(np.full(SYNTH_TOPICS, SYNTH_ALPHA), size=n)
        n_dk = rng.multinomial(rng.poisson(mean_length, size=n), doc_topic)
        X = documents_from_topic_counts(rng, cdf, n_dk)
        yield X[X.getnnz(axis=1) > 0]


def synthetic_counts(n_docs, mean_length):
    """``synthetic_chunks`` in one matrix."""
    return sp.vstack(list(synthetic_chunks(n_docs, mean_length)), format="csr")


# ---------------------------------------------------------------------------- LDA corpora
def split(X):
    """Seeded permutation (seed 0): the first ``min(1000, D // 10)`` documents are the test set."""
    X = sp.csr_matrix(X, dtype=np.int64)
    perm = np.random.default_rng(0).permutation(X.shape[0])
    n_test = min(1000, X.shape[0] // 10)
    return X[perm[n_test:]], X[perm[:n_test]]


def lda_corpus(name, data_dir):
    """``(X_train, X_test)`` of an LDA corpus (``LDA_GROUPS``); ``Absent`` if a data-folder
    corpus is not there. All but ``wiki`` (its own split) are split by ``split``."""
    if name in UCI_CORPORA:
        return split(uci_counts(name, data_dir))
    if name == "wiki":
        return wiki()
    if name == "lee":
        return split(lee_counts())
    if name == "reuters":
        return split(reuters_counts())
    return split(synthetic_counts(*SYNTHETIC[name]))


def lda_group_of(name):
    return next(group for group, names in LDA_GROUPS.items() if name in names)


def lda_corpus_names(words):
    """Corpus names from names and group words (``tuning``, ``heldout``, ``all``), in order,
    once each; SystemExit naming any unknown."""
    every = LDA_GROUPS["tuning"] + LDA_GROUPS["heldout"]
    names = [n for w in words for n in (every if w == "all" else LDA_GROUPS.get(w, [w]))]
    unknown = set(names) - set(every)
    if unknown:
        raise SystemExit(f"unknown corpora: {sorted(unknown)}")
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------------------- tabular
def stratified_split(X, y, seed, standardise=True):
    """``(X_train, X_test, y_train, y_test)``: a 75/25 split stratified by y (seed ``seed``),
    the columns standardised by the training part's mean and sd unless ``standardise`` is
    False."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y,
                                                        random_state=seed)
    if not standardise:
        return X_train, X_test, y_train, y_test
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test
