"""Pieces the LDA benchmarks share: the one evaluator, tomotopy's set-up, and writing results.

The benchmarks run as scripts (``python benchmarks/NAME.py``), so this folder is on sys.path.
"""
import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from simplexsg.gibbs import fold_in
from simplexsg.metrics import completion_split, document_completion_score

#: The shared evaluation, as stated in each benchmark's JSON.
EVALUATION = ("document_completion_score on completion_split(X_test, random_state=0), Gibbs "
              "fold-in (100 sweeps, 50 discarded, seed 0)")


def gibbs_fold_in(n_jobs=1):
    """The Gibbs fold-in of ``LDA.perplexity`` with a fixed seed: ``(topics, alpha, X) -> theta``."""
    def gibbs(topics, alpha, X):
        return fold_in(topics, alpha, X, n_sweeps=100, burn_in=50,
                       seed=np.random.SeedSequence(0), n_jobs=n_jobs)
    return gibbs


def completion_perplexity(X_test, *, fold_in=None, n_jobs=1):
    """``perplexity(topics, alpha)`` by document completion on X_test (``EVALUATION``);
    ``fold_in=None`` uses ``gibbs_fold_in(n_jobs)``. topics (K, W) are normalised first."""
    observed, heldout = completion_split(X_test, random_state=0)
    fold_in = gibbs_fold_in(n_jobs) if fold_in is None else fold_in

    def perplexity(topics, alpha):
        topics = np.asarray(topics, dtype=np.float64)
        topics = topics / topics.sum(axis=1, keepdims=True)
        return document_completion_score(topics, alpha, observed, heldout,
                                         fold_in=fold_in).perplexity
    return perplexity


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


def synthetic_chunks(n_docs, mean_length, chunk=None, concentration=SYNTH_CONCENTRATION):
    """An LDA corpus of ``n_docs`` documents as CSR chunks of ``chunk`` documents (None: one):
    SYNTH_TOPICS topics ~ Dirichlet(c V z) (c = ``concentration``), z_w ∝ 1 / (w + 1)^1.1
    over V = SYNTH_WORDS words; proportions ~ Dirichlet(SYNTH_ALPHA); lengths ~
    Poisson(mean_length); each topic's tokens of a chunk drawn at once by inverse CDF; empty
    documents dropped. One seeded stream (SYNTH_SEED) draws the topics, then the chunks in
    order, so a chunk is the same whatever comes after it, and one chunk of all the documents
    is the corpus of benchmarks/lda_study.py."""
    rng = np.random.default_rng(SYNTH_SEED)
    cdf = np.cumsum(_draw_synthetic_topics(rng, concentration), axis=1)
    chunk = chunk or n_docs
    for start in range(0, n_docs, chunk):
        n = min(chunk, n_docs - start)
        doc_topic = rng.dirichlet(np.full(SYNTH_TOPICS, SYNTH_ALPHA), size=n)
        n_dk = rng.multinomial(rng.poisson(mean_length, size=n), doc_topic)
        rows = [np.repeat(np.arange(n), n_dk[:, k]) for k in range(SYNTH_TOPICS)]
        cols = [np.searchsorted(cdf[k], rng.random(r.size) * cdf[k, -1], side="right")
                for k, r in enumerate(rows)]
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        X = sp.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, cols)),
                          shape=(n, SYNTH_WORDS))
        X.sum_duplicates()
        yield X[X.getnnz(axis=1) > 0]


def tomotopy_model(X, k, alpha, beta, seed):
    """A tomotopy ``LDAModel`` holding the rows of CSR X as documents (word ids as strings),
    hyperparameter optimisation off."""
    import tomotopy as tp

    model = tp.LDAModel(k=k, alpha=alpha, eta=beta, seed=seed)
    for d in range(X.shape[0]):
        row = slice(X.indptr[d], X.indptr[d + 1])
        model.add_doc(np.repeat(X.indices[row], X.data[row]).astype(str).tolist())
    model.optim_interval = 0
    return model


def tomotopy_topics(model, n_words, beta):
    """tomotopy's topics over our full vocabulary: ``(n_kw + beta) / (n_k + W beta)``; a word it
    never saw gets the smoothing value."""
    columns = np.array(model.used_vocabs, dtype=np.int64)
    weights = np.full((model.k, n_words), beta)
    for k in range(model.k):
        weights[k, columns] = model.get_topic_word_dist(k, normalize=False)  # n_kw + beta
    return weights / weights.sum(axis=1, keepdims=True)


def write_results(results, out, plot=None):
    """Write ``results`` as JSON to ``out`` and, if given, ``plot(results, path)`` next to it
    as PNG."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    if plot is None:
        print(f"written {out}")
        return
    plot(results, out.with_suffix(".png"))
    print(f"written {out} and {out.with_suffix('.png')}")
