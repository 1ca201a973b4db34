"""Local Gibbs sweeps for LDA with the topics fixed and each document's topic proportions
integrated out (the "local step" of stochastic-gradient LDA; Patterson & Teh 2013, Baker et
al. 2018).

For a token i of word w in document d, with the other tokens' assignments fixed::

    p(z_i = k | rest) ∝ (alpha_k + n_dk^{-i}) * phi[k, w]

Sweep 0 assigns the tokens in order, each from ∝ (alpha_k + n_dk so far) * phi[k, w] (a cold
start), or, when the caller passes a document's assignments from an earlier visit, the chain
starts from them instead (a warm start: the sweeps are the same Gibbs kernel, so the stationary
law p(z_d | phi, alpha) is unchanged; only the starting point moves); then ``n_sweeps`` full
sweeps follow. After each of the last ``n_sweeps - burn_in`` sweeps the
current n_dk (per document) and n_wk (per word, summed over the documents) are added into int64
accumulators, so the output is a sum of integers: the same for any number of threads.
Optionally each document's n_dk after its last sweep is copied out too: one draw of the counts
from the chain (unbiased where the average is not, e.g. for the likelihood of alpha).

Per token the weights split in two buckets (the SparseLDA decomposition of Yao, Mimno and
McCallum, 2009): ``alpha_k * phi[k, w]``, fixed while phi is fixed, whose cumulative sums per
word are computed once per call, and ``n_dk * phi[k, w]``, summed only over the topics the
document currently uses. One uniform picks the bucket and the topic (linear search in the count
bucket, binary search in the alpha bucket). A token costs O(topics in use + log K) instead of
O(K); the law is the same. Throughput against `lda` and tomotopy: benchmarks/gibbs_throughput.py.

Documents are independent given the topics. Document d draws only from its own bit generator
``bitgens[d]``, so the result depends on the generators and the data, never on the threads.
"""
from cython.parallel cimport prange, threadid
from libc.float cimport DBL_MIN
from libc.math cimport nextafter
from libc.stdint cimport int32_t, int64_t, uintptr_t
from numpy.random cimport bitgen_t

import numpy as np


