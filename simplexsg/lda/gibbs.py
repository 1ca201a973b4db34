"""Python side of the LDA local Gibbs step: data conversion, stream derivation, validation.

The sweeps themselves run in ``simplexsg._ext._lda_gibbs.gibbs_sweeps`` (Cython, nogil, OpenMP
over documents). With the topics ``phi`` fixed and each document's topic proportions integrated
out, a token of word w in document d is resampled from::

    p(z = k | rest) ∝ (alpha_k + n_dk^{-i}) * phi[k, w]

and the counts n_dk, n_kw averaged over the kept sweeps estimate their expectations under
p(z | words, phi, alpha). A stochastic-gradient step then uses
``a_hat = beta + (D / batch_size) * mean n_kw`` (Baker et al. 2018, Section 4.1).
"""
from typing import NamedTuple, Optional

import numpy as np
import scipy.sparse as sp

from .._random import content_ids, document_streams
from .._validation import check_int, check_n_jobs, check_nonnegative
from .._ext._lda_gibbs import gibbs_sweeps
from .._ext._sparse import csr_token_arrays

__all__ = ["TopicCounts", "Tokens", "csr_to_tokens", "fold_in", "gibbs_topic_counts",
           "sweep_tokens"]


class TopicCounts(NamedTuple):
    """Counts from ``gibbs_topic_counts``.

    Attributes
    ----------
    doc_topic : float64 (n_docs, K), or None
        Mean over the kept sweeps of n_dk; row d sums to the length of document d. None when
        ``sweep_tokens`` was asked not to keep it (a training step).
    word_topic_sums : scipy.sparse.csr_array of int64 or float64 (n_words, K), or None
        Sum over the kept sweeps of n_wk for the minibatch's distinct words only: row j is the
        word ``word_ids[j]`` of the full vocabulary; a row's topics are sorted. None unless
        ``word_topic=True``. Float64 with ``sweep_tokens(rao_blackwell=True)``: the sum of the
        kept draws' conditional expectations, their alpha part left out (``alpha_counts``).
    n_kept : int
        Number of kept sweeps (the divisor of the averages).
    word_ids : int64 (n_words,)
        Sorted global ids of the words that occur in the minibatch (count > 0).
    doc_topic_last : int64 (n_docs, K), or None
        Each document's n_dk after its last sweep: one draw of the counts (integers, row d
        summing to the length of document d), where ``doc_topic`` is an average. None unless
        ``last_sweep=True``. A function of the doc-topic prior's likelihood that is non-linear
        in the counts (``simplexsg.lda.alpha``) needs a draw: by Fisher's identity a
        draw from p(z | words) gives an unbiased gradient, the average does not.
    assignments : int32 (n_tokens,), or None
        Each token's topic after the last sweep, tokens in ``csr_to_tokens`` order (document
        by document, words in column order, a word with count c repeated c times). None unless
        ``assignments`` were passed in.
    alpha_counts : float64 (n_words,), or None
        With ``sweep_tokens(rao_blackwell=True)``: each word's expected count of the alpha
        part over the kept sweeps, which ``word_topic_sums`` leaves out; spread over the
        topics by ``alpha_k phi[k, w]`` it completes the expectation
        (``simplexsg._ext._lda_gibbs``). None otherwise.
    """
    doc_topic: Optional[np.ndarray]
    word_topic_sums: Optional[sp.csr_array]
    n_kept: int
    word_ids: np.ndarray
    doc_topic_last: Optional[np.ndarray] = None
    assignments: Optional[np.ndarray] = None
    alpha_counts: Optional[np.ndarray] = None

    @property
    def topic_word(self):
        """Mean over the kept sweeps of n_kw, float64 (K, n_words), or None."""
        if self.word_topic_sums is None:
            return None
        return np.ascontiguousarray(self.word_topic_sums.T.toarray()) / self.n_kept


class Tokens(NamedTuple):
    """A minibatch as token arrays (``csr_to_tokens``): document d's tokens are
    ``word_ids[doc_ptr[d]:doc_ptr[d + 1]]``, local word ids into the sorted global ids
    ``vocab``."""
    doc_ptr: np.ndarray
    word_ids: np.ndarray
    vocab: np.ndarray

    @property
    def n_documents(self):
        return len(self.doc_ptr) - 1


def _as_csr(X):
    """X as a 2-d scipy CSR array (no copy when it already is one)."""
    if sp.issparse(X):
        return X.tocsr()
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (documents x vocabulary), got shape {X.shape}")
    return sp.csr_array(X)


