"""The topics' side of a training step: the local step's sparse counts, and the global step that
moves every topic row with them (``simplexsg._ext._global_step``: one fused pass per row, in
parallel over the rows, no K x W temporary).

Step-size convention: ``h`` is the diffusion time of the step (``simplexsg.simplex``).

Every coordinate is drawn at every step, including the words absent from the minibatch. Could
those be advanced lazily? A word with no counts for m consecutive steps keeps the CIR parameter
beta, and CIR transitions of one parameter compose (the process is time-homogeneous), so its
value after the m steps is one exact transition of time h_1 + ... + h_m: exact for the word on
its own. But every step needs each topic's row sum over all words, to normalise the topics the
next local step uses and the running average; the lazy words' current values enter that sum.
The sum of independent CIR coordinates is itself CIR (parameter: the sum of theirs), so the
lazy part of the sum could be drawn exactly, but then a word coming back must be drawn
conditionally on every sum drawn while it was away (through the latent Poisson counts of each
of those steps), which needs the history of its absence, not O(1) state. Drawing it from its
own m-step transition instead would make the sums inconsistent with the values, so lazy
advancement is not exact, and it is not used.
"""
from typing import NamedTuple, Optional

import numpy as np
import scipy.sparse as sp

from .._ext._global_step import global_step
from .._ext._sparse import transpose_counts
from .._random import document_streams


class LocalCounts(NamedTuple):
    """What the local step of a minibatch hands to the global step: sparse counts only.

    Attributes
    ----------
    word_topic : scipy.sparse.csr_array of int64 or float64 (W, K)
        Sum over the kept sweeps of the word-topic counts of the minibatch's tokens, over the
        full vocabulary (rows of absent words are empty); float64 expectations with
        ``LDA(rao_blackwell=True)``. Counts of disjoint sets of documents add up (``+``).
    n_kept : int
        Kept sweeps: ``word_topic / n_kept`` is the averaged n_wk.
    n_documents : int
        Documents of the minibatch.
    doc_topic_last : int64 (n_documents, K) or None
        Each document's n_dk after its last sweep (for the doc-topic prior's sampler).
    assignments : int32 (n_tokens,) or None
        Each token's topic after the last sweep (for warm starts).
    alpha_counts : float64 (W,) or None
        With ``LDA(rao_blackwell=True)``: each word's expected count of the alpha part, which
        ``word_topic`` leaves out; the global step spreads it over the topics by its expected
        share (``step_topics``).
    """
    word_topic: sp.csr_array
    n_kept: int
    n_documents: int
    doc_topic_last: Optional[np.ndarray] = None
    assignments: Optional[np.ndarray] = None
    alpha_counts: Optional[np.ndarray] = None


def step_topics(theta, counts, *, beta, scale, h, sampler, local_mean, seed, step,
                average=None, n_jobs=1, alpha=None, topics=None):
    """One global step of every topic row given the minibatch's ``LocalCounts``.

    Row k moves towards ``Dirichlet(beta + scale * est[:, k] / n_kept)``, with ``scale`` = D /
    batch size and ``est = counts.word_topic``, plus, when the alpha part was split off
    (``counts.alpha_counts``), each word's alpha count spread over the topics by the alpha
    part's conditional share ``alpha_k topics[k, w] / sum_j alpha_j topics[j, w]``, with
    ``alpha`` (K,) and ``topics`` (K, W) those the local step used. Draws come from one
    stream per row, keyed by ``seed`` (a SeedSequence), ``step`` and the row, so the result is
    the same for any ``n_jobs``.

    Parameters
    ----------
    theta : float64 or float32 (K, W)
        The gamma variables; not modified.
    sampler : {"scir", "sgrld"}
    local_mean : bool
        Whether the local topics are the normalised conditional means (else samples).
    average : TailAverage or None
        When given, the new local topics are added into it (a fresh array: its sums are
        never changed in place).

    Returns
    -------
    (theta', local topics): new arrays of theta's shape and type; rows of the second sum to 1.
    """
    K, W = theta.shape
    word_topic = counts.word_topic
    est_ptr, est_word, est_count = transpose_counts(            # (K, W), topics as rows
        word_topic.indptr.astype(np.int64, copy=False),
        word_topic.indices.astype(np.int32, copy=False),
        word_topic.data.astype(np.float64 if word_topic.data.dtype.kind == "f" else np.int64,
                               copy=False), K, n_jobs)
    streams = document_streams(seed, step, range(K))
    theta_out = np.empty_like(theta)
    local_out = np.empty_like(theta)
    average_in = average_out = None
    if average is not None and average.open(step):
        average_in = average.current
        average_out = np.empty_like(theta)
    spread = {}
    if counts.alpha_counts is not None:
        alpha = np.ascontiguousarray(np.broadcast_to(alpha, (K,)), dtype=np.float64)
        topics = np.ascontiguousarray(topics, dtype=theta.dtype)
        spread = dict(zip(("spread", "column_scale"),
                          _alpha_spread(counts.alpha_counts, alpha, topics, scale / counts.n_kept)),
                      alpha=alpha, topics=topics)
    global_step(theta, float(beta), est_ptr, est_word, est_count * (scale / counts.n_kept),
                float(h), sampler == "sgrld", local_mean, streams.addresses, theta_out,
                local_out, average_in, average_out, n_jobs, **spread)
    if average_out is not None:
        average.record(average_out)
    return theta_out, local_out


def _alpha_spread(alpha_counts, alpha, topics, factor):
    """(spread, column_scale), float64 (W,) each, for the global step to add ``alpha_k
    (topics[k, w] column_scale[w]) spread[w]`` to topic k's count of word w: ``factor *
    alpha_counts[w]`` spread by the alpha part's share ``alpha_k topics[k, w] / sum_j alpha_j
    topics[j, w]``. ``column_scale[w]`` is one over the word's largest topic value (at most
    1 / DBL_MIN), so that the products stay at most 1 and ``spread`` finite for any column the
    local step accepts; spread is 0 and column_scale 1 where there is no alpha count (only
    the minibatch's words are read)."""
    words = np.flatnonzero(alpha_counts)
    columns = topics[:, words]
    column_scale = np.ones(len(alpha_counts))
    column_scale[words] = 1.0 / np.maximum(columns.max(axis=0), np.finfo(np.float64).tiny)
    # einsum, not BLAS: one pass, on this thread (a BLAS pool would spin on idle cores);
    # scaled_mass is in [min alpha, sum alpha]
    scaled_mass = np.einsum("k,kw->w", alpha, columns) * column_scale[words]
    spread = np.zeros(len(alpha_counts))
    spread[words] = factor * alpha_counts[words] / scaled_mass
    return spread, column_scale
