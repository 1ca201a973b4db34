"""Slice-sampler allocations of a Dirichlet-process mixture of multinomials.

Row i (sparse counts x_i) with slice variable u_i may join any component j whose stick weight
w_j exceeds u_i, with probability proportional to the multinomial likelihood
``prod_c phi[j, c]^x_ic`` (Walker 2007; Kalli, Griffin & Walker 2011): the weights enter only
through the slice. The likelihoods are in logs, but for rows of a few counts, whose
candidates' shares are products of a few probabilities: there an exp of each candidate's sum
would be most of the draw's cost. The draw is an inverse CDF at a uniform the caller supplies,
so the kernel holds no random state and its result does not depend on the threads.

On rows of many counts most candidates are so far below the best that their share is 0
(``UNDERFLOW``), and the sums of logs that find them are most of the draw's cost. Those sums
are first taken in float32, twice the lanes of a vector instruction (AVX2's where the CPU has
it) and half the memory, with a bound on their rounding error; only the candidates the bound
cannot rule out get their exact float64 sums, the same additions in the same order as every
candidate's would be: the same shares to the bit, and the same draws.

With ``weighted`` the draw is ``∝ w_j prod_c phi_jc^x_ic`` instead: the exact conditional of z
given the weights when the slice is -inf and every component of noticeable weight is present
(used for rows that have no allocation to slice from yet).

``log_components`` is the allocation's log phi, of the components it reads;
``mixture_log_likelihood`` scores rows under the weighted components with the allocation's
sums; ``summed_by_component`` sums rows by their components. The split-merge kernels are in
``_split_merge``.
"""
import numpy as np

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport INFINITY, exp, fabs, log
from libc.stdint cimport int64_t, uint64_t

cdef extern from *:
    """
    #define SIMPLEXSG_LOWEST_BIT(x) __builtin_ctzll(x)
    """
    int SIMPLEXSG_LOWEST_BIT(uint64_t x) noexcept nogil

cdef extern from *:
    """
    #if defined(__SSE__) || defined(_M_X64)
    #include <xmmintrin.h>
    /* flush subnormal results to zero (and read subnormal inputs as zero): returns the
       previous control word, for SIMPLEXSG_RESTORE_SUBNORMALS */
    static unsigned int SIMPLEXSG_FLUSH_SUBNORMALS(void) {
        unsigned int previous = _mm_getcsr();
        _mm_setcsr(previous | 0x8040);
        return previous;
    }
    static void SIMPLEXSG_RESTORE_SUBNORMALS(unsigned int previous) { _mm_setcsr(previous); }
    #else
    static unsigned int SIMPLEXSG_FLUSH_SUBNORMALS(void) { return 0; }
    static void SIMPLEXSG_RESTORE_SUBNORMALS(unsigned int previous) { (void) previous; }
    #endif
    """
    unsigned int SIMPLEXSG_FLUSH_SUBNORMALS() noexcept nogil
    void SIMPLEXSG_RESTORE_SUBNORMALS(unsigned int previous) noexcept nogil


