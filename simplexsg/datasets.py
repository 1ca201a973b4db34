"""Corpora as document-word count matrices: the bundled Wikipedia sample, synthetic LDA corpora and
multinomial mixtures, readers/writers for the UCI bag-of-words format, and the msweb reader;
``UCIBowCorpus`` and ``LDACCorpus`` (``simplexsg.readers``) stream corpora from disk instead.

Convention everywhere: ``X`` is a scipy CSR matrix of int64 counts, documents x words, and a
vocabulary is a numpy array of str giving the word of each column.
"""
import csv
import os
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from ._random import check_generator
from .readers import LDACCorpus, UCIBowCorpus

__all__ = ["LDACCorpus", "UCIBowCorpus", "load_msweb", "load_uci_bow", "load_wiki_sample",
           "make_lda_corpus", "make_multinomial_mixture", "save_uci_bow"]

WIKI_DESCRIPTION = """\
gensim's bundled Wikipedia sample (gensim/test/test_data/head500.noblanks.cor): 250 stemmed
English Wikipedia articles, one per line, space-separated tokens (331,339 tokens, 29,722 word
types). Preprocessing: vocabulary = words in at least 2 and at most 125 (50%) of the 250
articles, columns in sorted (str) order; out-of-vocabulary tokens removed; documents left with
fewer than 4 tokens dropped (none are); then a seeded permutation of the documents puts the first
n_test in X_test and the rest in X_train, rows in permutation order. With the defaults (n_test=50,
random_state=0): 12,623 words, 288,204 tokens, X_train 200 x 12,623 with 226,463 tokens, X_test
50 x 12,623 with 61,741 tokens.
"""


def _wiki_path():
    from gensim.test.utils import datapath

    return datapath("head500.noblanks.cor")


def load_wiki_sample(*, n_test=50, random_state=0):
    """Gensim's bundled 250-article Wikipedia sample as train/test count matrices (no network).

    Preprocessing as in ``WIKI_DESCRIPTION``: document frequency in
    [2, floor(0.5 * 250)], documents with >= 4 in-vocabulary tokens, a permutation drawn from
    ``check_generator(random_state)`` whose first ``n_test`` documents are the test set. Defaults
    give 12,623 words, 200 training documents with 226,463 tokens, 50 test documents with 61,741.

    Returns a ``Bunch`` with ``X_train`` (n_train, W) and ``X_test`` (n_test, W) CSR int64,
    ``vocabulary`` (W,) str, ``description``.
    """
    with open(_wiki_path(), encoding="utf-8") as fh:
        docs = [line.split() for line in fh]
    df = Counter(w for doc in docs for w in set(doc))
    max_df = int(0.5 * len(docs))
    vocabulary = np.array(sorted(w for w, c in df.items() if 2 <= c <= max_df))
    column = {w: j for j, w in enumerate(vocabulary)}
    word_ids = [np.array([column[w] for w in doc if w in column], dtype=np.int64) for doc in docs]
    word_ids = [ids for ids in word_ids if ids.size >= 4]
    n_docs = len(word_ids)
    if not 0 < n_test < n_docs:
        raise ValueError(f"n_test must be in [1, {n_docs - 1}], got {n_test}")
    lengths = np.array([ids.size for ids in word_ids])
    rows = np.repeat(np.arange(n_docs), lengths)
    X = sp.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, np.concatenate(word_ids))),
                      shape=(n_docs, vocabulary.size))
    X.sum_duplicates()
    perm = check_generator(random_state).permutation(n_docs)
    return Bunch(X_train=X[perm[n_test:]], X_test=X[perm[:n_test]], vocabulary=vocabulary,
                 description=WIKI_DESCRIPTION)


def _log_dirichlet(rng, alpha, size):
    """log of Dirichlet(alpha) draws, shape ``size + (len(alpha),)``, without underflow.

    Gamma(a) = Gamma(a + 1) * U^(1/a) is drawn in logs, so tiny shapes (a = 0.01 gives values
    like exp(-1000)) keep their relative sizes instead of rounding to 0 (and a whole row to 0/0).
    """
    alpha = np.broadcast_to(alpha, size + alpha.shape[-1:])
    log_g = np.log(rng.gamma(alpha + 1.0)) + np.log(rng.random(alpha.shape)) / alpha
    log_g -= log_g.max(axis=-1, keepdims=True)
    return log_g - np.log(np.exp(log_g).sum(axis=-1, keepdims=True))


def _floored_simplex(log_p):
    """exp(log_p), every entry raised to at least the smallest normal double, rows renormalised."""
    p = np.maximum(np.exp(log_p), np.finfo(np.float64).tiny)
    return p / p.sum(axis=-1, keepdims=True)


