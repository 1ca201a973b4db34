"""The topics' side of a training step: the local step's sparse counts, and the global step that
moves every topic row with them (``simplexsg._ext._global_step``: one fused pass per row, in
parallel over the rows, no K x W temporary).

Step-size convention: ``h`` is the diffusion time of the step (``simplexsg.simplex``).

The state. SCIR with the local step on the conditional mean (the default) keeps theta
integrated out: the state is the shapes of the independent gammas theta is, with one scale
(``scir_shape_step``: the same chain's law for the samples, no draw for most words, and the
local step sees the gammas' means). Otherwise the state is theta itself and the scale is None;
``draw_theta`` turns shapes into a draw of theta where one is needed (a kept topic sample, a
chain continued with a sampler that needs theta).

With theta as the state, every coordinate is drawn at every step, including the words absent
from the minibatch. Could those be advanced lazily? A word with no counts for m consecutive
steps keeps the CIR parameter beta, and CIR transitions of one parameter compose (the process
is time-homogeneous), so its
value after the m steps is one exact transition of time h_1 + ... + h_m: exact for the word on
its own. But every step needs each topic's row sum over all words, to normalise the topics the
next local step uses and the running average; the lazy words' current values enter that sum.
The sum of independent CIR coordinates is itself CIR (parameter: the sum of theirs), so the
lazy part of the sum could be drawn exactly, but then a word coming back must be drawn
conditionally on every sum drawn while it was away (through the latent Poisson counts of each
of those steps), which needs the history of its absence, not O(1) state. Drawing it from its
own m-step transition instead would make the sums inconsistent with the values, so lazy
advancement is not exact, and it is not used. Integrating theta out (``scir_shape_step``) is
the exact way to skip those words' draws: the shapes carry no sums to keep consistent.
"""
from typing import NamedTuple, Optional

import numpy as np
import scipy.sparse as sp

from .._ext._global_step import column_sums, global_step, scir_shape_step
from .._ext._sparse import transpose_counts
from .._random import document_streams, substream


#: SCIR with the local step on the conditional mean integrates theta out (``scir_shape_step``);
#: False takes that step on theta (``global_step``), for benchmarks that compare the two
#: chains (``lda_levers.py``'s ``theta_state``).
INTEGRATE_THETA = True


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


class TopicStep(NamedTuple):
    """What ``step_topics`` returns.

    Attributes
    ----------
    state : (K, W), theta's type
        The new state: theta, or (``state_scale`` not None) the shapes of the gammas theta is.
    local : (K, W), theta's type
        The topics the next local step uses; rows sum to 1.
    state_scale : float in (0, 1) or None
        The gammas' scale (``1 - e^-h``), or None when ``state`` is theta.
    """
    state: np.ndarray
    local: np.ndarray
    state_scale: Optional[float]


def draw_theta(state, state_scale, seed):
    """A draw of theta, float64 (K, W): ``state`` itself when ``state_scale`` is None, else
    independent ``Gamma(state, state_scale)`` from the SeedSequence ``seed``, floored at the
    smallest normal value of ``state``'s type (a gamma of shape below 1 can underflow; the
    floor keeps the draw positive when stored in that type)."""
    if state_scale is None:
        return np.asarray(state, dtype=np.float64)
    draw = np.random.default_rng(seed).standard_gamma(state.astype(np.float64)) * state_scale
    return np.maximum(draw, np.finfo(state.dtype).tiny)


def step_topics(theta, counts, *, beta, scale, h, sampler, local_mean, seed, step,
                average=None, n_jobs=1, alpha=None, topics=None, state_scale=None):
    """One global step of every topic row given the minibatch's ``LocalCounts``.

    Row k moves towards ``Dirichlet(beta + scale * est[:, k] / n_kept)``, with ``scale`` = D /
    batch size and ``est = counts.word_topic``, plus, when the alpha part was split off
    (``counts.alpha_counts``), each word's alpha count spread over the topics by the alpha
    part's conditional share ``alpha_k topics[k, w] / sum_j alpha_j topics[j, w]``, with
    ``alpha`` (K,) and ``topics`` (K, W) those the local step used. Draws come from one
    stream per row, keyed by ``seed`` (a SeedSequence), ``step`` and the row, so the result is
    the same for any ``n_jobs``.

    SCIR with ``local_mean`` takes the step with theta integrated out (module docstring,
    ``INTEGRATE_THETA``); the others take it on theta, drawn first from the shapes if the
    state holds them.

    Parameters
    ----------
    theta : float64 or float32 (K, W)
        The state (theta, or the shapes when ``state_scale`` is given); not modified.
    state_scale : float or None
        The scale of the gammas whose shapes ``theta`` holds; None: ``theta`` is theta.
    sampler : {"scir", "sgrld"}
    local_mean : bool
        Whether the local topics are the normalised conditional means (else samples).
    average : TailAverage or None
        When given, the new local topics are added into it (a fresh array: its sums are
        never changed in place).

    Returns
    -------
    TopicStep: the new state, the local topics and the state's scale.
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
                          _alpha_spread(counts.alpha_counts, alpha, topics, scale / counts.n_kept,
                                        n_jobs)),
                      alpha=alpha, topics=topics)
    est_count = est_count * (scale / counts.n_kept)
    new_scale = None
    if sampler == "scir" and local_mean and INTEGRATE_THETA:
        scir_shape_step(theta, 0.0 if state_scale is None else float(state_scale), float(beta),
                        est_ptr, est_word, est_count, float(h), streams.addresses, theta_out,
                        local_out, average_in, average_out, n_jobs, **spread)
        new_scale = float(-np.expm1(-h))
    else:
        if state_scale is not None:     # (a key apart from the rows' streams: seed, step)
            theta = draw_theta(theta, state_scale, substream(seed, step, 1)).astype(theta.dtype)
        global_step(theta, float(beta), est_ptr, est_word, est_count, float(h),
                    sampler == "sgrld", local_mean, streams.addresses, theta_out, local_out,
                    average_in, average_out, n_jobs, **spread)
    if average_out is not None:
        average.record(average_out)
    return TopicStep(theta_out, local_out, new_scale)


def _alpha_spread(alpha_counts, alpha, topics, factor, n_jobs=1):
    """(spread, column_scale), float64 (W,) each, for the global step to add ``alpha_k
    (topics[k, w] column_scale[w]) spread[w]`` to topic k's count of word w: ``factor *
    alpha_counts[w]`` spread by the alpha part's share ``alpha_k topics[k, w] / sum_j alpha_j
    topics[j, w]``. ``column_scale[w]`` is one over the word's largest topic value (at most
    1 / DBL_MIN), so that the products stay at most 1 and ``spread`` finite for any column the
    local step accepts; spread is 0 and column_scale 1 where there is no alpha count (only
    the minibatch's words are read, on ``n_jobs`` threads)."""
    words = np.flatnonzero(alpha_counts)
    top, mass = column_sums(topics, words.astype(np.intp, copy=False), alpha, n_jobs)
    column_scale = np.ones(len(alpha_counts))
    column_scale[words] = 1.0 / np.maximum(top, np.finfo(np.float64).tiny)
    scaled_mass = mass * column_scale[words]           # in [min alpha, sum alpha]
    spread = np.zeros(len(alpha_counts))
    spread[words] = factor * alpha_counts[words] / scaled_mass
    return spread, column_scale