cdef extern from *:
    """
    /* The screen's float sums (``_float_sums``): on x86-64 with GCC, compiled twice, for
       AVX2 (eight floats a vector) and for the baseline (four), the one the CPU runs chosen
       when the module loads */
    #if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    #define SIMPLEXSG_WIDE_VECTORS __attribute__((target_clones("avx2", "default")))
    #else
    #define SIMPLEXSG_WIDE_VECTORS
    #endif
    SIMPLEXSG_WIDE_VECTORS
    static void simplexsg_add_eight(float *restrict sums, const float *restrict const *c,
                                    const float *restrict x, Py_ssize_t n) {
        const float *c0 = c[0], *c1 = c[1], *c2 = c[2], *c3 = c[3];
        const float *c4 = c[4], *c5 = c[5], *c6 = c[6], *c7 = c[7];
        for (Py_ssize_t m = 0; m < n; m++)
            sums[m] = sums[m] + x[0] * c0[m] + x[1] * c1[m] + x[2] * c2[m] + x[3] * c3[m]
                      + x[4] * c4[m] + x[5] * c5[m] + x[6] * c6[m] + x[7] * c7[m];
    }
    SIMPLEXSG_WIDE_VECTORS
    static void simplexsg_add_one(float *restrict sums, const float *restrict c, float x,
                                  Py_ssize_t n) {
        for (Py_ssize_t m = 0; m < n; m++)
            sums[m] = sums[m] + x * c[m];
    }
    /* The product draw's factors (``_candidate_products``): each share multiplied by four
       columns in their order, the same products as four passes, loaded and stored once */
    SIMPLEXSG_WIDE_VECTORS
    static void simplexsg_multiply_four(double *restrict shares,
                                        const double *restrict const *c, Py_ssize_t n) {
        const double *c0 = c[0], *c1 = c[1], *c2 = c[2], *c3 = c[3];
        for (Py_ssize_t m = 0; m < n; m++)
            shares[m] = (((shares[m] * c0[m]) * c1[m]) * c2[m]) * c3[m];
    }
    SIMPLEXSG_WIDE_VECTORS
    static void simplexsg_multiply_one(double *restrict shares, const double *restrict c,
                                       Py_ssize_t n) {
        for (Py_ssize_t m = 0; m < n; m++)
            shares[m] = shares[m] * c[m];
    }
    /* The largest of n values >= 0, and 0 if none is larger: four running maxima, which a
       maximum (exact, of any grouping) allows */
    SIMPLEXSG_WIDE_VECTORS
    static double simplexsg_largest(const double *restrict values, Py_ssize_t n) {
        double top[4] = {0.0, 0.0, 0.0, 0.0};
        Py_ssize_t m = 0;
        for (; m + 4 <= n; m += 4)
            for (int k = 0; k < 4; k++)
                top[k] = values[m + k] > top[k] ? values[m + k] : top[k];
        for (; m < n; m++)
            top[0] = values[m] > top[0] ? values[m] : top[0];
        top[0] = top[1] > top[0] ? top[1] : top[0];
        top[2] = top[3] > top[2] ? top[3] : top[2];
        return top[2] > top[0] ? top[2] : top[0];
    }
    """
    void simplexsg_add_eight(float* sums, const float** c, const float* x,
                             Py_ssize_t n) noexcept nogil
    void simplexsg_add_one(float* sums, const float* c, float x, Py_ssize_t n) noexcept nogil
    void simplexsg_multiply_four(double* shares, const double** c, Py_ssize_t n) noexcept nogil
    void simplexsg_multiply_one(double* shares, const double* c, Py_ssize_t n) noexcept nogil
    double simplexsg_largest(const double* values, Py_ssize_t n) noexcept nogil


cdef enum:
    # a candidate this far below the best (nats) is given 0 without calling exp: its share is
    # under e^-64 (1.6e-28) of the best's, so that even 10^9 of them add less than the
    # rounding of the total (2^-53 of it), and the draw is the exact one's to rounding. On
    # rows of tens of words against hundreds of candidates most of them are (docs/benchmarks/
    # dp.rst, "The news rows' sweep")
    UNDERFLOW = -64
    # a row's counts added to its candidates' sums in one pass over them: each sum is loaded
    # and stored once for four counts instead of once a count (the same additions, in order)
    COUNTS_AT_ONCE = 4
    # the same for the float sums of the screen (``_float_sums``), whose order is free: each
    # sum is loaded and stored once for eight counts (``simplexsg_add_eight`` adds eight)
    FLOAT_COUNTS_AT_ONCE = 8
    # rows of at most this many counts are drawn from products of probabilities, not from
    # exps of sums of logs (``_candidate_products``)
    PRODUCT_COUNTS = 16
    # the factors a product pass multiplies each share by at once (``simplexsg_multiply_four``)
    PRODUCT_FACTORS_AT_ONCE = 4
    # rows of fewer counts, or fewer candidates, than these are not screened in float32
    # (``_screened_shares``): below 32 counts most rows keep more than 1 / KEPT_AT_MOST of
    # their candidates, and a few candidates' exact sums cost less than the screen (docs/
    # benchmarks/dp.rst, "Float sums that screen the candidates of long rows")
    SCREEN_COUNTS = 32
    SCREEN_CANDIDATES = 32
    # rows of more stored counts than this are not screened in float32 (``_screened_shares``):
    # the bound on the float sums' error, 2 (n + 3) 2^-24 of their size, stays below 1/8
    SCREEN_MAX_ENTRIES = 1 << 20
    # the screen's exact sums read a cache line a count for each candidate it keeps, several
    # times a vectorised sum's cost: where it keeps more than 1 / KEPT_AT_MOST of them (rows
    # of a few words, whose candidates are mostly within UNDERFLOW of the best), every
    # candidate's vectorised exact sum is cheaper
    KEPT_AT_MOST = 8