def csr_to_tokens(X, n_jobs=1):
    """Flatten a documents x vocabulary count matrix into token arrays.

    Parameters
    ----------
    X : scipy.sparse matrix/array or dense array, (n_docs, W)
        Non-negative integer counts; empty rows are allowed. Explicit zeros and duplicate entries
        are fine (duplicates add up).
    n_jobs : int
        Threads that write the tokens (``simplexsg._ext._sparse.csr_token_arrays``); no
        effect on the result.

    Returns
    -------
    Tokens(doc_ptr, word_ids, vocab):
    doc_ptr : int64 (n_docs + 1,)
        Document d's tokens are ``word_ids[doc_ptr[d]:doc_ptr[d + 1]]``.
    word_ids : int32 (n_tokens,)
        Local word id of each token: an index into ``vocab``.
    vocab : int64 (W_b,)
        Sorted global ids of the distinct words with a positive count.
    """
    X = _as_csr(X)
    data, indices, indptr = X.data, X.indices, X.indptr
    if data.dtype.kind == "f":
        bad = ~np.isfinite(data) | (data < 0) | (data != np.floor(data))
    elif data.dtype.kind in "iub":
        bad = data < 0
    else:
        raise ValueError(f"X must hold numeric counts, got dtype {data.dtype}")
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        row = int(np.searchsorted(indptr, j, side="right") - 1)
        raise ValueError(f"X must hold non-negative integer counts; found {data[j]} at row {row}, "
                         f"column {int(indices[j])}")
    nnz = indptr[-1]                    # the arrays may hold more entries than the matrix
    return Tokens(*csr_token_arrays(indptr.astype(np.int64), indices[:nnz],
                                    data[:nnz].astype(np.int64, copy=False), X.shape[1], n_jobs))