cdef inline Py_ssize_t _draw_topic(const double* phi_w, const double* alpha_cdf_w,
                                   const int64_t* n_dk, const int32_t* topics, Py_ssize_t n_used,
                                   double* used_cdf, Py_ssize_t n_topics,
                                   bitgen_t* rng) noexcept nogil:
    """One draw from ∝ (alpha_k + n_dk) * phi_w[k], split in two buckets (as in SparseLDA).

    The alpha bucket, ∝ alpha_k * phi_w[k], does not change while phi is fixed: its cumulative
    sums ``alpha_cdf_w`` are computed once per call. The count bucket, ∝ n_dk * phi_w[k], is
    summed over the ``n_used`` topics with n_dk > 0 only (listed in ``topics``). One uniform
    picks the bucket and the topic within it; a topic of weight 0 is never drawn.
    """
    cdef Py_ssize_t j, lo, hi, mid
    cdef int32_t k
    cdef double count_total = 0.0, alpha_total = alpha_cdf_w[n_topics - 1], total, x
    for j in range(n_used):
        k = topics[j]
        count_total += <double> n_dk[k] * phi_w[k]
        used_cdf[j] = count_total
    total = count_total + alpha_total
    x = rng.next_double(rng.state)
    if not total >= DBL_MIN:
        # every weight underflows (the glue rescales phi so that this cannot happen): uniform
        j = <Py_ssize_t> (x * n_topics)
        return j if j < n_topics else n_topics - 1
    x *= total
    if x < count_total:
        j = 0
        while not x < used_cdf[j]:
            j += 1
        return topics[j]
    x -= count_total
    if x >= alpha_total:                      # rounding in the subtraction
        x = nextafter(alpha_total, 0.0)
    lo = 0
    hi = n_topics - 1
    while lo < hi:                            # smallest k with x < alpha_cdf_w[k]
        mid = (lo + hi) >> 1
        if x < alpha_cdf_w[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef inline void _add_token(Py_ssize_t k, int64_t* n_dk, int32_t* topics, int32_t* position,
                            Py_ssize_t* n_used) noexcept nogil:
    """n_dk[k] += 1, keeping ``topics[:n_used]`` = the topics with n_dk > 0."""
    if n_dk[k] == 0:
        position[k] = <int32_t> n_used[0]
        topics[n_used[0]] = <int32_t> k
        n_used[0] += 1
    n_dk[k] += 1


cdef inline void _remove_token(Py_ssize_t k, int64_t* n_dk, int32_t* topics, int32_t* position,
                               Py_ssize_t* n_used) noexcept nogil:
    """n_dk[k] -= 1; a topic whose count drops to 0 leaves the list, the last one takes its
    place."""
    cdef int32_t last
    n_dk[k] -= 1
    if n_dk[k] == 0:
        n_used[0] -= 1
        last = topics[n_used[0]]
        topics[position[k]] = last
        position[last] = position[k]


cdef void _sample_document(const int32_t* words, Py_ssize_t n_tokens, int32_t* z,
                           const double* phi, const double* alpha_cdf, Py_ssize_t n_topics,
                           bitgen_t* rng, int n_sweeps, int burn_in,
                           int64_t* n_dk, int32_t* topics, int32_t* position, double* used_cdf,
                           int64_t* n_dk_sum, int64_t* n_wk_sum,
                           int64_t* n_dk_last, bint warm) noexcept nogil:
    """All sweeps of one document. ``z`` holds the document's assignments: read as the start
    when ``warm``, else drawn by the sequential start; the final ones on return. ``n_dk``,
    ``topics``, ``position`` and ``used_cdf`` are scratch of length n_topics; ``n_dk_sum`` is
    the document's output row; ``n_wk_sum`` is the thread's (W_b, n_topics) accumulator, or
    NULL to skip the word-topic counts; ``n_dk_last`` the document's row for its counts after
    the last sweep, or NULL."""
    cdef Py_ssize_t i, j, k, n_used = 0, offset
    cdef int sweep
    for k in range(n_topics):
        n_dk[k] = 0
    for i in range(n_tokens):
        if warm:                                                # the previous visit's state
            k = z[i]
        else:                                                   # sweep 0: sequential start
            offset = <Py_ssize_t> words[i] * n_topics
            k = _draw_topic(phi + offset, alpha_cdf + offset, n_dk, topics, n_used, used_cdf,
                            n_topics, rng)
            z[i] = <int32_t> k
        _add_token(k, n_dk, topics, position, &n_used)
    for sweep in range(n_sweeps):
        for i in range(n_tokens):
            offset = <Py_ssize_t> words[i] * n_topics
            _remove_token(z[i], n_dk, topics, position, &n_used)
            k = _draw_topic(phi + offset, alpha_cdf + offset, n_dk, topics, n_used, used_cdf,
                            n_topics, rng)
            z[i] = <int32_t> k
            _add_token(k, n_dk, topics, position, &n_used)
            if sweep >= burn_in and n_wk_sum != NULL:
                n_wk_sum[offset + k] += 1
        if sweep >= burn_in:
            for j in range(n_used):
                k = topics[j]
                n_dk_sum[k] += n_dk[k]
    if n_dk_last != NULL:
        for k in range(n_topics):
            n_dk_last[k] = n_dk[k]


def gibbs_sweeps(const int64_t[::1] doc_ptr, const int32_t[::1] word_ids,
                 const double[:, ::1] phi_local, const double[::1] alpha,
                 const uintptr_t[::1] bitgens, int n_sweeps, int burn_in,
                 int64_t[:, ::1] n_dk_sum, int64_t[:, ::1] n_wk_sum=None, int n_jobs=1,
                 int64_t[:, ::1] n_dk_last=None, int32_t[::1] assignments=None):
    """Gibbs sweeps over the topic assignments of every document of a minibatch.

    Parameters
    ----------
    doc_ptr : int64 (n_docs + 1,)
        Document d's tokens are ``word_ids[doc_ptr[d]:doc_ptr[d + 1]]``; ``doc_ptr[0] == 0``,
        non-decreasing (empty documents allowed), ``doc_ptr[n_docs] == n_tokens``.
    word_ids : int32 (n_tokens,)
        Local word id of each token, in ``0 .. W_b - 1``.
    phi_local : float64 C-contiguous (W_b, K)
        ``phi_local[w, k]`` ∝ phi[k, global id of w], finite and >= 0; any positive factor per
        word (row) is allowed, since it cancels in the conditional.
    alpha : float64 (K,)
        Dirichlet prior of the document-topic proportions, > 0.
    bitgens : uintp (n_docs,)
        ``bitgen_t*`` of each document's numpy BitGenerator (see ``bitgen_addresses``); the
        caller keeps those objects alive and unused by others during the call.
    n_sweeps, burn_in : int
        Full sweeps after the sequential start, and how many of them are discarded
        (``n_sweeps > burn_in >= 0``).
    n_dk_sum : int64 (n_docs, K), output
        Overwritten with the sum over the kept sweeps of each document's topic counts.
    n_wk_sum : int64 (W_b, K), output, or None
        Overwritten with the sum over the kept sweeps of the minibatch's word-topic counts.
        None skips them (fold-in / transform needs only n_dk).
    n_jobs : int
        OpenMP threads over documents (dynamic schedule); no effect on the result.
    n_dk_last : int64 (n_docs, K), output, or None
        Overwritten with each document's topic counts after its last sweep (one sample, not an
        average; rows sum to the documents' lengths). None skips them. The other outputs are
        the same with or without it.
    assignments : int32 (n_tokens,), input and output, or None
        Each token's topic. On entry, a document whose first token holds -1 is started cold
        (sequential start); a document whose tokens all hold topics in ``0 .. K - 1`` is
        started from them (warm start, e.g. the assignments of its last visit). On return,
        every token's topic after the last sweep. None: every document starts cold.
    """
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1
    cdef Py_ssize_t n_tokens = word_ids.shape[0]
    cdef Py_ssize_t n_words = phi_local.shape[0], n_topics = phi_local.shape[1]
    cdef Py_ssize_t d, i, t, j, bad = -1
    cdef bint word_topic = n_wk_sum is not None
    cdef bint last_counts = n_dk_last is not None

    if n_docs < 0:
        raise ValueError("doc_ptr must have n_docs + 1 >= 1 entries")
    if n_topics < 1 or alpha.shape[0] != n_topics:
        raise ValueError(f"alpha has {alpha.shape[0]} entries but phi_local has {n_topics} topics")
    if bitgens.shape[0] != n_docs:
        raise ValueError(f"bitgens has {bitgens.shape[0]} entries for {n_docs} documents")
    if n_dk_sum.shape[0] != n_docs or n_dk_sum.shape[1] != n_topics:
        raise ValueError(f"n_dk_sum must have shape ({n_docs}, {n_topics})")
    if word_topic and (n_wk_sum.shape[0] != n_words or n_wk_sum.shape[1] != n_topics):
        raise ValueError(f"n_wk_sum must have shape ({n_words}, {n_topics})")
    if last_counts and (n_dk_last.shape[0] != n_docs or n_dk_last.shape[1] != n_topics):
        raise ValueError(f"n_dk_last must have shape ({n_docs}, {n_topics})")
    if not 0 <= burn_in < n_sweeps:
        raise ValueError(f"need n_sweeps > burn_in >= 0, got n_sweeps={n_sweeps}, "
                         f"burn_in={burn_in}")
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be >= 1, got {n_jobs}")
    if doc_ptr[0] != 0 or doc_ptr[n_docs] != n_tokens:
        raise ValueError(f"doc_ptr must start at 0 and end at n_tokens={n_tokens}")
    with nogil:
        for d in range(n_docs):
            if doc_ptr[d + 1] < doc_ptr[d] or (bitgens[d] == 0 and doc_ptr[d + 1] > doc_ptr[d]):
                bad = d
                break
    if bad >= 0:
        raise ValueError(f"doc_ptr decreases or bitgens is NULL at document {bad}")
    with nogil:
        for i in range(n_tokens):
            if word_ids[i] < 0 or word_ids[i] >= n_words:
                bad = i
                break
    if bad >= 0:
        raise ValueError(f"word_ids[{bad}] = {word_ids[bad]} is outside 0..{n_words - 1}")
    if assignments is not None:
        if assignments.shape[0] != n_tokens:
            raise ValueError(f"assignments has {assignments.shape[0]} entries for {n_tokens} "
                             "tokens")
        with nogil:
            for d in range(n_docs):
                if doc_ptr[d + 1] > doc_ptr[d] and assignments[doc_ptr[d]] != -1:
                    for i in range(doc_ptr[d], doc_ptr[d + 1]):
                        if not 0 <= assignments[i] < n_topics:
                            bad = d
                            break
                if bad >= 0:
                    break
        if bad >= 0:
            raise ValueError(f"assignments of document {bad} must all lie in 0..{n_topics - 1}, "
                             "or start with -1 (cold start)")

    cdef int n_threads = <int> min(n_jobs, max(n_docs, 1))
    cdef Py_ssize_t stride = (n_topics + 15) // 16 * 16     # per-thread rows: own cache lines
    cdef int64_t[:, ::1] counts = np.empty((n_threads, stride), dtype=np.int64)
    cdef int32_t[:, ::1] topics = np.empty((n_threads, stride), dtype=np.int32)
    cdef int32_t[:, ::1] positions = np.empty((n_threads, stride), dtype=np.int32)
    cdef double[:, ::1] used_cdfs = np.empty((n_threads, stride), dtype=np.float64)
    cdef int32_t[::1] z = np.empty(n_tokens, dtype=np.int32) if assignments is None else assignments
    cdef bint warm, have_assignments = assignments is not None
    cdef double[:, ::1] alpha_cdf = np.empty((n_words, n_topics), dtype=np.float64)
    cdef int64_t[:, :, ::1] n_wk_thread = None
    cdef int64_t* n_wk_ptr = NULL
    cdef int64_t* n_last_ptr = NULL
    cdef double cum
    n_dk_sum[:, :] = 0
    if word_topic:
        n_wk_sum[:, :] = 0
        if n_threads > 1:     # thread 0 adds straight into the output, the others here
            n_wk_thread = np.zeros((n_threads - 1, n_words, n_topics), dtype=np.int64)

    with nogil:
        for i in range(n_words):             # the alpha bucket's cumulative sums, per word
            cum = 0.0
            for j in range(n_topics):
                cum = cum + alpha[j] * phi_local[i, j]
                alpha_cdf[i, j] = cum

    for d in prange(n_docs, nogil=True, num_threads=n_threads, schedule="dynamic"):
        t = threadid()
        if word_topic:
            n_wk_ptr = &n_wk_sum[0, 0] if t == 0 else &n_wk_thread[t - 1, 0, 0]
        else:
            n_wk_ptr = NULL
        if last_counts:
            n_last_ptr = &n_dk_last[d, 0]
        else:
            n_last_ptr = NULL
        warm = have_assignments and doc_ptr[d + 1] > doc_ptr[d] and z[doc_ptr[d]] >= 0
        _sample_document(&word_ids[0] + doc_ptr[d], doc_ptr[d + 1] - doc_ptr[d],
                         &z[0] + doc_ptr[d], &phi_local[0, 0], &alpha_cdf[0, 0], n_topics,
                         <bitgen_t*> bitgens[d], n_sweeps, burn_in,
                         &counts[t, 0], &topics[t, 0], &positions[t, 0], &used_cdfs[t, 0],
                         &n_dk_sum[d, 0], n_wk_ptr, n_last_ptr, warm)

    if word_topic and n_threads > 1:
        with nogil:
            for t in range(n_threads - 1):
                for i in range(n_words):
                    for j in range(n_topics):
                        n_wk_sum[i, j] += n_wk_thread[t, i, j]