cdef extern from *:
    """
    /* e^-64 (UNDERFLOW), and the smallest best product the product draw accepts: a candidate
       within UNDERFLOW of it is then a normal double (1e-270 * e^-64 > 2.2e-308) */
    #define SIMPLEXSG_UNDERFLOW_SHARE 1.603810890548637853e-28
    #define SIMPLEXSG_SMALLEST_PRODUCT 1e-270
    /* 2^-24, the unit roundoff of float32 */
    #define SIMPLEXSG_FLOAT_ROUNDOFF 5.9604644775390625e-08
    """
    double SIMPLEXSG_UNDERFLOW_SHARE
    double SIMPLEXSG_SMALLEST_PRODUCT
    double SIMPLEXSG_FLOAT_ROUNDOFF


cdef inline Py_ssize_t _candidates(const double[::1] sorted_log_weight, Py_ssize_t K,
                                   double log_slice) noexcept nogil:
    """The number of candidates of a row of slice ``log_slice``: the prefix of the K
    components whose log weight (``sorted_log_weight``, decreasing but for a slice of -inf,
    which takes them all) is at least the slice."""
    cdef Py_ssize_t low = 0, high = K, middle       # a binary search: K may be thousands
    while low < high:
        middle = (low + high) // 2
        if sorted_log_weight[middle] >= log_slice:
            low = middle + 1
        else:
            high = middle
    return low


cdef inline void _candidate_sums(const int64_t[::1] indptr, const int64_t[::1] indices,
                                 const double[::1] data, Py_ssize_t i,
                                 const double[:, ::1] table, Py_ssize_t candidates,
                                 const double[::1] sorted_log_weight, bint weighted,
                                 double* loglik) noexcept nogil:
    """In ``loglik``, each of the first ``candidates`` components' ``sum_c x_ic log phi_jc``
    for row i (plus its log weight if ``weighted``). ``table`` (d, K): log phi, a component a
    column, so that each of the row's categories adds a contiguous run of the candidates
    (vectorised); each sum adds the row's counts in their order."""
    cdef Py_ssize_t m, p, end
    cdef const double *c0
    cdef const double *c1
    cdef const double *c2
    cdef const double *c3
    cdef double x0, x1, x2, x3
    for m in range(candidates):
        loglik[m] = sorted_log_weight[m] if weighted else 0.0
    p, end = indptr[i], indptr[i + 1]
    while p + COUNTS_AT_ONCE <= end:              # each sum still adds the counts in order
        x0, x1, x2, x3 = data[p], data[p + 1], data[p + 2], data[p + 3]
        c0, c1 = &table[indices[p], 0], &table[indices[p + 1], 0]
        c2, c3 = &table[indices[p + 2], 0], &table[indices[p + 3], 0]
        for m in range(candidates):
            loglik[m] = (((loglik[m] + x0 * c0[m]) + x1 * c1[m]) + x2 * c2[m]) + x3 * c3[m]
        p += COUNTS_AT_ONCE
    for p in range(p, end):
        x0 = data[p]
        c0 = &table[indices[p], 0]
        for m in range(candidates):
            loglik[m] = loglik[m] + x0 * c0[m]


cdef inline void _kept_sums(const int64_t[::1] indptr, const int64_t[::1] indices,
                            const double[::1] data, Py_ssize_t i,
                            const double[:, ::1] log_phi, const int64_t[::1] order,
                            const int64_t* kept, Py_ssize_t n_kept,
                            const double[::1] sorted_log_weight, bint weighted,
                            double* loglik) noexcept nogil:
    """``_candidate_sums`` of the ``n_kept`` candidates ``kept`` only, each in
    ``loglik[kept[k]]``: the same additions in the same order, so the same sums to the bit.
    Each reads its own row of ``log_phi`` (K, d; ``order[m]``: the label at position m), in
    the row's increasing categories, where the table's columns would cost a cache line a
    count."""
    cdef Py_ssize_t k, m, p, start = indptr[i], end = indptr[i + 1]
    cdef const double *row
    cdef double total
    for k in range(n_kept):
        m = kept[k]
        row = &log_phi[order[m], 0]
        total = sorted_log_weight[m] if weighted else 0.0
        p = start
        while p + COUNTS_AT_ONCE <= end:
            total = ((((total + data[p] * row[indices[p]])
                       + data[p + 1] * row[indices[p + 1]])
                      + data[p + 2] * row[indices[p + 2]])
                     + data[p + 3] * row[indices[p + 3]])
            p += COUNTS_AT_ONCE
        for p in range(p, end):
            total = total + data[p] * row[indices[p]]
        loglik[m] = total