def gibbs_topic_counts(X, topics, alpha, *, n_sweeps, burn_in, seed, iteration, doc_ids=None,
                       n_jobs=1, word_topic=True, last_sweep=False, assignments=None,
                       direct_margin=None):
    """Gibbs-sample every document's topic assignments with the topics fixed; average the counts.

    Per document: a sequential start (sweep 0) or a warm start from ``assignments``, then
    ``n_sweeps`` sweeps of
    ``p(z = k | rest) ∝ (alpha_k + n_dk^{-i}) * topics[k, w]``, the first ``burn_in`` discarded,
    n_dk and n_kw averaged over the other ``n_sweeps - burn_in``.

    Document ``i`` (row i of X) draws from the stream of document ``doc_ids[i]`` at
    ``iteration`` (``simplexsg._random.document_streams``), so the result is a function of
    (seed, iteration, doc_ids, data) only: bit-identical for any ``n_jobs``.

    Parameters
    ----------
    X : scipy.sparse or dense (n_docs, W)
        Non-negative integer counts; empty rows give zero rows.
    topics : (K, W), float64 or float32
        Topic-word probabilities phi, rows summing to 1. Every word occurring in X needs a
        positive probability under at least one topic. Read in place (no copy) when it is a
        C-contiguous float32 or float64 array.
    alpha : float or (K,)
        Dirichlet prior of the documents' topic proportions, > 0.
    n_sweeps, burn_in : int
        Sweeps after the start, and how many of them to discard (``n_sweeps > burn_in >= 0``).
    seed : int or numpy.random.SeedSequence
        Entropy of the streams (e.g. the estimator's SeedSequence).
    iteration : int >= 0
        Outer iteration (e.g. the SG-MCMC step); a new iteration gives new streams.
    doc_ids : int (n_docs,) >= 0, None or "content"
        Each row's stream index. None: its position ``0 .. n_docs - 1``; "content": a hash of
        its words and counts (``simplexsg._random.content_ids``), so a document's draws do not
        depend on its position or on the other rows.
    n_jobs : int or None
        Threads over documents (None: 1; -1: all CPUs, as in joblib). No effect on the result.
    word_topic : bool
        Also return the averaged n_kw (set False for fold-in / transform).
    last_sweep : bool
        Also return each document's n_dk after its last sweep (``doc_topic_last``). The other
        outputs are bit-identical either way.
    assignments : int (n_tokens,) or None
        Starting topic of each token, in ``csr_to_tokens`` order: a document whose first token
        holds -1 starts cold (sequential start), one whose tokens all hold topics in
        ``0 .. K - 1`` starts from them (a warm start, e.g. its assignments at its last visit:
        the sweeps are the same Gibbs kernel, so its stationary law is unchanged). Not modified;
        the final assignments are returned in ``TopicCounts.assignments``.
    direct_margin : int or None
        The kernel draws a token directly while its document uses at most this many topics
        more than the token's word has top topics, by rejection otherwise
        (``simplexsg._ext._lda_gibbs``); both draws are exact, so it changes the speed, not
        the law. None: the kernel's default; ``_lda_gibbs.REJECTION_ALWAYS``: rejection
        always.

    Returns
    -------
    TopicCounts
        Its word-topic counts cover only the minibatch's words ``word_ids`` (no repeats): a
        global step adds ``(D / n_docs) * topic_word`` to those columns only, without a dense
        K x W array of zeros per minibatch.
    """
    n_sweeps = check_int("n_sweeps", n_sweeps, 1)
    burn_in = check_int("burn_in", burn_in, 0)
    if burn_in >= n_sweeps:
        raise ValueError(f"burn_in must be < n_sweeps; got burn_in={burn_in}, n_sweeps={n_sweeps}")
    iteration = check_int("iteration", iteration, 0)
    n_jobs = check_n_jobs(n_jobs)

    if not (isinstance(topics, np.ndarray) and topics.dtype in (np.float32, np.float64)):
        topics = check_nonnegative("topics", topics)
    elif not (np.isfinite(topics).all() and (topics >= 0).all()):
        check_nonnegative("topics", topics)             # names the bad entry
    if topics.ndim != 2 or topics.shape[0] < 1:
        raise ValueError(f"topics must have shape (K, W) with K >= 1, got {topics.shape}")
    n_topics = topics.shape[0]
    row_sums = topics.sum(axis=1, dtype=np.float64)
    if not np.allclose(row_sums, 1.0, rtol=0, atol=1e-6 if topics.dtype == np.float64 else 1e-4):
        k = int(np.argmax(np.abs(row_sums - 1.0)))
        raise ValueError(f"topics rows must sum to 1; row {k} sums to {row_sums[k]}")
    alpha = check_nonnegative("alpha", alpha, strictly_positive=True)
    if alpha.ndim == 0:
        alpha = np.full(n_topics, float(alpha))
    if alpha.shape != (n_topics,):
        raise ValueError(f"alpha must be a scalar or have shape ({n_topics},), got {alpha.shape}")

    X = _as_csr(X)
    if X.shape[1] != topics.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but topics has {topics.shape[1]} words")
    tokens = csr_to_tokens(X, n_jobs)
    n_docs = tokens.n_documents
    if doc_ids is None:
        doc_ids = np.arange(n_docs)
    elif isinstance(doc_ids, str) and doc_ids == "content":
        doc_ids = content_ids(X)
    elif (isinstance(doc_ids, str) or np.shape(doc_ids) != (n_docs,)
          or np.min(doc_ids, initial=0) < 0):
        raise ValueError(f"doc_ids must be None, 'content' or one int >= 0 per document "
                         f"({n_docs}), got {doc_ids!r}")
    if assignments is not None:
        assignments = np.array(assignments, dtype=np.int32, copy=True)
        if assignments.shape != tokens.word_ids.shape:
            raise ValueError(f"assignments must have one entry per token "
                             f"({tokens.word_ids.size}), got shape {assignments.shape}")
    return sweep_tokens(tokens, topics, alpha, n_sweeps=n_sweeps, burn_in=burn_in,
                        streams=document_streams(seed, iteration, doc_ids), n_jobs=n_jobs,
                        word_topic=word_topic, last_sweep=last_sweep, assignments=assignments,
                        direct_margin=direct_margin)


def step_bytes_per_token(n_kept):
    """Bytes per token of a training step's kernel call (``sweep_tokens`` with word-topic
    counts and ``n_kept`` kept sweeps): its word id and topic (int32 each), its topic in each
    kept sweep (int32) and its place in the by-word order of the counts (int64). With
    ``rao_blackwell`` the kept topics are not stored; each run's alpha part (8 bytes a run, at
    most a token) takes their place. Not counted: the arrays of the minibatch's words x K that
    the kernel builds (its word tables, 16 bytes an entry, and with ``rao_blackwell`` the
    expected counts, 8)."""
    return 16 + 4 * n_kept