def make_lda_corpus(n_docs, n_words, n_topics, *, doc_length=100, doc_topic_prior=0.1,
                    topic_word_prior=0.01, random_state=None):
    """A corpus drawn from LDA with known topics.

    topics[k] ~ Dirichlet(topic_word_prior), doc_topic[d] ~ Dirichlet(doc_topic_prior), document
    lengths ~ Poisson(doc_length) (so a document may be empty), each token's topic ~ doc_topic[d]
    and word ~ topics[topic]. ``topic_word_prior`` sets the sparsity: at 0.01 and W = 1000 a topic
    puts most of its mass on a few dozen words. Dirichlet draws are made in log space and every
    probability is floored at the smallest normal double (2.2e-308) then renormalised, so no row
    is degenerate (no 0/0) and every word has positive probability under every topic; the floor
    is far below anything a draw of these sizes can reveal. Priors are scalars (symmetric) or
    arrays of length n_topics / n_words.

    Returns ``X`` (n_docs, n_words) CSR int64, ``topics`` (n_topics, n_words) rows summing to 1,
    ``doc_topic`` (n_docs, n_topics) rows summing to 1.
    """
    for name, value in (("n_docs", n_docs), ("n_words", n_words), ("n_topics", n_topics)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value}")
    if not doc_length >= 0:
        raise ValueError(f"doc_length must be >= 0, got {doc_length}")
    rng = check_generator(random_state)
    beta = np.broadcast_to(np.asarray(topic_word_prior, dtype=np.float64), (n_words,))
    alpha = np.broadcast_to(np.asarray(doc_topic_prior, dtype=np.float64), (n_topics,))
    for name, prior in (("topic_word_prior", beta), ("doc_topic_prior", alpha)):
        if not (np.all(np.isfinite(prior)) and np.all(prior > 0)):
            raise ValueError(f"{name} must be finite and > 0")
    topics = _floored_simplex(_log_dirichlet(rng, beta, (n_topics,)))
    doc_topic = _floored_simplex(_log_dirichlet(rng, alpha, (n_docs,)))
    lengths = rng.poisson(doc_length, size=n_docs)
    n_dk = rng.multinomial(lengths, doc_topic)
    rows, cols = [], []
    for k in range(n_topics):
        rows.append(np.repeat(np.arange(n_docs), n_dk[:, k]))
        cols.append(rng.choice(n_words, size=rows[-1].size, p=topics[k]))
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    X = sp.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, cols)), shape=(n_docs, n_words))
    X.sum_duplicates()
    return X, topics, doc_topic


def load_uci_bow(docword_path, vocab_path=None):
    """Read a UCI bag-of-words corpus (``docword.*.txt``, optionally gzipped, and ``vocab.*.txt``).

    docword: three header lines D, W, NNZ, then NNZ lines "docID wordID count" (1-based ids).
    vocab: W lines, one word per line, the word of wordID = line number. Repeated (doc, word)
    pairs are summed, and the lines may come in any order. Returns ``(X, vocabulary)``: X (D, W)
    CSR int64 and the (W,) str array, or None without ``vocab_path``. Raises ValueError naming
    the file and line for malformed input. The lines are parsed as ``UCIBowCorpus`` parses
    them (in C, a chunk at a time), then held in memory.
    """
    corpus = UCIBowCorpus(docword_path, vocab_path)
    blocks = corpus.iter_triples(in_order=False)
    triples = np.concatenate([np.empty((0, 3), dtype=np.int64), *blocks])
    n_docs, n_words = corpus.n_documents, corpus.n_features
    X = sp.csr_matrix((triples[:, 2], (triples[:, 0] - 1, triples[:, 1] - 1)),
                      shape=(n_docs, n_words), dtype=np.int64)
    X.sum_duplicates()
    vocabulary = None if corpus.id2word is None else np.array(list(corpus.id2word.values()))
    return X, vocabulary


def save_uci_bow(X, docword_path, vocabulary=None, vocab_path=None):
    """Write counts ``X`` (D, W) in UCI bag-of-words format; ``load_uci_bow`` reads it back.

    Lines are sorted by docID then wordID; zero counts are not written. The vocabulary (W words,
    none containing a newline) goes to ``vocab_path`` when both are given.
    """
    X = sp.csr_matrix(X)
    X.sum_duplicates()
    X.eliminate_zeros()
    if X.data.size and (np.any(X.data < 0) or np.any(X.data != np.round(X.data))):
        raise ValueError("X must hold non-negative integer counts")
    if (vocabulary is None) != (vocab_path is None):
        raise ValueError("give both vocabulary and vocab_path, or neither")
    if vocabulary is not None:
        vocabulary = np.asarray(vocabulary, dtype=str)
        if vocabulary.shape != (X.shape[1],) or any("\n" in w for w in vocabulary):
            raise ValueError(f"vocabulary must be {X.shape[1]} words without newlines")
    coo = X.tocoo()
    table = np.column_stack([coo.row + 1, coo.col + 1, coo.data]).astype(np.int64)
    header = f"{X.shape[0]}\n{X.shape[1]}\n{X.nnz}"
    np.savetxt(docword_path, table, fmt="%d", header=header, comments="")
    if vocabulary is not None:
        with open(vocab_path, "w", encoding="utf-8") as fh:
            fh.write("".join(w + "\n" for w in vocabulary))