cdef inline void _float_sums(const int64_t[::1] indptr, const int64_t[::1] indices,
                             const double[::1] data, Py_ssize_t i, const float[:, ::1] table32,
                             Py_ssize_t candidates, const double[::1] sorted_log_weight,
                             bint weighted, float* approx) noexcept nogil:
    """``_candidate_sums`` in float32, from ``table32`` (the table rounded to float), into
    ``approx``: each sum within 2 (n + 3) 2^-24 of its size of the exact one, n the row's
    stored counts (every term has the sign of the sum, so their sizes add up to its size)."""
    cdef Py_ssize_t m, p, q, end
    cdef const float* columns[FLOAT_COUNTS_AT_ONCE]
    cdef float counts[FLOAT_COUNTS_AT_ONCE]
    for m in range(candidates):
        approx[m] = <float> sorted_log_weight[m] if weighted else 0.0
    p, end = indptr[i], indptr[i + 1]
    while p + FLOAT_COUNTS_AT_ONCE <= end:
        for q in range(FLOAT_COUNTS_AT_ONCE):
            counts[q] = <float> data[p + q]
            columns[q] = &table32[indices[p + q], 0]
        simplexsg_add_eight(approx, columns, counts, candidates)
        p += FLOAT_COUNTS_AT_ONCE
    for p in range(p, end):
        simplexsg_add_one(approx, &table32[indices[p], 0], <float> data[p], candidates)


cdef inline Py_ssize_t _screened_shares(const int64_t[::1] indptr, const int64_t[::1] indices,
                                        const double[::1] data, Py_ssize_t i,
                                        const double[:, ::1] log_phi,
                                        const int64_t[::1] order,
                                        const float[:, ::1] table32, Py_ssize_t candidates,
                                        const double[::1] sorted_log_weight, bint weighted,
                                        double* shares, float* approx,
                                        int64_t* kept) noexcept nogil:
    """The shares of ``_candidate_shares`` from sums of logs, screened: the float sums
    (``_float_sums``) and their error bound e_m give a lower bound on the best exact sum,
    max_m (a_m - e_m); a candidate whose a_m + e_m is more than UNDERFLOW below it is more
    than UNDERFLOW below the best, and its share is 0 without its exact sum. The others (the
    best among them) get their exact sums (``_kept_sums``), and from them the exact shares.
    Returns ``candidates``, or -1 where the screen cannot decide (every float sum
    non-finite, a row of more than SCREEN_MAX_ENTRIES counts) or keeps more than
    1 / KEPT_AT_MOST of the candidates (short rows): the caller then takes every candidate's
    exact sum. ``approx``: scratch space of K floats;
    ``kept``: of K indices."""
    cdef Py_ssize_t k, m, n_kept = 0, n = indptr[i + 1] - indptr[i]
    cdef double a, tolerance, best_below = -INFINITY, top = -INFINITY
    if n > SCREEN_MAX_ENTRIES:
        return -1
    tolerance = 2.0 * (n + 3) * SIMPLEXSG_FLOAT_ROUNDOFF
    _float_sums(indptr, indices, data, i, table32, candidates, sorted_log_weight, weighted,
                approx)
    for m in range(candidates):
        a = approx[m]
        if a > -INFINITY:
            best_below = max(best_below, a - tolerance * fabs(a))
    if best_below == -INFINITY:
        return -1
    for m in range(candidates):
        a = approx[m]
        shares[m] = 0.0
        if a > -INFINITY and a + tolerance * fabs(a) - best_below >= UNDERFLOW:
            kept[n_kept] = m
            n_kept += 1
    if n_kept * KEPT_AT_MOST > candidates:
        return -1
    _kept_sums(indptr, indices, data, i, log_phi, order, kept, n_kept, sorted_log_weight,
               weighted, shares)
    for k in range(n_kept):          # the best is kept, and finite: its float sum is
        top = max(top, shares[kept[k]])
    for k in range(n_kept):
        m = kept[k]
        shares[m] = exp(shares[m] - top) if shares[m] - top > UNDERFLOW else 0.0
    return candidates


