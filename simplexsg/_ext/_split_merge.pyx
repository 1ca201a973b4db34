"""Kernels of the split-merge moves of the DP mixture (``simplexsg.dpmixture.split_merge``).

``sequential_allocation`` is the proposal of a split: a block's rows split in two, one row at a
time, by the Dirichlet-multinomial predictive, returning each side's log marginal;
``restricted_scans`` refine such a split by restricted Gibbs scans. ``summed_log_marginal``
scores a block from its summed counts and ``merged_log_marginal_gain`` the merge of two blocks;
``summed_rows`` sums a block's rows.
"""
import numpy as np

from libc.math cimport INFINITY, NAN, exp, fabs, isnan, lgamma, log, log1p
from libc.stdint cimport int64_t
from libc.stdlib cimport calloc, free, realloc

cdef extern from *:
    """
    #define SIMPLEXSG_PREFETCH(p) __builtin_prefetch((const void*) (p))
    """
    void SIMPLEXSG_PREFETCH(const void* p) noexcept nogil

cdef enum:
    # rows ahead of the one a split-merge pass is at whose place in indptr, and then whose
    # counts, it starts loading (``_prefetch_ahead``)
    INDPTR_AHEAD = 16
    ROW_AHEAD = 8


cdef struct _Rising:
    # values[c] = lgamma(c + offset) - lgamma(offset), the log rising factorial of offset with
    # c steps, for c < size: counts' predictives as differences of two entries
    double* values
    Py_ssize_t size
    double offset


cdef bint _reach(_Rising* table, Py_ssize_t c) noexcept nogil:
    """Extend ``table`` to hold entry c (doubling; one log an entry); False if out of memory."""
    cdef Py_ssize_t k, size = max(2 * table.size, c + 1)
    cdef double* values = <double*> realloc(table.values, size * sizeof(double))
    if values == NULL:
        return False
    for k in range(table.size, size):
        values[k] = values[k - 1] + log(k - 1 + table.offset)
    table.values, table.size = values, size
    return True


cdef double _log_predictive(const int64_t[::1] indptr, const int64_t[::1] indices,
                            const double[::1] data, Py_ssize_t i, const double* counts,
                            _Rising* rising, double log_norm, double log_norm_after) noexcept nogil:
    """log p(x_i | the rows already in a block) under Dirichlet(base) components, without the
    multinomial coefficient, from the block's summed counts ``counts`` (d,): each category's
    rising factorial (from ``rising``, offset base) less the total's, ``log_norm_after -
    log_norm`` = lgamma(total + x_i's total + d base) - lgamma(total + d base). NaN if the
    table cannot grow."""
    cdef Py_ssize_t p, before, after
    cdef double result = log_norm - log_norm_after
    cdef const double* values = rising.values       # in registers, not reread from *rising
    cdef Py_ssize_t size = rising.size
    for p in range(indptr[i], indptr[i + 1]):
        before = <Py_ssize_t> counts[indices[p]]
        after = before + <Py_ssize_t> data[p]
        if after >= size:
            if not _reach(rising, after):
                return NAN
            values, size = rising.values, rising.size
        result = result + values[after] - values[before]
    return result


