"""Held-out evaluation of topic models: document-completion perplexity (Wallach et al. 2009).

Every model in simplexsg, and every peer in the benchmarks, is scored by this one definition:

1. ``completion_split`` shuffles each test document's tokens (seeded) and cuts them into an observed
   part and a held-out part;
2. a fold-in estimates each document's topic proportions theta_d (K,) from its observed part with
   the model's topics phi (K, W) and doc-topic prior alpha (default: ``fixed_point_fold_in``);
3. the held-out part is scored: log-likelihood = sum_{d,w} n_dw log sum_k theta_dk phi_kw, and
   perplexity = exp(-log-likelihood / number of held-out tokens).
"""
from dataclasses import dataclass

import math

import numpy as np
import scipy.sparse as sp

from ._random import check_generator, content_ids

_CHUNK = 1 << 20  # max (nonzeros x topics) entries held at once by _probabilities_at_nonzeros


def _check_counts(name, X, shape=None):
    """``X`` as a new CSR float64, canonical and without stored zeros; ValueError naming a bad
    entry."""
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    if shape is not None and X.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {X.shape}")
    bad = ~np.isfinite(X.data) | (X.data < 0)
    if bad.any():
        i = int(np.argmax(bad))
        row = int(np.searchsorted(X.indptr, i, side="right") - 1)
        raise ValueError(f"{name} must hold finite non-negative counts; found {X.data[i]} at "
                         f"document {row}, word {X.indices[i]}")
    X.eliminate_zeros()
    return X


def completion_split(X, *, observed_fraction=0.5, random_state=0):
    """Cut each document's tokens into an observed part and a held-out part.

    The tokens of document d (n_d of them) are put in a uniformly random order and the first
    floor(observed_fraction * n_d) are observed, the rest held out (so a 1-token document is
    entirely held out at 0.5). The order is drawn from a Philox generator keyed by the
    document's content (``content_ids``) and a salt drawn from ``random_state``: a document is
    cut the same way wherever it sits in X. X (D, W) holds non-negative integer counts. Returns
    ``(X_observed, X_heldout)``, CSR int64 of shape (D, W) with ``X_observed + X_heldout == X``.
    """
    if not 0.0 <= observed_fraction <= 1.0:
        raise ValueError(f"observed_fraction must be in [0, 1], got {observed_fraction}")
    X = _check_counts("X", X)
    if np.any(X.data != np.round(X.data)):
        raise ValueError("X must hold integer counts")
    salt = int(check_generator(random_state).integers(2 ** 63))
    counts = X.data.astype(np.int64)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    doc = np.repeat(rows, counts)                # one entry per token, grouped by document
    word = np.repeat(X.indices, counts)
    doc_lengths = np.bincount(rows, weights=counts, minlength=X.shape[0]).astype(np.int64)
    doc_start = np.concatenate([[0], np.cumsum(doc_lengths)[:-1]])
    order = np.concatenate([np.arange(0)] + [
        start + np.random.Generator(np.random.Philox(key=[key, salt])).permutation(length)
        for key, start, length in zip(content_ids(X), doc_start, doc_lengths)])
    rank = np.arange(doc.size) - doc_start[doc]
    observed = rank < np.floor(observed_fraction * doc_lengths)[doc]
    word = word[order]

    def counts_matrix(mask):
        M = sp.csr_matrix((np.ones(mask.sum(), dtype=np.int64), (doc[mask], word[mask])),
                          shape=X.shape)
        M.sum_duplicates()
        return M

    return counts_matrix(observed), counts_matrix(~observed)


def _check_model(topics, doc_topic_prior):
    """Validated (K, W) topics and (K,) prior, float64."""
    topics = np.asarray(topics, dtype=np.float64)
    if topics.ndim != 2 or 0 in topics.shape:
        raise ValueError(f"topics must be a non-empty (n_topics, n_words) array, got shape "
                         f"{topics.shape}")
    for problem, bad in (("non-finite", ~np.isfinite(topics)), ("negative", topics < 0)):
        if bad.any():
            k, w = np.argwhere(bad)[0]
            raise ValueError(f"topics has a {problem} entry {topics[k, w]} at topic {k}, word {w}")
    error = np.abs(topics.sum(axis=1) - 1.0)
    if np.any(error > 1e-6):
        k = int(np.argmax(error))
        raise ValueError(f"topics rows must sum to 1 (within 1e-6); topic {k} sums to "
                         f"{topics[k].sum()!r}")
    alpha = np.asarray(doc_topic_prior, dtype=np.float64)
    if alpha.ndim == 0:
        alpha = np.full(topics.shape[0], float(alpha))
    if alpha.shape != (topics.shape[0],):
        raise ValueError(f"doc_topic_prior must be a scalar or have shape ({topics.shape[0]},), "
                         f"got {alpha.shape}")
    if not np.all(np.isfinite(alpha) & (alpha > 0)):
        raise ValueError(f"doc_topic_prior must be finite and > 0, got {doc_topic_prior}")
    return topics, alpha