cdef inline double _candidate_products(const int64_t[::1] indptr, const int64_t[::1] indices,
                                     const double[::1] data, Py_ssize_t i,
                                     const double[:, ::1] phi, Py_ssize_t candidates,
                                     const double[::1] sorted_weight, bint weighted,
                                     double* shares) noexcept nogil:
    """The shares of ``_candidate_shares`` from products: in ``shares`` each of the first
    ``candidates`` components' ``prod_c phi_jc^x_ic`` for row i (times its weight if
    ``weighted``); returns the cutoff at or below which a share counts as 0 (UNDERFLOW or more
    below the best, as the exps of the sums give them). ``phi`` (d, K): the exp of
    ``_candidate_sums``'s table. A count x multiplies x times (the rows of at most
    PRODUCT_COUNTS counts). -1, the shares unfinished, if the best product is below
    SIMPLEXSG_SMALLEST_PRODUCT: a share within UNDERFLOW of it might not be a normal double. A
    product and the exp of the sum of its logs differ by rounding, a few units in the last
    place of the share."""
    cdef Py_ssize_t m, p, repeat, f = 0, factors = 0
    cdef const double* columns[PRODUCT_COUNTS]      # a column a count, in the row's order
    cdef double top
    for m in range(candidates):
        shares[m] = sorted_weight[m] if weighted else 1.0
    for p in range(indptr[i], indptr[i + 1]):
        for repeat in range(<Py_ssize_t> data[p]):
            columns[factors] = &phi[indices[p], 0]
            factors += 1
    while f + PRODUCT_FACTORS_AT_ONCE <= factors:
        simplexsg_multiply_four(shares, &columns[f], candidates)
        f += PRODUCT_FACTORS_AT_ONCE
    for f in range(f, factors):
        simplexsg_multiply_one(shares, columns[f], candidates)
    top = simplexsg_largest(shares, candidates)
    if top < SIMPLEXSG_SMALLEST_PRODUCT:
        return -1.0
    return top * SIMPLEXSG_UNDERFLOW_SHARE


cdef inline Py_ssize_t _candidate_shares(const int64_t[::1] indptr, const int64_t[::1] indices,
                                         const double[::1] data, Py_ssize_t i,
                                         const double[:, ::1] table, const float[:, ::1] table32,
                                         bint screen, const double[:, ::1] log_phi,
                                         const int64_t[::1] order, const double[:, ::1] phi,
                                         const double[::1] sorted_log_weight,
                                         const double[::1] sorted_weight, double log_slice,
                                         bint weighted, double* shares, float* approx,
                                         int64_t* kept, double* floor) noexcept nogil:
    """The candidates of row i (``_candidates``): their number (0 if none has a finite sum),
    in ``shares`` each one's likelihood (times its weight if ``weighted``) over the best's,
    and in ``floor`` the share at or below which a candidate counts as 0, being UNDERFLOW or
    more below the best (the products' cutoff; 0 for the exps, which give those 0). From
    products (``_candidate_products``) on
    a row of at most PRODUCT_COUNTS counts, where most candidates are within UNDERFLOW of the
    best and their exps would be most of the draw's cost; otherwise, or if the products are
    too small, from the exps of sums of logs, which only the candidates within 64 nats of the
    best cost: screened in float32 (``_screened_shares``, with ``screen``: no log
    probability or weight is positive; on rows of at least SCREEN_COUNTS counts and
    SCREEN_CANDIDATES candidates), else every candidate's (``_candidate_sums``)."""
    cdef Py_ssize_t m, p, candidates = _candidates(sorted_log_weight, table.shape[1], log_slice)
    cdef Py_ssize_t screened
    cdef double top = -INFINITY, counts = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        counts = counts + data[p]
    if counts <= PRODUCT_COUNTS:
        floor[0] = _candidate_products(indptr, indices, data, i, phi, candidates,
                                       sorted_weight, weighted, shares)
        if floor[0] >= 0.0:
            return candidates
    floor[0] = 0.0
    if screen and counts >= SCREEN_COUNTS and candidates >= SCREEN_CANDIDATES:
        screened = _screened_shares(indptr, indices, data, i, log_phi, order, table32,
                                    candidates, sorted_log_weight, weighted, shares, approx,
                                    kept)
        if screened >= 0:
            return screened
    _candidate_sums(indptr, indices, data, i, table, candidates, sorted_log_weight, weighted,
                    shares)
    for m in range(candidates):
        top = max(top, shares[m])
    if top == -INFINITY:
        return 0
    for m in range(candidates):                # 1 for the best; exp is 0 below UNDERFLOW
        shares[m] = exp(shares[m] - top) if shares[m] - top > UNDERFLOW else 0.0
    return candidates