def make_multinomial_mixture(n_samples, n_features, n_components=5, *, weights=None,
                             concentration=0.05, row_length=20, random_state=None):
    """Rows drawn from a finite mixture of multinomials with known labels.

    ``components[k] ~ Dirichlet(concentration)`` (small = sparse profiles, drawn in log space and
    floored like ``make_lda_corpus``), labels ~ Categorical(weights) (default uniform), row
    lengths ~ 1 + Poisson(row_length - 1) (no empty rows) and ``x_i ~ Multinomial(length_i,
    components[label_i])``.

    Returns ``X`` (n_samples, n_features) CSR int64, ``labels`` (n_samples,), ``components``
    (n_components, n_features) rows summing to 1, ``weights`` (n_components,).
    """
    for name, value in (("n_samples", n_samples), ("n_features", n_features),
                        ("n_components", n_components)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value}")
    if not row_length >= 1:
        raise ValueError(f"row_length must be >= 1, got {row_length}")
    if not (np.isfinite(concentration) and concentration > 0):
        raise ValueError(f"concentration must be finite and > 0, got {concentration}")
    weights = (np.full(n_components, 1.0 / n_components) if weights is None
               else np.asarray(weights, dtype=np.float64))
    if weights.shape != (n_components,) or np.any(weights < 0) or not np.isclose(weights.sum(), 1):
        raise ValueError(f"weights must be {n_components} non-negative numbers summing to 1")
    rng = check_generator(random_state)
    components = _floored_simplex(_log_dirichlet(
        rng, np.full(n_features, float(concentration)), (n_components,)))
    labels = rng.choice(n_components, size=n_samples, p=weights)
    lengths = 1 + rng.poisson(row_length - 1, size=n_samples)
    X = sp.csr_matrix(rng.multinomial(lengths, components[labels]), dtype=np.int64)
    return X, labels, components, weights


MSWEB_FILES = {"train": "anonymous-msweb.data", "test": "anonymous-msweb.test"}


def _msweb_file(path, subset):
    """The msweb file of ``subset``: ``path`` itself if it is a file, else inside the directory
    ``path`` (default ``$SIMPLEXSG_DATA/msweb``)."""
    if subset not in MSWEB_FILES:
        raise ValueError(f"subset must be one of {sorted(MSWEB_FILES)}, got {subset!r}")
    if path is None:
        root = os.environ.get("SIMPLEXSG_DATA")
        if not root:
            raise FileNotFoundError("msweb: pass a path or set SIMPLEXSG_DATA to the directory "
                                    "holding msweb/anonymous-msweb.{data,test}")
        path = Path(root) / "msweb"
    path = Path(path)
    if path.is_dir():
        path = path / MSWEB_FILES[subset]
    if not path.is_file():
        raise FileNotFoundError(f"msweb: no file at {path}")
    return path


def load_msweb(path=None, subset="train"):
    """UCI "Anonymous Microsoft Web Data" (Breese, Heckerman & Kadie 1998) as users x pages counts.

    ``path``: an ``anonymous-msweb.*`` file, or a directory holding them (default
    ``$SIMPLEXSG_DATA/msweb``); ``subset`` picks the file in a directory ("train": ``.data``,
    "test": ``.test``). Format: lines ``A,<id>,1,"<title>","<url>"`` list the pages (ids
    1000-1297, 294 of them); each user is a line ``C,"<uid>",<uid>`` followed by a line
    ``V,<page id>,1`` per page visited. Columns are the page ids in sorted order, the same in
    both files. Users without visits are kept as empty rows.

    Returns a ``Bunch``: ``X`` (users, 294) CSR int64 visit counts, ``user_ids`` (users,),
    ``attribute_ids`` (294,) page ids of the columns, ``titles`` and ``urls`` (294,) str.
    Raises ValueError naming the line for a visit before any user or to an unknown page.
    """
    path = _msweb_file(path, subset)
    pages, users, rows, cols = {}, [], [], []
    with open(path, newline="", encoding="latin-1") as fh:
        for line_no, fields in enumerate(csv.reader(fh), start=1):
            if not fields:
                continue
            if fields[0] == "A":
                pages[int(fields[1])] = (fields[3], fields[4])
            elif fields[0] == "C":
                users.append(int(fields[2]))
            elif fields[0] == "V":
                if not users:
                    raise ValueError(f"{path}, line {line_no}: a visit before any user (C line)")
                rows.append(len(users) - 1)
                cols.append(int(fields[1]))
    attribute_ids = np.array(sorted(pages), dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    position = np.searchsorted(attribute_ids, cols)
    unknown = (position >= attribute_ids.size) | (attribute_ids[np.minimum(
        position, attribute_ids.size - 1)] != cols)
    if unknown.any():
        raise ValueError(f"{path}: a visit to page {cols[np.argmax(unknown)]}, which no A line "
                         "declares")
    X = sp.csr_matrix((np.ones(cols.size, dtype=np.int64), (np.asarray(rows, dtype=np.int64),
                      position)), shape=(len(users), attribute_ids.size), dtype=np.int64)
    X.sum_duplicates()
    return Bunch(X=X, user_ids=np.array(users, dtype=np.int64), attribute_ids=attribute_ids,
                 titles=np.array([pages[a][0] for a in attribute_ids]),
                 urls=np.array([pages[a][1] for a in attribute_ids]))