def _probabilities_at_nonzeros(theta, topics_t, X):
    """sum_k theta[d, k] topics_t[w, k] for every stored (d, w) of CSR X, in X.data order."""
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    out = np.empty(X.nnz)
    step = max(1, _CHUNK // theta.shape[1])
    for start in range(0, X.nnz, step):
        sl = slice(start, start + step)
        out[sl] = np.einsum("ik,ik->i", theta[rows[sl]], topics_t[X.indices[sl]])
    return out


def fixed_point_fold_in(topics, doc_topic_prior, X_observed, *, n_iter=100):
    """Topic proportions of each document given fixed topics, by ``n_iter`` fixed-point steps.

    Starting from uniform theta, repeats for all documents at once ``theta_dk <- (alpha_k +
    theta_dk sum_w n_dw phi_kw / sum_j theta_dj phi_jw) / (n_d + sum alpha)``
    (the EM update of theta with alpha as pseudo-counts). topics (K, W) rows
    summing to 1, doc_topic_prior scalar or (K,), X_observed (D, W) counts. Returns (D, K), rows
    summing to 1; a document without observed tokens gets alpha / sum(alpha). Tokens of a word
    that every topic gives probability 0 are ignored.
    """
    if int(n_iter) != n_iter or n_iter < 0:
        raise ValueError(f"n_iter must be a non-negative integer, got {n_iter}")
    topics, alpha = _check_model(topics, doc_topic_prior)
    X = _check_counts("X_observed", X_observed)
    _check_columns("X_observed", X, topics)
    return _fixed_point(topics, alpha, X, n_iter)


def _check_columns(name, X, topics):
    if X.shape[1] != topics.shape[1]:
        raise ValueError(f"{name} has {X.shape[1]} words (columns), topics has {topics.shape[1]}")


def _fixed_point(topics, alpha, X, n_iter):
    topics_t = np.ascontiguousarray(topics.T)
    theta = np.full((X.shape[0], topics.shape[0]), 1.0 / topics.shape[0])
    ratio = X.copy()
    for _ in range(n_iter):
        p = _probabilities_at_nonzeros(theta, topics_t, X)
        # p == 0 only where every topic gives the word zero probability; such tokens carry no
        # information about theta and are skipped (otherwise the row sum is n_d + sum(alpha))
        ratio.data = np.divide(X.data, p, out=np.zeros_like(p), where=p > 0)
        theta = alpha + theta * (ratio @ topics_t)
        theta /= theta.sum(axis=1, keepdims=True)
    return theta


@dataclass(frozen=True)
class CompletionScore:
    """Held-out score: ``log_likelihood`` (nats, summed over held-out tokens), ``n_tokens`` (the
    number of held-out tokens) and ``perplexity = exp(-log_likelihood / n_tokens)``."""

    log_likelihood: float
    n_tokens: int
    perplexity: float


def document_completion_score(topics, doc_topic_prior, X_observed, X_heldout, *, fold_in=None):
    """Document-completion log-likelihood, token count and perplexity (see the module docstring).

    topics (K, W) rows summing to 1 within 1e-6; doc_topic_prior scalar or (K,), > 0;
    X_observed, X_heldout (D, W) counts, e.g. from ``completion_split``. ``fold_in(topics,
    doc_topic_prior, X_observed) -> theta (D, K)`` estimates the proportions (it receives topics
    as float64 and X_observed as a canonical CSR float64); default ``fixed_point_fold_in`` with 100
    iterations. Raises ValueError for invalid inputs and for a held-out token with probability 0
    under the model (smooth the topics), naming the document and word. Returns a
    ``CompletionScore``.
    """
    topics, alpha = _check_model(topics, doc_topic_prior)
    X_heldout = _check_counts("X_heldout", X_heldout)
    X_observed = _check_counts("X_observed", X_observed, X_heldout.shape)
    _check_columns("X_heldout", X_heldout, topics)
    n_tokens = int(round(X_heldout.data.sum()))
    if n_tokens == 0:
        raise ValueError("X_heldout has no tokens")
    if fold_in is None:
        theta = _fixed_point(topics, alpha, X_observed, 100)
    else:
        theta = np.asarray(fold_in(topics, doc_topic_prior, X_observed), dtype=np.float64)
        if theta.shape != (X_heldout.shape[0], topics.shape[0]):
            raise ValueError(f"fold_in returned shape {theta.shape}, expected "
                             f"{(X_heldout.shape[0], topics.shape[0])}")
        if not (np.all(np.isfinite(theta)) and np.all(theta >= 0)
                and np.allclose(theta.sum(axis=1), 1.0, atol=1e-6)):
            raise ValueError("fold_in must return finite, non-negative rows summing to 1")
    p = _probabilities_at_nonzeros(theta, np.ascontiguousarray(topics.T), X_heldout)
    if np.any(p <= 0):
        i = int(np.argmax(p <= 0))
        d = int(np.searchsorted(X_heldout.indptr, i, side="right") - 1)
        raise ValueError(f"held-out word {X_heldout.indices[i]} of document {d} has probability 0 "
                         f"under the model; smooth the topics (e.g. add the topic-word prior)")
    loglik = math.fsum(X_heldout.data * np.log(p))     # exactly rounded: any document order
    return CompletionScore(loglik, n_tokens, float(np.exp(-loglik / n_tokens)))


def document_completion_perplexity(topics, doc_topic_prior, X_observed, X_heldout, *,
                                   fold_in=None):
    """exp(-held-out log-likelihood / held-out tokens); arguments as in
    ``document_completion_score``."""
    return document_completion_score(topics, doc_topic_prior, X_observed, X_heldout,
                                     fold_in=fold_in).perplexity