cdef int64_t _allocate_row(const int64_t[::1] indptr, const int64_t[::1] indices,
                           const double[::1] data, Py_ssize_t i, const double[:, ::1] table,
                           const float[:, ::1] table32, bint screen,
                           const double[:, ::1] log_phi, const double[:, ::1] phi,
                           const int64_t[::1] order,
                           const int64_t[::1] rank, const int64_t[::1] last_label,
                           const double[::1] sorted_log_weight,
                           const double[::1] sorted_weight, double log_slice, double uniform,
                           bint weighted, double* shares, float* approx, int64_t* kept,
                           uint64_t* marked) noexcept nogil:
    """Component drawn for row i, or -1 if no component's weight reaches the slice.

    ``table`` (d, K): log phi with the components by decreasing weight ``sorted_log_weight``
    (``order[m]``: the label at position m; ``rank[j]``: label j's position), so the
    candidates are a prefix (``_candidates``); ``phi``: its exp, ``sorted_weight``: the
    weights, ``table32`` the table in float32, ``screen`` whether to screen with it and
    ``log_phi`` (K, d) the rows the screen's exact sums read (``_candidate_shares``);
    ``last_label[m]``: the largest label among the first m + 1 of that order. ``shares``,
    ``approx`` and ``kept``: scratch space of K doubles, floats and indices; ``marked``: K
    bits, all clear, and left clear. The draw is an inverse CDF over the candidates' shares
    in their labels' order: the same draws whatever the layout. The candidates of positive
    share are marked in a bitmap by label, and the two sums of the draw walk its set bits, so
    they cost those candidates and a word per 64 labels, not a test of every label up to the
    last candidate's (a share of 0, most of a short row's candidates among thousands, adds
    nothing to either sum).
    """
    cdef Py_ssize_t j, m, w, words
    cdef uint64_t bits
    cdef double total = 0.0, cumulative = 0.0, floor
    cdef int64_t chosen = -1
    cdef Py_ssize_t candidates = _candidate_shares(indptr, indices, data, i, table, table32,
                                                   screen, log_phi, order, phi,
                                                   sorted_log_weight,
                                                   sorted_weight, log_slice, weighted, shares,
                                                   approx, kept, &floor)
    if candidates == 0:
        return -1
    words = (last_label[candidates - 1] >> 6) + 1
    for m in range(candidates):                # a share of 0 adds nothing, and is not drawn
        if shares[m] > floor:
            marked[order[m] >> 6] |= (<uint64_t> 1) << (order[m] & 63)
    for w in range(words):                     # the candidates in label order: total
        bits = marked[w]
        while bits:
            total = total + shares[rank[(w << 6) + SIMPLEXSG_LOWEST_BIT(bits)]]
            bits = bits & (bits - 1)
    uniform = uniform * total
    for w in range(words):                     # and the inverse CDF
        bits = marked[w]
        while bits and cumulative <= uniform:
            j = (w << 6) + SIMPLEXSG_LOWEST_BIT(bits)
            bits = bits & (bits - 1)
            cumulative = cumulative + shares[rank[j]]
            chosen = j
        marked[w] = 0
    return chosen


cdef _scratch(Py_ssize_t threads, Py_ssize_t K, str kernel, dtype=np.float64):
    """(threads, max(K, 1)) values of ``dtype``: each thread's of K candidates; MemoryError
    naming ``kernel`` if they cannot be had (numpy's ValueError for a size past its range
    too)."""
    try:
        return np.empty((threads, max(K, 1)), dtype=dtype)
    except (MemoryError, ValueError):
        size = threads * max(K, 1) * np.dtype(dtype).itemsize
        raise MemoryError(f"{kernel}: no memory for the scratch space of {K} components "
                          f"in each of {threads} threads ({size / 1e9:.3g} GB)") from None