def sweep_tokens(tokens, topics, alpha, *, n_sweeps, burn_in, streams, n_jobs=1,
                 word_topic=True, last_sweep=False, assignments=None,
                 direct_margin=None, doc_topic=True, rao_blackwell=False):
    """``gibbs_topic_counts`` on trusted input: the training loop's local step.

    ``tokens``: a ``Tokens`` minibatch; ``topics``: float32 or float64 (K, W), finite and >= 0
    (rows need not be normalised: the kernel divides each word's column by its largest entry);
    ``alpha``: float64 (K,) > 0; ``streams``: the documents' ``DocumentStreams``;
    ``assignments``: int32 (n_tokens,), updated in place, or None; ``doc_topic=False`` skips
    the averaged n_dk (``TopicCounts.doc_topic`` None), which a training step does not use:
    a dense (n_docs, K) array that costs as much as the sweeps of short documents. The other
    outputs are the same either way. ``rao_blackwell``: the word-topic counts are the kept
    draws' conditional expectations (``TopicCounts.word_topic_sums`` and ``alpha_counts``;
    for the training step: the same expectation as the draws' counts, less noise). Returns a
    ``TopicCounts``.
    """
    n_docs, n_topics = tokens.n_documents, topics.shape[0]
    n_dk_sum = np.empty((n_docs, n_topics), dtype=np.int64) if doc_topic else None
    n_dk_last = np.empty((n_docs, n_topics), dtype=np.int64) if last_sweep else None
    word_topic_sums = gibbs_sweeps(
        tokens.doc_ptr, tokens.word_ids, tokens.vocab, np.ascontiguousarray(topics),
        np.ascontiguousarray(alpha, dtype=np.float64), streams.addresses, n_sweeps, burn_in,
        n_dk_sum, word_topic, n_jobs, n_dk_last, assignments, rao_blackwell=rao_blackwell,
        **({} if direct_margin is None else dict(direct_margin=direct_margin)))
    alpha_counts = None
    if word_topic:
        indptr, topic_ids, counts, alpha_counts = word_topic_sums
        word_topic_sums = sp.csr_array((counts, topic_ids, indptr),
                                       shape=(len(tokens.vocab), n_topics))
    n_kept = n_sweeps - burn_in
    return TopicCounts(None if n_dk_sum is None else n_dk_sum / n_kept, word_topic_sums, n_kept,
                       tokens.vocab, n_dk_last, assignments,
                       alpha_counts)


def fold_in(topics, alpha, X, *, n_sweeps, burn_in, seed, iteration=0, n_jobs=1):
    """Documents' topic proportions given fixed topics, by the Gibbs kernel (transform).

    Runs ``gibbs_topic_counts(X, topics, alpha, ..., word_topic=False)`` with each document's
    stream keyed by its content (``content_ids``): a document gets the same proportions
    whatever its row and whatever else is in X (equal documents, equal results). Returns the
    posterior mean of each document's proportions given the averaged counts,
    ``(alpha_k + mean n_dk) / (n_d + sum(alpha))``: float64 (n_docs, K), rows summing to 1;
    an empty document gets the prior mean ``alpha / sum(alpha)``. The argument order is that
    of the ``fold_in`` callbacks of ``simplexsg.metrics`` (topics, alpha, X).
    """
    counts = gibbs_topic_counts(X, topics, alpha, n_sweeps=n_sweeps, burn_in=burn_in, seed=seed,
                                iteration=iteration, doc_ids="content", n_jobs=n_jobs,
                                word_topic=False)
    weights = counts.doc_topic + np.broadcast_to(np.asarray(alpha, dtype=np.float64),
                                                 counts.doc_topic.shape[1:])
    return weights / weights.sum(axis=1, keepdims=True)


class AssignmentStore:
    """Every token's topic from its document's last visit, for warm starts of the local chain.

    Built for an in-memory CSR corpus ``X`` (D, W): one int32 per token (4 bytes a token), in
    ``csr_to_tokens`` order, -1 for a document not yet visited (its chain starts cold).
    ``gather(rows)`` gives the starting assignments of the minibatch ``X[rows]`` (``rows``
    sorted, as the minibatch's rows), ``scatter(rows, z)`` stores the final ones.
    """

    def __init__(self, X):
        lengths = np.asarray(X.sum(axis=1)).ravel().astype(np.int64)
        self.token_ptr = np.concatenate([[0], np.cumsum(lengths)])
        self.z = np.full(int(self.token_ptr[-1]), -1, dtype=np.int32)

    def _positions(self, rows):
        starts = self.token_ptr[rows]
        lengths = self.token_ptr[np.asarray(rows) + 1] - starts
        offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
        return offsets + np.arange(int(lengths.sum()))

    def gather(self, rows):
        return self.z[self._positions(rows)]

    def scatter(self, rows, z):
        self.z[self._positions(rows)] = z
