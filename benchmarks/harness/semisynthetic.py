"""Semi-synthetic LDA corpora: real topics, documents drawn from them, the truth known.

The protocol of Arora et al. (2013, "A practical algorithm for topic modeling with provable
guarantees", section 5): fit K topics to a real corpus with a long collapsed Gibbs run (the
*reference topics*), then draw new documents from LDA with those topics, so that a fit can be
scored against the topics that generated the data as well as by held-out perplexity.

* ``reference_topics``: the topics of a data-folder corpus (tomotopy, ``REFERENCE_ITERATIONS``
  iterations, alpha and beta fixed), cached as ``.npz``, and the corpus's document lengths;
* ``draw_documents``: one chunk of LDA documents given the topics' CDFs, alpha and the lengths;
* ``corpus_chunks``: a corpus of any size as a seeded sequence of such chunks, its held-out
  documents from a stream of their own (the same test set for every size);
* ``write_uci``: chunks streamed to a UCI bag-of-words file, never held in full;
* ``topic_recovery``: the mean L1 distance of the true topics to the fitted ones, matched
  one-to-one (``evaluation.match_topics``).
"""
import json
import shutil
import time
from pathlib import Path

import numpy as np

from . import peers
from .corpora import documents_from_topic_counts, uci_counts
from .evaluation import match_topics

#: Iterations of the reference fit: tomotopy's log likelihood no longer moves by then on the
#: data-folder corpora (a longer run changes the topics' matched L1 by under 0.05).
REFERENCE_ITERATIONS = 1000
#: The documents' topic-proportion prior of the reference fit and of the drawn corpora.
ALPHA = 0.1
#: Documents drawn per chunk (memory: the chunk's CSR matrix, a few hundred MB at most).
CHUNK = 20_000


def reference_topics(source, K, beta, data_dir, cache_dir, iterations=REFERENCE_ITERATIONS,
                     workers=2, seed=0):
    """The K topics (K, W) float64 of the data-folder corpus ``source`` fitted by tomotopy
    (alpha ``ALPHA``, eta ``beta``, no optimisation, ``iterations`` iterations), smoothed as
    ``(n_kw + beta) / (n_k + W beta)``, and the corpus's document lengths (D,) int64. Cached
    in ``cache_dir`` by source, K, beta, iterations and seed."""
    path = Path(cache_dir) / f"{source}_K{K}_beta{beta:g}_it{iterations}_seed{seed}.npz"
    if path.is_file():
        with np.load(path) as stored:
            return stored["topics"], stored["lengths"]
    X = uci_counts(source, data_dir)
    model = peers.tomotopy_model(X, K, ALPHA, beta, seed)
    model.train(iterations, workers=workers)
    topics = peers.tomotopy_topics(model, X.shape[1], beta)
    lengths = np.asarray(X.sum(axis=1)).ravel().astype(np.int64)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, topics=topics, lengths=lengths)
    return topics, lengths


def topic_cdfs(topics):
    """Each topic's cumulative word distribution (K, W), the last entry of a row its sum."""
    return np.cumsum(np.asarray(topics, dtype=np.float64), axis=1)


def draw_documents(rng, cdfs, alpha, lengths):
    """LDA documents of the given ``lengths`` (n,): proportions ~ Dirichlet(alpha), topic
    counts ~ Multinomial(length, proportions), each topic's tokens drawn from its words by
    inverse CDF (``cdfs``: ``topic_cdfs``; ``corpora.documents_from_topic_counts``). Returns
    CSR counts (n, W) int64; a document of length 0 is an empty row."""
    proportions = rng.dirichlet(np.full(cdfs.shape[0], alpha), size=len(lengths))
    n_dk = rng.multinomial(np.asarray(lengths, dtype=np.int64), proportions)
    return documents_from_topic_counts(rng, cdfs, n_dk)


def corpus_chunks(topics, lengths, n_docs, alpha, seed, chunk=CHUNK):
    """``n_docs`` training documents drawn from ``topics`` in chunks of ``chunk``, their
    lengths resampled with replacement from ``lengths`` (the source corpus's), from stream
    ``(seed, 0)``: a chunk is the same whatever follows it."""
    rng = np.random.default_rng([seed, 0])
    cdfs = topic_cdfs(topics)
    for start in range(0, n_docs, chunk):
        n = min(chunk, n_docs - start)
        yield draw_documents(rng, cdfs, alpha, rng.choice(lengths, size=n))


def heldout_documents(topics, lengths, n_docs, alpha, seed):
    """``n_docs`` held-out documents drawn as ``corpus_chunks`` does, from stream
    ``(seed, 1)``: the same test set for every training size."""
    rng = np.random.default_rng([seed, 1])
    return draw_documents(rng, topic_cdfs(topics), alpha, rng.choice(lengths, size=n_docs))


def write_uci(chunks, path):
    """Write CSR ``chunks`` (same width) one after another to the UCI bag-of-words file
    ``path`` (documents numbered from 1 in order, empty ones included) without holding them
    together; returns {"documents", "words", "nnz", "tokens", "seconds"}."""
    start, path = time.perf_counter(), Path(path)
    body = path.with_suffix(".body")
    n_docs = nnz = tokens = 0
    n_words = None
    with open(body, "w") as fh:
        for X in chunks:
            coo = X.tocoo()
            np.savetxt(fh, np.column_stack([coo.row + n_docs + 1, coo.col + 1, coo.data]),
                       fmt="%d")
            n_docs, nnz, tokens = n_docs + X.shape[0], nnz + X.nnz, tokens + int(X.sum())
            n_words = X.shape[1]
    with open(path, "w") as out:
        out.write(f"{n_docs}\n{n_words}\n{nnz}\n")
        with open(body) as fh:
            shutil.copyfileobj(fh, out)
    body.unlink()
    info = dict(documents=n_docs, words=n_words, nnz=nnz, tokens=tokens,
                seconds=time.perf_counter() - start)
    path.with_suffix(".json").write_text(json.dumps(info))
    return info


def topic_recovery(topics, truth):
    """Mean L1 distance ``|phi_k - phi_hat_p(k)|_1`` of the true topics to the fitted ones
    matched one-to-one (``match_topics``, rows normalised first): 0 when every true topic is
    found exactly, 2 when none shares a word with its match. With fewer fitted topics than
    true ones, the mean is over the matched true topics."""
    topics = np.asarray(topics, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    topics = topics / topics.sum(axis=1, keepdims=True)
    truth = truth / truth.sum(axis=1, keepdims=True)
    return float(2.0 * match_topics(topics, truth)[1].mean())