def log_components(const double[:, ::1] theta, const int64_t[::1] rows, int n_jobs=1):
    """(J, d) array: row j the log of row j of the positive gamma variables ``theta`` (J, d)
    normalised, ``log(theta[j] / theta[j].sum())``, for the rows ``rows``; 0 in the others.
    On ``n_jobs`` threads over the rows: the allocation's log phi, of the components some row
    can join only (``slice_allocate`` reads no other)."""
    cdef Py_ssize_t J = theta.shape[0], d = theta.shape[1], r, j, c
    cdef double total
    out = np.zeros((J, d))
    cdef double[:, ::1] values = out
    with nogil:
        for r in prange(rows.shape[0], schedule="dynamic", num_threads=max(1, n_jobs)):
            j = rows[r]
            total = 0.0
            for c in range(d):
                total = total + theta[j, c]
            for c in range(d):
                values[j, c] = log(theta[j, c] / total)
    return out


cdef enum:
    # categories per tile of ``_transposed``: a tile's columns of the table (TILE x K doubles)
    # stay in cache while each component's TILE values are written to them
    TILE = 64


def _transposed(const double[:, ::1] log_phi, const int64_t[::1] order, int threads):
    """(d, m) array: column k is row ``order[k]`` of ``log_phi`` (K, d), for the m rows of
    ``order``. Tile by tile of categories, on ``threads`` threads: a plain transposed copy
    strides through memory and takes several times as long."""
    cdef Py_ssize_t d = log_phi.shape[1], m = order.shape[0], tile, c, k, end
    out = np.empty((d, m))
    cdef double[:, ::1] table = out
    cdef const double* source
    if m == 0:
        return out
    with nogil:
        for tile in prange(0, d, TILE, schedule="static", num_threads=max(1, threads)):
            end = min(tile + TILE, d)
            for k in range(m):
                source = &log_phi[order[k], 0]
                for c in range(tile, end):
                    table[c, k] = source[c]
    return out