cdef double _row_total(const int64_t[::1] indptr, const double[::1] data,
                       Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t p
    cdef double total = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        total = total + data[p]
    return total


cdef void _add_row(const int64_t[::1] indptr, const int64_t[::1] indices, const double[::1] data,
                   Py_ssize_t i, double* counts) noexcept nogil:
    cdef Py_ssize_t p
    for p in range(indptr[i], indptr[i + 1]):
        counts[indices[p]] += data[p]


cdef inline void _prefetch_ahead(const int64_t[::1] indptr, const int64_t[::1] indices,
                                 const double[::1] data, const int64_t[::1] rows,
                                 Py_ssize_t r) noexcept nogil:
    """Start loading the place in indptr of the row INDPTR_AHEAD after ``rows[r]``, and the
    counts of the row ROW_AHEAD after it: a pass visits a block's rows in a random order, each
    a cache miss otherwise. A hint only."""
    cdef Py_ssize_t n = rows.shape[0]
    if r + INDPTR_AHEAD < n:
        SIMPLEXSG_PREFETCH(&indptr[rows[r + INDPTR_AHEAD]])
    if r + ROW_AHEAD < n:
        SIMPLEXSG_PREFETCH(&indices[indptr[rows[r + ROW_AHEAD]]])
        SIMPLEXSG_PREFETCH(&data[indptr[rows[r + ROW_AHEAD]]])


cdef inline double _side(double log_q, double difference, double uniform, bint draw,
                         signed char* side) noexcept nogil:
    """``log_q`` plus log P(``side[0]``), the probability of a row's side when P(side 1) =
    1 / (1 + exp(difference)): log P(side 1) = -softplus(difference), log P(side 0) =
    -softplus(-difference), no log(0). ``draw``: first draw the side, 1 when ``uniform`` is
    below P(side 1)."""
    cdef double odds = exp(-fabs(difference))               # the smaller side's odds
    if draw:
        side[0] = uniform < (odds if difference > 0.0 else 1.0) / (1.0 + odds)
    return log_q - log1p(odds) - (max(difference, 0.0) if side[0] else max(-difference, 0.0))


def sequential_allocation(const int64_t[::1] indptr, const int64_t[::1] indices,
                          const double[::1] data, Py_ssize_t n_features, Py_ssize_t anchor0,
                          Py_ssize_t anchor1, const int64_t[::1] rows, const double[::1] uniform,
                          signed char[::1] side, bint forced, double base,
                          double[::1] marginals, double stop_below=-INFINITY):
    """Sequentially allocated split of a block (Dahl 2003): returns log q, the log probability
    of the sides.

    The two new blocks start as ``{anchor0}`` and ``{anchor1}``; each row of ``rows`` in turn
    joins side 1 with probability ``n1 p(x | block 1) / (n0 p(x | block 0) + n1 p(x | block 1))``
    (n: rows in the block so far; p: the Dirichlet(base)-multinomial predictive given the block's
    rows so far), else side 0. ``forced`` False: the side is ``uniform[r] < P(side 1)`` and is
    written to ``side[r]``; True: ``side`` is read, not drawn (the probability of a given split,
    for the reverse of a merge). Rows are CSR (indptr, indices, data) of non-negative integer
    counts with ``n_features`` columns (the predictives read tables of log rising factorials
    at integer counts). ``marginals`` (2,) receives each side's log Dirichlet-multinomial
    marginal without the multinomial coefficient: the product of the predictives of its rows
    in the order they joined (the chain rule), so no second pass over them.

    ``stop_below`` (``forced`` only): log q only falls as rows join, so the pass ends as soon as
    it is below this and returns the value reached, with ``marginals`` partial: a merge
    rejected whatever the rest of q is costs the rows it took to show it. ValueError if
    ``uniform`` or ``side`` do not match ``rows``.
    """
    cdef Py_ssize_t r, s, n = rows.shape[0]
    if uniform.shape[0] != n or side.shape[0] != n:
        raise ValueError(f"sequential_allocation: uniform and side must have the {n} entries "
                         "of rows")
    cdef double sizes[2]
    cdef double log_sizes[2]
    cdef double totals[2]
    cdef double log_norm[2]             # lgamma(total + d base) of each side
    cdef double log_norm_after[2]       # the same with the row joined
    cdef double predictive[2]
    cdef double row_total, difference, log_q = 0.0, dim_base = n_features * base
    cdef double* counts = <double*> calloc(2 * max(n_features, 1), sizeof(double))
    cdef _Rising rising = _Rising(<double*> calloc(1, sizeof(double)), 1, base)
    cdef bint out_of_memory = False
    if counts == NULL or rising.values == NULL:
        free(counts)
        free(rising.values)
        raise MemoryError(f"sequential_allocation: no memory for 2 x {n_features} counts")
    sizes[0] = sizes[1] = 1.0
    log_sizes[0] = log_sizes[1] = 0.0
    with nogil:
        for s in range(2):
            r = anchor1 if s else anchor0
            totals[s] = _row_total(indptr, data, r)
            log_norm[s] = lgamma(totals[s] + dim_base)
            marginals[s] = _log_predictive(indptr, indices, data, r, counts, &rising,
                                           lgamma(dim_base), log_norm[s])
        _add_row(indptr, indices, data, anchor0, counts)
        _add_row(indptr, indices, data, anchor1, counts + n_features)
        for r in range(n):
            _prefetch_ahead(indptr, indices, data, rows, r)
            row_total = _row_total(indptr, data, rows[r])
            for s in range(2):
                log_norm_after[s] = lgamma(totals[s] + row_total + dim_base)
                predictive[s] = _log_predictive(indptr, indices, data, rows[r],
                                                counts + s * n_features, &rising, log_norm[s],
                                                log_norm_after[s])
            if isnan(predictive[0]) or isnan(predictive[1]):
                out_of_memory = True
                break
            difference = log_sizes[0] + predictive[0] - log_sizes[1] - predictive[1]
            log_q = _side(log_q, difference, uniform[r], not forced, &side[r])
            s = side[r]
            marginals[s] += predictive[s]
            sizes[s] += 1.0
            log_sizes[s] = log(sizes[s])
            totals[s] += row_total
            log_norm[s] = log_norm_after[s]
            _add_row(indptr, indices, data, rows[r], counts + s * n_features)
            if forced and log_q < stop_below:
                break
    free(counts)
    free(rising.values)
    if out_of_memory or isnan(marginals[0]) or isnan(marginals[1]):
        raise MemoryError("sequential_allocation: no memory for the table of log rising "
                          "factorials")
    return log_q


cdef void _remove_row(const int64_t[::1] indptr, const int64_t[::1] indices,
                      const double[::1] data, Py_ssize_t i, double* counts) noexcept nogil:
    cdef Py_ssize_t p
    for p in range(indptr[i], indptr[i + 1]):
        counts[indices[p]] -= data[p]


def restricted_scans(const int64_t[::1] indptr, const int64_t[::1] indices,
                     const double[::1] data, Py_ssize_t n_features, Py_ssize_t anchor0,
                     Py_ssize_t anchor1, const int64_t[::1] rows, const double[:, ::1] uniform,
                     signed char[::1] side, const signed char[::1] target, bint forced,
                     double base, double[::1] marginals, double stop_below=-INFINITY):
    """Restricted Gibbs scans of a split (Jain & Neal 2004): returns log q, the log
    probability of the last scan's outcome given the state before it.

    The rows of ``rows`` start on the sides ``side`` (the launch state), ``anchor0`` on side 0
    and ``anchor1`` on side 1 throughout. Each of ``uniform.shape[0]`` scans visits the rows in
    order and draws each row's side from its conditional given every other row of the two
    sides, ``∝ n_s p(x | side s without the row)`` (n_s: the side's other rows; p: the
    Dirichlet(base)-multinomial predictive), side 1 when ``uniform[scan, r]`` is below its
    probability. ``forced``: the last scan's sides are ``target``'s, read, not drawn (the
    probability of a given split from the launch state, for the reverse of a merge), and the
    scan ends as soon as log q is below ``stop_below``. ``side`` receives the final sides;
    ``marginals`` (2,) each side's log Dirichlet-multinomial marginal without the multinomial
    coefficient (NaN after an early end). ValueError if ``side``, ``uniform``'s rows or a
    forced ``target`` do not match ``rows``.
    """
    cdef Py_ssize_t r, s, t, row, c, n = rows.shape[0], n_scans = uniform.shape[0]
    if side.shape[0] != n or uniform.shape[1] != n or forced and target.shape[0] != n:
        raise ValueError(f"restricted_scans: side, uniform and target must have the {n} "
                         "entries of rows")
    cdef double sizes[2]
    cdef double totals[2]
    cdef double log_norm[2]             # lgamma(total + d base) of each side
    cdef double log_norm_after[2]       # the same with the row joined
    cdef double predictive[2]
    cdef double row_total, difference, updated, log_q = 0.0, dim_base = n_features * base
    cdef double* counts = <double*> calloc(2 * max(n_features, 1), sizeof(double))
    cdef _Rising rising = _Rising(<double*> calloc(1, sizeof(double)), 1, base)
    cdef bint out_of_memory = False, stopped = False, last
    cdef signed char chosen
    if counts == NULL or rising.values == NULL:
        free(counts)
        free(rising.values)
        raise MemoryError(f"restricted_scans: no memory for 2 x {n_features} counts")
    with nogil:
        sizes[0] = sizes[1] = 1.0
        totals[0] = _row_total(indptr, data, anchor0)
        totals[1] = _row_total(indptr, data, anchor1)
        _add_row(indptr, indices, data, anchor0, counts)
        _add_row(indptr, indices, data, anchor1, counts + n_features)
        for r in range(n):
            s = side[r]
            _add_row(indptr, indices, data, rows[r], counts + s * n_features)
            sizes[s] += 1.0
            totals[s] += _row_total(indptr, data, rows[r])
        for s in range(2):
            log_norm[s] = lgamma(totals[s] + dim_base)
        for t in range(n_scans):
            last = t == n_scans - 1
            for r in range(n):
                _prefetch_ahead(indptr, indices, data, rows, r)
                row = rows[r]
                row_total = _row_total(indptr, data, row)
                s = side[r]
                _remove_row(indptr, indices, data, row, counts + s * n_features)
                sizes[s] -= 1.0
                totals[s] -= row_total
                # the row's side had its total with the row: one lgamma a side, not two
                log_norm_after[s] = log_norm[s]
                log_norm[s] = lgamma(totals[s] + dim_base)
                log_norm_after[1 - s] = lgamma(totals[1 - s] + row_total + dim_base)
                for s in range(2):
                    predictive[s] = _log_predictive(
                        indptr, indices, data, row, counts + s * n_features, &rising,
                        log_norm[s], log_norm_after[s])
                if isnan(predictive[0]) or isnan(predictive[1]):
                    out_of_memory = True
                    break
                difference = log(sizes[0]) + predictive[0] - log(sizes[1]) - predictive[1]
                chosen = target[r] if last and forced else 0      # else drawn
                updated = _side(log_q, difference, uniform[t, r], not (last and forced), &chosen)
                if last:
                    log_q = updated
                side[r] = chosen
                _add_row(indptr, indices, data, row, counts + chosen * n_features)
                sizes[chosen] += 1.0
                totals[chosen] += row_total
                log_norm[chosen] = log_norm_after[chosen]
                if last and forced and log_q < stop_below:
                    stopped = True
                    break
            if out_of_memory or stopped:
                break
        for s in range(2):
            marginals[s] = NAN if stopped else lgamma(dim_base) - lgamma(totals[s] + dim_base)
            if stopped or out_of_memory:
                continue
            for c in range(n_features):
                if counts[s * n_features + c] > 0.0:
                    if <Py_ssize_t> counts[s * n_features + c] >= rising.size:
                        if not _reach(&rising, <Py_ssize_t> counts[s * n_features + c]):
                            out_of_memory = True
                            break
                    marginals[s] += rising.values[<Py_ssize_t> counts[s * n_features + c]]
    free(counts)
    free(rising.values)
    if out_of_memory:
        raise MemoryError("restricted_scans: no memory for the table of log rising factorials")
    return log_q


def summed_log_marginal(const double[::1] counts, Py_ssize_t n_features, double base):
    """log DirMult(summed counts | Dirichlet(base)) without the multinomial coefficient,
    ``lgamma(d base) - lgamma(d base + n) + sum_c [lgamma(base + s_c) - lgamma(base)]``, of a
    block given its summed counts ``counts`` at the categories it holds (the others add 0): its
    marginal in O(categories), without a pass over its rows."""
    cdef Py_ssize_t c
    cdef double total = 0.0, result = 0.0, log_gamma_base = lgamma(base)
    with nogil:
        for c in range(counts.shape[0]):
            total = total + counts[c]
            if counts[c] > 0.0:
                result = result + lgamma(base + counts[c]) - log_gamma_base
    return result + lgamma(n_features * base) - lgamma(n_features * base + total)


def merged_log_marginal_gain(const int64_t[::1] index_a, const double[::1] count_a,
                             const int64_t[::1] index_b, const double[::1] count_b,
                             Py_ssize_t n_features, double base, const double[::1] rising):
    """``summed_log_marginal`` of the union of two blocks less those of each block alone, given
    each block's summed counts as a sparse vector with sorted category ids (``index_a``,
    ``count_a``; both blocks non-empty): a merge's change of log marginal. A category
    present in one block only cancels, so only the shared ones count: O(categories)
    comparisons and a lookup per shared category, ``rising[c]`` = ``lgamma(base + c) -
    lgamma(base)`` for the counts c below its size (``lgamma`` above)::

        sum_{c shared} [R(a_c + b_c) - R(a_c) - R(b_c)]
            + lgamma(d base + n_a) + lgamma(d base + n_b) - lgamma(d base + n_a + n_b)
            - lgamma(d base)
    """
    cdef Py_ssize_t a, b, n_a = index_a.shape[0], n_b = index_b.shape[0]
    cdef double total_a = 0.0, total_b = 0.0, result = 0.0, prior = n_features * base
    cdef int64_t category_a, category_b
    with nogil:
        for a in range(n_a):
            total_a = total_a + count_a[a]
        for b in range(n_b):
            total_b = total_b + count_b[b]
        a = b = 0
        while a < n_a and b < n_b:          # the smaller id moves on, both if equal
            category_a, category_b = index_a[a], index_b[b]
            if category_a == category_b:
                result = result + (_rising_factorial(rising, base, count_a[a] + count_b[b])
                                   - _rising_factorial(rising, base, count_a[a])
                                   - _rising_factorial(rising, base, count_b[b]))
            a += category_a <= category_b
            b += category_b <= category_a
    return (result + lgamma(prior + total_a) + lgamma(prior + total_b)
            - lgamma(prior + total_a + total_b) - lgamma(prior))


cdef inline double _rising_factorial(const double[::1] rising, double base,
                                     double count) noexcept nogil:
    """lgamma(base + count) - lgamma(base), from the table ``rising`` where it holds it."""
    if count < rising.shape[0]:
        return rising[<Py_ssize_t> count]
    return lgamma(base + count) - lgamma(base)


def summed_rows(const int64_t[::1] indptr, const int64_t[::1] indices, const double[::1] data,
                const int64_t[::1] rows, Py_ssize_t n_features):
    """Dense (n_features,) sum of the rows ``rows`` of a CSR matrix (indptr, indices, data),
    columns assumed in [0, n_features): a block's summed counts, in one pass over its
    stored counts."""
    out = np.zeros(n_features)
    cdef double[::1] summed = out
    cdef Py_ssize_t r
    with nogil:
        for r in range(rows.shape[0]):
            _add_row(indptr, indices, data, rows[r], &summed[0])
    return out