def slice_allocate(const int64_t[::1] indptr, const int64_t[::1] indices, const double[::1] data,
                   const double[:, ::1] log_phi, const double[::1] log_weight,
                   const double[::1] log_slice, const double[::1] uniform, int64_t[::1] z,
                   bint weighted=False, int n_jobs=1):
    """Draw the component ``z[i]`` of every row of a CSR matrix (indptr, indices, data).

    ``log_phi`` (K, d): log component probabilities (finite); ``log_weight`` (K,): log stick
    weights; ``log_slice`` (n,): log slice variables, candidates being the j with
    ``log_weight[j] >= log_slice[i]``; ``uniform`` (n,) in [0, 1); ``weighted``: multiply the
    likelihoods by the weights (module docstring). Writes ``z`` (n,) and returns
    how many rows had no candidate (their z is -1). ``n_jobs``: OpenMP threads over rows, at
    most one per row. Works on a copy of log phi transposed, components by decreasing weight
    (d x K doubles, and the same in floats), of the components that are a candidate for some
    row only: the others' rows of log phi are never read. MemoryError if the scratch space (K
    doubles, floats, indices and bits per thread) cannot be had.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1, K = log_phi.shape[0], i
    cdef Py_ssize_t missing = 0, threads = max(1, min(n_jobs, n))
    cdef const int64_t[::1] order
    cdef const int64_t[::1] rank
    cdef const int64_t[::1] last_label
    cdef const double[::1] sorted_log_weight
    cdef const double[:, ::1] table
    cdef const double[:, ::1] phi
    cdef const double[::1] sorted_weight
    cdef uint64_t[:, ::1] marks
    cdef unsigned int control
    cdef double[:, ::1] scratch = _scratch(threads, K, "slice_allocate")
    cdef float[:, ::1] approx = _scratch(threads, K, "slice_allocate", np.float32)
    cdef int64_t[:, ::1] kept = _scratch(threads, K, "slice_allocate", np.int64)
    cdef const float[:, ::1] table32
    cdef bint screen
    marks = np.zeros((threads, max(1, (K + 63) // 64)), dtype=np.uint64)
    by_weight = np.argsort(-np.asarray(log_weight), kind="stable")
    order = by_weight
    rank = np.argsort(by_weight)
    last_label = np.maximum.accumulate(by_weight)
    sorted_log_weight = np.asarray(log_weight)[by_weight]
    lowest = np.min(log_slice, initial=np.inf)
    used = int(np.count_nonzero(np.asarray(sorted_log_weight) >= lowest))
    table = _transposed(log_phi, by_weight[:used], threads)
    table32 = np.asarray(table, dtype=np.float32)
    # the float sums' error bound holds where every term has the sign of the sum
    screen = (np.max(table, initial=0.0) <= 0.0
              and (not weighted or np.max(sorted_log_weight[:used], initial=0.0) <= 0.0))
    phi = np.exp(table)
    sorted_weight = np.exp(sorted_log_weight)
    with nogil, parallel(num_threads=threads):
        # subnormal products are of candidates below the product draw's cutoff, 0 anyway;
        # flushed, they do not cost the slow arithmetic of subnormals
        control = SIMPLEXSG_FLUSH_SUBNORMALS()
        for i in prange(n, schedule="static"):
            z[i] = _allocate_row(indptr, indices, data, i, table, table32, screen, log_phi,
                                 phi, order, rank, last_label, sorted_log_weight, sorted_weight,
                                 log_slice[i], uniform[i], weighted, &scratch[threadid(), 0],
                                 &approx[threadid(), 0], &kept[threadid(), 0],
                                 &marks[threadid(), 0])
        SIMPLEXSG_RESTORE_SUBNORMALS(control)
    for i in range(n):
        if z[i] < 0:
            missing += 1
    return missing


def mixture_log_likelihood(const int64_t[::1] indptr, const int64_t[::1] indices,
                           const double[::1] data, const double[:, ::1] log_phi,
                           const double[::1] log_weight, double[::1] out, int n_jobs=1):
    """Each row's ``log sum_j w_j prod_c phi_jc^x_ic`` over the K components into ``out``
    (n,), for the rows of a CSR matrix (indptr, indices, data): the sums of a weighted
    allocation with every component a candidate (``_candidate_sums``), then their log-sum-exp
    from the best, the terms more than 64 nats below it (``UNDERFLOW``) left out as below the
    rounding of the total. ``log_phi`` (K, d) finite; ``log_weight`` (K,), -inf allowed.
    ``n_jobs``: OpenMP threads over rows; each row's value is the same whatever their number.
    MemoryError if the scratch space (K doubles per thread) cannot be had."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, K = log_phi.shape[0], i, m
    cdef Py_ssize_t threads = max(1, min(n_jobs, n))
    cdef double top, total
    cdef double* loglik
    if out.shape[0] != n or log_weight.shape[0] != K:
        raise ValueError(f"mixture_log_likelihood: {out.shape[0]} outputs for {n} rows, "
                         f"{log_weight.shape[0]} weights for {K} components")
    cdef double[:, ::1] scratch = _scratch(threads, K, "mixture_log_likelihood")
    cdef const double[:, ::1] table = _transposed(log_phi, np.arange(K, dtype=np.int64), threads)
    with nogil, parallel(num_threads=threads):
        loglik = &scratch[threadid(), 0]
        for i in prange(n, schedule="static"):
            _candidate_sums(indptr, indices, data, i, table, K, log_weight, True, loglik)
            top = -INFINITY
            for m in range(K):
                top = max(top, loglik[m])
            total = 0.0
            if top > -INFINITY:
                for m in range(K):
                    if loglik[m] - top > UNDERFLOW:
                        total = total + exp(loglik[m] - top)
            out[i] = top + log(total) if top > -INFINITY else -INFINITY


def summed_by_component(const int64_t[::1] indptr, const int64_t[::1] indices,
                        const double[::1] data, const int64_t[::1] z, Py_ssize_t n_components,
                        Py_ssize_t n_features):
    """Dense (n_components, n_features) sums of the rows of a CSR matrix (indptr, indices,
    data) by their components z (n,): row i's counts added to row ``z[i]``. One pass over
    the stored counts; integer-valued float64 sums, exact in any order. ValueError if a
    component is outside [0, n_components) or a column outside [0, n_features) (checked in
    the pass, before each write)."""
    cdef Py_ssize_t i, p, n = indptr.shape[0] - 1
    cdef int64_t j, c
    cdef int bad = 0                    # 1: a component out of range, 2: a column
    out = np.zeros((n_components, n_features))
    cdef double[:, ::1] summed = out
    with nogil:
        for i in range(n):
            j = z[i]
            if j < 0 or j >= n_components:
                bad = 1
                break
            for p in range(indptr[i], indptr[i + 1]):
                c = indices[p]
                if c < 0 or c >= n_features:
                    bad = 2
                    break
                summed[j, c] += data[p]
            if bad:
                break
    if bad == 1:
        raise ValueError(f"summed_by_component: components outside [0, {n_components})")
    if bad == 2:
        raise ValueError(f"summed_by_component: columns outside [0, {n_features})")
    return out
