"""Kernels of the split-merge moves of the DP mixture (``simplexsg.dpmixture.split_merge``).

``sequential_allocation`` is the proposal of a split: a block's rows split in two, one row at a
time, by the Dirichlet-multinomial predictive, returning each side's log marginal;
``restricted_scans`` refine such a split by restricted Gibbs scans. ``ComponentScreen`` keeps
each component's summed counts and log marginal, scores merges from them and draws the
proposals; ``log_labelled_prior_change`` and ``log_split_pair_ratio`` are the acceptance's
prior and proposal terms; ``label_counts`` is what the proposals read of the rows per label;
``shift_labels_in_place`` makes the label shifts of ``simplexsg.dpmixture.label_shift``.
"""
import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport INFINITY, NAN, exp, fabs, isnan, lgamma, log, log1p
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy
from cython.parallel cimport parallel, prange, threadid
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_bounded_uint64, random_standard_uniform

from ._xoshiro cimport xoshiro_bitgen, xoshiro_seed

cdef extern from *:
    """
    #define SIMPLEXSG_PREFETCH(p) __builtin_prefetch((const void*) (p))
    """
    void SIMPLEXSG_PREFETCH(const void* p) noexcept nogil

_EMPTY = np.empty(0)                    # no table: every value from libm


cdef extern from *:
    """
    /* the screen's bound on a merge's log ratio stands in for it only where it falls below
       the uniform by this much of the terms' size: past the rounding of either sum */
    #define SIMPLEXSG_SCREEN_MARGIN 1e-9
    """
    double SCREEN_MARGIN "SIMPLEXSG_SCREEN_MARGIN"

cdef enum:
    # a merge's gain seeks each category of the block of fewer among the other's (galloping)
    # instead of walking both, where the other holds this many times more (``_merged_gain``)
    SPARSE_MERGE_RATIO = 8
    # rows ahead of the one a split-merge pass is at whose place in indptr, and then whose
    # counts, it starts loading (``_prefetch_ahead``). A shuffled pass draws its order's
    # positions INDPTR_AHEAD rows ahead on the stream its sides' uniforms come from, so this
    # one is part of the draws: another value makes other moves
    INDPTR_AHEAD = 16
    ROW_AHEAD = 8
    # 8-byte entries of a 64-byte cache line: the prefetch of a row's counts touches each line
    LINE_ENTRIES = 8
    # a pass's table of log rising factorials grows to at most this many entries (8 MB, as
    # ``split_merge.PASS_TABLE``'s shared one); counts past it read lgamma, so that counts of
    # millions in a category cost neither a table of their size nor a log an entry
    RISING_GROWS_TO = 1 << 20


cdef struct _Rising:
    # values[c] = lgamma(c + offset) - lgamma(offset), the log rising factorial of offset with
    # c steps, for c < size, as the running sum of log(k + offset): counts' predictives as
    # differences of two entries. owned: values is the pass's own allocation; else it is a
    # shared table (``pass_tables``), read only, copied before it grows
    double* values
    Py_ssize_t size
    double offset
    bint owned


cdef bint _reach(_Rising* table, Py_ssize_t c) noexcept nogil:
    """Extend ``table`` to hold entry c (doubling; one log an entry); False if out of memory."""
    cdef Py_ssize_t k, size = max(2 * table.size, c + 1)
    cdef double* values
    if table.owned:
        values = <double*> realloc(table.values, size * sizeof(double))
    else:
        values = <double*> malloc(size * sizeof(double))
        if values != NULL:
            memcpy(values, table.values, table.size * sizeof(double))
    if values == NULL:
        return False
    for k in range(table.size, size):
        values[k] = values[k - 1] + log(k - 1 + table.offset)
    table.values, table.size, table.owned = values, size, True
    return True


cdef inline double _rise(const _Rising* table, Py_ssize_t before, Py_ssize_t after) noexcept nogil:
    """log rising factorial of the table's offset from ``before`` to ``after`` steps: the
    difference of its two entries where it holds them, of two lgamma past it."""
    if after < table.size:
        return table.values[after] - table.values[before]
    return lgamma(table.offset + after) - lgamma(table.offset + before)


cdef _Rising _new_rising(tables, double base):
    """A pass's table of log rising factorials of ``base``: the shared one of its ``tables``
    (``pass_tables``, checked to be that of ``base``), else a table of entry 0 alone, its
    own; values NULL if out of memory."""
    cdef const double[::1] shared = _EMPTY if tables is None else tables[2]
    if shared.shape[0] > 1 and shared[1] != log(base):
        raise ValueError(f"the pass's tables are not those of base ({base}): "
                         "pass_tables(..., base=base)")
    if shared.shape[0]:
        return _Rising(<double*> &shared[0], shared.shape[0], base, False)
    return _Rising(<double*> calloc(1, sizeof(double)), 1, base, True)


cdef inline void _free_rising(_Rising* table) noexcept nogil:
    if table.owned:
        free(table.values)


cdef bint _log_predictives(const int64_t[::1] indptr, const int64_t[::1] indices,
                           const double[::1] data, Py_ssize_t i, const double* counts0,
                           const double* counts1, _Rising* rising, const double* log_norm,
                           const double* log_norm_after, double* predictive) noexcept nogil:
    """``predictive[s]`` = log p(x_i | the rows already in block s), s = 0, 1, under
    Dirichlet(base) components, without the multinomial coefficient, from the blocks' summed
    counts ``counts0`` and ``counts1`` (d,): each category's rising factorial (from
    ``rising``, offset base) less the total's, ``log_norm_after[s] - log_norm[s]`` =
    lgamma(total + x_i's total + d base) - lgamma(total + d base). The two sides' sums run in
    one loop over the row, each in the row's order: two independent chains of additions,
    not one after the other. False if the table cannot grow."""
    cdef Py_ssize_t p, c, x, before0, after0, before1, after1
    cdef double result0 = log_norm[0] - log_norm_after[0]
    cdef double result1 = log_norm[1] - log_norm_after[1]
    cdef const double* values = rising.values       # in registers, not reread from *rising
    cdef Py_ssize_t size = rising.size
    for p in range(indptr[i], indptr[i + 1]):
        c, x = indices[p], <Py_ssize_t> data[p]
        before0, before1 = <Py_ssize_t> counts0[c], <Py_ssize_t> counts1[c]
        after0, after1 = before0 + x, before1 + x
        if after0 >= size or after1 >= size:
            if max(after0, after1) >= RISING_GROWS_TO:     # past any table: lgamma
                result0 = result0 + _rise(rising, before0, after0)
                result1 = result1 + _rise(rising, before1, after1)
                continue
            if not _reach(rising, max(after0, after1)):
                return False
            values, size = rising.values, rising.size
        result0 = result0 + values[after0] - values[before0]
        result1 = result1 + values[after1] - values[before1]
    predictive[0], predictive[1] = result0, result1
    return True


cdef double _merged_predictive(const int64_t[::1] indptr, const int64_t[::1] indices,
                              const double[::1] data, Py_ssize_t i, const double* counts0,
                              const double* counts1, _Rising* rising, double log_norm,
                              double log_norm_after) noexcept nogil:
    """log p(x_i | the rows of blocks 0 and 1 together), as ``_log_predictives`` for the
    block whose counts are ``counts0 + counts1`` and whose ``lgamma(total + d base)`` is
    ``log_norm`` (``log_norm_after`` with the row joined); NaN if the table cannot grow."""
    cdef Py_ssize_t p, c, before, after
    cdef double result = log_norm - log_norm_after
    for p in range(indptr[i], indptr[i + 1]):
        c = indices[p]
        before = <Py_ssize_t> (counts0[c] + counts1[c])
        after = before + <Py_ssize_t> data[p]
        if after >= rising.size and after < RISING_GROWS_TO and not _reach(rising, after):
            return NAN
        if after < rising.size:
            result = result + rising.values[after] - rising.values[before]
        else:                                               # past any table: lgamma
            result = result + _rise(rising, before, after)
    return result


cdef inline double _prefix_ratio(const double[::1] marginals, double merged_marginal,
                                 double log_q, const double* sizes) noexcept nogil:
    """A split's log ratio on the rows it has allocated: the sides' log marginals less the
    merged block's, less log q, plus the sides' lgamma(n) less the block's."""
    return (marginals[0] + marginals[1] - merged_marginal - log_q
            + lgamma(sizes[0]) + lgamma(sizes[1]) - lgamma(sizes[0] + sizes[1]))


cdef double _row_total(const int64_t[::1] indptr, const double[::1] data,
                       Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t p
    cdef double total = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        total = total + data[p]
    return total


def pass_tables(double dim_base, Py_ssize_t n_totals, Py_ssize_t n_sizes, double base=1.0,
                Py_ssize_t n_rising=0):
    """The tables a pass reads instead of calling libm once per row or building its own:
    (``lgamma(t + dim_base)`` for t in [0, n_totals), ``log(k)`` for k in [0, n_sizes), the
    log rising factorial of ``base`` at c in [0, n_rising)), computed by the same calls and the
    same running sum, so a pass gives the same values with or without them (``log(0)`` = -inf
    is never read). Without the third, each pass sums the log rising factorials it reads,
    up to its block's largest count of a category (``RISING_GROWS_TO`` at most, lgamma past
    it): thousands of logs a pass on long rows."""
    log_norms, log_sizes = np.empty(max(n_totals, 0)), np.empty(max(n_sizes, 0))
    log_rising = np.empty(max(n_rising, 0))
    cdef double[::1] norms = log_norms, sizes = log_sizes, rising = log_rising
    cdef Py_ssize_t k
    with nogil:
        for k in range(norms.shape[0]):
            norms[k] = lgamma(k + dim_base)
        for k in range(sizes.shape[0]):
            sizes[k] = log(<double> k)
        if rising.shape[0]:
            rising[0] = 0.0
        for k in range(1, rising.shape[0]):
            rising[k] = rising[k - 1] + log(k - 1 + base)
    return log_norms, log_sizes, log_rising


cdef _checked_norms(tables, double dim_base):
    """The table of lgamma of a pass's ``tables`` (``pass_tables``; None: none), checked to be
    that of its ``dim_base``: ValueError otherwise (a wrong table gives wrong values
    silently)."""
    if tables is None:
        return _EMPTY
    norms = tables[0]
    if norms.shape[0] and norms[0] != lgamma(dim_base):
        raise ValueError("the pass's tables are not those of n_features * base "
                         f"({dim_base}): pass_tables(n_features * base, ...)")
    return norms


cdef inline double _log_norm(const double[::1] table, double total, double dim_base) noexcept nogil:
    """lgamma(total + dim_base) of an integer ``total``, from ``table`` (``pass_tables``) where
    it holds it."""
    if total < table.shape[0]:
        return table[<Py_ssize_t> total]
    return lgamma(total + dim_base)


cdef inline double _log_size(const double[::1] table, double size) noexcept nogil:
    """log(size) of an integer ``size`` >= 1, from ``table`` where it holds it."""
    if size < table.shape[0]:
        return table[<Py_ssize_t> size]
    return log(size)


cdef void _add_row(const int64_t[::1] indptr, const int64_t[::1] indices, const double[::1] data,
                   Py_ssize_t i, double* counts) noexcept nogil:
    cdef Py_ssize_t p
    for p in range(indptr[i], indptr[i + 1]):
        counts[indices[p]] += data[p]


cdef inline void _prefetch_ahead(const int64_t[::1] indptr, const int64_t[::1] indices,
                                 const double[::1] data, const int64_t[::1] rows,
                                 Py_ssize_t r) noexcept nogil:
    """Start loading the place in indptr of the row INDPTR_AHEAD after ``rows[r]``, and the
    counts of the row ROW_AHEAD after it, a cache line's worth of entries apart (a row of 40
    counts spans 5 or 6 lines of indices and as many of data; its last line is left out when
    the row does not start on a line: loading it too was slower): a pass visits a block's rows
    in a random order, each a cache miss otherwise. A hint only."""
    cdef Py_ssize_t p, end, n = rows.shape[0]
    if r + INDPTR_AHEAD < n:
        SIMPLEXSG_PREFETCH(&indptr[rows[r + INDPTR_AHEAD]])
    if r + ROW_AHEAD < n:
        p, end = indptr[rows[r + ROW_AHEAD]], indptr[rows[r + ROW_AHEAD] + 1]
        while p < end:
            SIMPLEXSG_PREFETCH(&indices[p])
            SIMPLEXSG_PREFETCH(&data[p])
            p += LINE_ENTRIES


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


cdef inline void _draw_position(int64_t[::1] rows, signed char[::1] side, bint along,
                                Py_ssize_t t, bitgen_t* stream) noexcept nogil:
    """Fisher-Yates step t: swap ``rows[t]`` with a uniformly drawn one of ``rows[t:]`` (and
    ``side``'s entries with them when ``along``)."""
    cdef Py_ssize_t j = t + <Py_ssize_t> random_bounded_uint64(stream, 0, rows.shape[0] - 1 - t,
                                                               0, False)
    cdef int64_t row = rows[t]
    cdef signed char value
    rows[t], rows[j] = rows[j], row
    if along:
        value = side[t]
        side[t], side[j] = side[j], value


def sequential_allocation(const int64_t[::1] indptr, const int64_t[::1] indices,
                          const double[::1] data, Py_ssize_t n_features, Py_ssize_t anchor0,
                          Py_ssize_t anchor1, int64_t[::1] rows, const double[::1] uniform,
                          signed char[::1] side, bint forced, double base,
                          double[::1] marginals, double stop_below=-INFINITY, tables=None,
                          double check_counts=0.0, double[::1] check=None,
                          double check_below=-INFINITY, double check_rest=0.0,
                          order_seed=None):
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
    rejected whatever the rest of q is costs the rows it took to show it. ``tables``
    (``pass_tables(n_features * base, ..., base=base, ...)``, or None): the lgamma and log
    calls of a row, and the log rising factorials, read from tables, the same values, a
    cheaper pass.

    ``check_counts`` > 0 with ``check`` (1,): the first stage of a delayed acceptance
    (Christen & Fox 2005). Once the rows of ``rows`` that have joined hold ``check_counts``
    counts (the prefix), ``check[0]`` receives the move's log ratio on the prefix, the blocks
    the anchors and those rows make: for a split (``forced`` False) the sides' log marginals
    less the merged block's, less log q so far, plus ``lgamma(n0) + lgamma(n1) -
    lgamma(n0 + n1)`` of the sides' rows, plus that ratio's rate per count over the prefix's
    second half (its rows from ``check_counts / 2`` counts on) times ``check_rest`` counts
    (the prefix pays a split's whole cost in parameters, its rows only a share of the
    evidence); for a merge's reverse (``forced``), its negative. The
    pass ends there if ``check[0]`` is below ``check_below``, and a forced pass's
    ``stop_below`` applies from there on, raised by ``check[0]``, not before. ``check[0]`` is
    0 if the rows never hold ``check_counts`` counts, and ``stop_below`` then applies
    throughout.

    ``order_seed`` (a uint64, or None): the rows are visited in a uniformly random order
    instead of theirs, drawn as the pass goes (a Fisher-Yates shuffle of ``rows`` in place, a
    position at a time, ``side`` swapped along when ``forced``), and the sides drawn with
    uniforms, both from a xoshiro256** stream seeded by it; ``uniform`` is not read (None
    allowed). A pass that ends early then costs the rows it visited, not a permutation of the
    block and a uniform a row. On return ``rows`` (and a forced ``side``) hold the order of the
    rows visited first, the rest shuffled in part.

    ValueError if ``uniform`` (without ``order_seed``) or ``side`` do not match ``rows``,
    ``tables`` are those of another ``n_features * base``, or ``check_counts`` > 0 has no
    ``check``.
    """
    cdef Py_ssize_t r, s, n = rows.shape[0], decided = 0
    cdef bint shuffling = order_seed is not None
    if side.shape[0] != n or not shuffling and (uniform is None or uniform.shape[0] != n):
        raise ValueError(f"sequential_allocation: uniform and side must have the {n} entries "
                         "of rows")
    cdef uint64_t stream_state[4]
    cdef bitgen_t stream
    if shuffling:
        xoshiro_seed(stream_state, <uint64_t> order_seed)
        xoshiro_bitgen(&stream, stream_state)
    cdef bint checking = check_counts > 0.0, checked = False
    if checking and (check is None or check.shape[0] < 1):
        raise ValueError("sequential_allocation: check_counts > 0 needs check (1,)")
    cdef double sizes[2]
    cdef double log_sizes[2]
    cdef double totals[2]
    cdef double log_norm[2]             # lgamma(total + d base) of each side
    cdef double log_norm_after[2]       # the same with the row joined
    cdef double predictive[2]
    cdef double empty[2]                # an anchor's lgamma(d base) and with it joined
    cdef double joined[2]
    cdef double row_total, difference, log_q = 0.0, dim_base = n_features * base
    cdef double prefix_counts = 0.0, merged_marginal = 0.0, check_value = 0.0
    cdef double half_counts = 0.0, half_value = 0.0
    cdef bint halfway = False
    cdef const double[::1] norm_table = _checked_norms(tables, dim_base)
    cdef const double[::1] size_table = _EMPTY if tables is None else tables[1]
    cdef double* counts = <double*> calloc(2 * max(n_features, 1), sizeof(double))
    cdef _Rising rising = _new_rising(tables, base)
    cdef bint out_of_memory = False
    if counts == NULL or rising.values == NULL:
        free(counts)
        _free_rising(&rising)
        raise MemoryError(f"sequential_allocation: no memory for 2 x {n_features} counts")
    sizes[0] = sizes[1] = 1.0
    log_sizes[0] = log_sizes[1] = 0.0
    with nogil:
        for s in range(2):          # each anchor's predictive given no rows (side 0's)
            r = anchor1 if s else anchor0
            totals[s] = _row_total(indptr, data, r)
            log_norm[s] = lgamma(totals[s] + dim_base)
            empty[0] = empty[1] = lgamma(dim_base)
            joined[0] = joined[1] = log_norm[s]
            marginals[s] = (predictive[0] if _log_predictives(
                indptr, indices, data, r, counts, counts, &rising, empty, joined, predictive)
                else NAN)
        _add_row(indptr, indices, data, anchor0, counts)
        if checking:        # the merged block's marginal: anchor0's, then anchor1 given it
            merged_marginal = marginals[0] + _merged_predictive(
                indptr, indices, data, anchor1, counts, counts + n_features, &rising,
                log_norm[0], _log_norm(norm_table, totals[0] + totals[1], dim_base))
        _add_row(indptr, indices, data, anchor1, counts + n_features)
        for r in range(n):
            while shuffling and decided < n and decided <= r + INDPTR_AHEAD:
                _draw_position(rows, side, forced, decided, &stream)    # ahead: prefetched
                decided += 1
            _prefetch_ahead(indptr, indices, data, rows, r)
            row_total = _row_total(indptr, data, rows[r])
            for s in range(2):
                log_norm_after[s] = _log_norm(norm_table, totals[s] + row_total, dim_base)
            if not _log_predictives(indptr, indices, data, rows[r], counts,
                                    counts + n_features, &rising, log_norm, log_norm_after,
                                    predictive):
                out_of_memory = True
                break
            if checking and not checked:
                merged_marginal += _merged_predictive(
                    indptr, indices, data, rows[r], counts, counts + n_features, &rising,
                    _log_norm(norm_table, totals[0] + totals[1], dim_base),
                    _log_norm(norm_table, totals[0] + totals[1] + row_total, dim_base))
            difference = log_sizes[0] + predictive[0] - log_sizes[1] - predictive[1]
            log_q = _side(log_q, difference,
                          0.0 if forced else (random_standard_uniform(&stream) if shuffling
                                              else uniform[r]),
                          not forced, &side[r])
            s = side[r]
            marginals[s] += predictive[s]
            sizes[s] += 1.0
            log_sizes[s] = _log_size(size_table, sizes[s])
            totals[s] += row_total
            log_norm[s] = log_norm_after[s]
            _add_row(indptr, indices, data, rows[r], counts + s * n_features)
            if checking and not checked:
                prefix_counts += row_total
                if not halfway and prefix_counts >= check_counts / 2:
                    halfway = True
                    half_counts = prefix_counts
                    half_value = _prefix_ratio(marginals, merged_marginal, log_q, sizes)
                if prefix_counts >= check_counts:
                    checked = True
                    check_value = _prefix_ratio(marginals, merged_marginal, log_q, sizes)
                    if prefix_counts > half_counts:
                        check_value += ((check_value - half_value)
                                        / (prefix_counts - half_counts) * check_rest)
                    if forced:
                        check_value = -check_value
                    if check_value < check_below:
                        break
            if forced and (checked or not checking) and log_q < stop_below + check_value:
                break
    free(counts)
    _free_rising(&rising)
    if checking:
        check[0] = check_value
    if out_of_memory or isnan(marginals[0]) or isnan(marginals[1]) or isnan(merged_marginal):
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
                     double base, double[::1] marginals, double stop_below=-INFINITY,
                     tables=None):
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
    coefficient (NaN after an early end). ``tables``: as in ``sequential_allocation``.
    ValueError if ``side``, ``uniform``'s rows or a forced ``target`` do not match ``rows``.
    """
    cdef Py_ssize_t r, s, t, row, c, count, n = rows.shape[0], n_scans = uniform.shape[0]
    if side.shape[0] != n or uniform.shape[1] != n or forced and target.shape[0] != n:
        raise ValueError(f"restricted_scans: side, uniform and target must have the {n} "
                         "entries of rows")
    cdef double sizes[2]
    cdef double totals[2]
    cdef double log_norm[2]             # lgamma(total + d base) of each side
    cdef double log_norm_after[2]       # the same with the row joined
    cdef double predictive[2]
    cdef double row_total, difference, updated, log_q = 0.0, dim_base = n_features * base
    cdef const double[::1] norm_table = _checked_norms(tables, dim_base)
    cdef const double[::1] size_table = _EMPTY if tables is None else tables[1]
    cdef double* counts = <double*> calloc(2 * max(n_features, 1), sizeof(double))
    cdef _Rising rising = _new_rising(tables, base)
    cdef bint out_of_memory = False, stopped = False, last
    cdef signed char chosen
    if counts == NULL or rising.values == NULL:
        free(counts)
        _free_rising(&rising)
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
                log_norm[s] = _log_norm(norm_table, totals[s], dim_base)
                log_norm_after[1 - s] = _log_norm(norm_table, totals[1 - s] + row_total,
                                                  dim_base)
                if not _log_predictives(indptr, indices, data, row, counts,
                                        counts + n_features, &rising, log_norm,
                                        log_norm_after, predictive):
                    out_of_memory = True
                    break
                difference = (_log_size(size_table, sizes[0]) + predictive[0]
                              - _log_size(size_table, sizes[1]) - predictive[1])
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
                count = <Py_ssize_t> counts[s * n_features + c]
                if count > 0:
                    if rising.size <= count < RISING_GROWS_TO and not _reach(&rising, count):
                        out_of_memory = True
                        break
                    marginals[s] += _rise(&rising, 0, count)
    free(counts)
    _free_rising(&rising)
    if out_of_memory:
        raise MemoryError("restricted_scans: no memory for the table of log rising factorials")
    return log_q



# ---------------------------------------------------------------- components and the screen

cdef inline double _rising_factorial(const double[::1] rising, double base,
                                     double count) noexcept nogil:
    """lgamma(base + count) - lgamma(base), from the table ``rising`` where it holds it."""
    if count < rising.shape[0]:
        return rising[<Py_ssize_t> count]
    return lgamma(base + count) - lgamma(base)


cdef double _summed_log_marginal(const double* counts, Py_ssize_t size, Py_ssize_t n_features,
                                 double base, const double[::1] rising) noexcept nogil:
    """log DirMult(summed counts | Dirichlet(base)) without the multinomial coefficient,
    ``lgamma(d base) - lgamma(d base + n) + sum_c [lgamma(base + s_c) - lgamma(base)]``, of a
    block given its summed counts at the ``size`` categories it holds (the others add 0): its
    marginal in O(categories), without a pass over its rows; each category's term read from
    ``rising`` where it holds it (``_rising_factorial``)."""
    cdef Py_ssize_t c
    cdef double total = 0.0, result = 0.0
    for c in range(size):
        total = total + counts[c]
        if counts[c] > 0.0:
            result = result + _rising_factorial(rising, base, counts[c])
    return result + lgamma(n_features * base) - lgamma(n_features * base + total)


cdef inline bint _delayed(double total, double rows, bint scanned, double delayed_total,
                          double delayed_row_total) noexcept nogil:
    """Whether a proposal on a block of ``rows`` rows holding ``total`` counts has a delayed
    acceptance: not scanned, at least ``delayed_total`` counts and ``delayed_row_total`` a
    row on average."""
    return not scanned and total >= delayed_total and total >= delayed_row_total * rows


def delayed_acceptance(double total, double rows, bint scanned, double delayed_total,
                       double delayed_row_total):
    """``_delayed``: the rule ``ComponentScreen.screen`` applies to merges, for the splits
    that ``simplexsg.dpmixture.split_merge`` draws."""
    return _delayed(total, rows, scanned, delayed_total, delayed_row_total)


cdef struct _Sums:
    # a component's summed counts at the categories it holds (ids sorted), its log marginal
    # and its total count; size -1: no component at the label
    int64_t* categories
    double* counts
    Py_ssize_t size
    double log_marginal
    double total


cdef double _merged_gain(const _Sums* a, const _Sums* b, Py_ssize_t n_features, double base,
                         const double[::1] rising) noexcept nogil:
    """``_summed_log_marginal`` of the union of two blocks less those of each block alone: a
    merge's change of log marginal. A category present in one block only cancels, so only the
    shared ones count: O(categories) comparisons and a lookup per shared category, ``rising[c]``
    = ``lgamma(base + c) - lgamma(base)`` for the counts c below its size (``lgamma`` above);
    where one block holds SPARSE_MERGE_RATIO times the other's categories, each of the
    smaller's is sought among the larger's by galloping search, O(m log(n / m)) (the shared
    ones in the same increasing order, so the same sum)::

        sum_{c shared} [R(a_c + b_c) - R(a_c) - R(b_c)]
            + lgamma(d base + n_a) + lgamma(d base + n_b) - lgamma(d base + n_a + n_b)
            - lgamma(d base)
    """
    cdef Py_ssize_t i = 0, j = 0, step, low, high
    cdef double result = 0.0, prior = n_features * base
    cdef int64_t category_a, category_b
    if a.size * SPARSE_MERGE_RATIO < b.size or b.size * SPARSE_MERGE_RATIO < a.size:
        if a.size > b.size:                     # a: the one of fewer categories
            a, b = b, a
        for i in range(a.size):                 # each of a's, sought among b's from j on
            category_a = a.categories[i]
            step = 1                            # galloping: b's ids at j + 1, 3, 7, ...
            while j + step <= b.size and b.categories[j + step - 1] < category_a:
                j += step
                step *= 2
            low, high = j, min(j + step - 1, b.size)    # then halving within the last step
            while low < high:
                if b.categories[(low + high) // 2] < category_a:
                    low = (low + high) // 2 + 1
                else:
                    high = (low + high) // 2
            j = low
            if j == b.size:
                break
            if b.categories[j] == category_a:
                result = result + (_rising_factorial(rising, base, a.counts[i] + b.counts[j])
                                   - _rising_factorial(rising, base, a.counts[i])
                                   - _rising_factorial(rising, base, b.counts[j]))
    else:
        while i < a.size and j < b.size:      # the smaller id moves on, both if equal
            category_a, category_b = a.categories[i], b.categories[j]
            if category_a == category_b:
                result = result + (_rising_factorial(rising, base, a.counts[i] + b.counts[j])
                                   - _rising_factorial(rising, base, a.counts[i])
                                   - _rising_factorial(rising, base, b.counts[j]))
            i += category_a <= category_b
            j += category_b <= category_a
    return (result + lgamma(prior + a.total) + lgamma(prior + b.total)
            - lgamma(prior + a.total + b.total) - lgamma(prior))


cdef inline double _log_prior_sizes(const int64_t[::1] occupancy, Py_ssize_t source,
                                    Py_ssize_t target, double moved) noexcept nogil:
    """``_log_prior_change``'s terms of the two labels' sizes."""
    cdef double n_source = occupancy[source]
    cdef double n_target = occupancy[target] if target < occupancy.shape[0] else 0.0
    return (lgamma(1.0 + n_source - moved) - lgamma(1.0 + n_source)
            + lgamma(1.0 + n_target + moved) - lgamma(1.0 + n_target))


cdef inline double _log_prior_between(const double[::1] rows_from, double alpha,
                                      Py_ssize_t source, Py_ssize_t target,
                                      double moved) noexcept nogil:
    """``_log_prior_change``'s sum over the labels between: log(1 + shift / (alpha + R_j))."""
    cdef Py_ssize_t j
    cdef double shift = -moved if source > target else moved, between = 0.0
    for j in range(min(source, target) + 1, max(source, target) + 1):   # R_j moves there
        between = between + log1p(shift / (alpha + rows_from[j]))
    return between


cdef inline double _log_prior_between_at_least(const double[::1] rows_from, double alpha,
                                               Py_ssize_t source, Py_ssize_t target,
                                               double moved) noexcept nogil:
    """A lower bound on ``_log_prior_between`` in O(1): each term is positive where the rows
    move up (0 bounds it), and at least the last label's where they move down (R_j, the rows
    from label j on, is smallest there, and at least ``moved``)."""
    if source < target:
        return 0.0
    return (source - target) * log1p(-moved / (alpha + rows_from[source]))


cdef double _log_prior_change(const int64_t[::1] occupancy, const double[::1] rows_from,
                              double alpha, Py_ssize_t source, Py_ssize_t target,
                              double moved) noexcept nogil:
    return (_log_prior_sizes(occupancy, source, target, moved)
            - _log_prior_between(rows_from, alpha, source, target, moved))


def label_counts(const int64_t[::1] occupancy):
    """What a proposal reads of the rows per label ``occupancy`` (at least one occupied), in
    one pass over the labels (``split_merge._Blocks``): (``rows_from`` (size + 1,), R_j the
    rows at labels j and after; J, one past the last occupied label; the number of occupied
    labels; the labels of at least two rows and the running total of their rows (int64); the
    rows those hold and the ordered pairs of distinct rows within a component, sum n_j (n_j -
    1) (floats); the labels a split may give its new block: the empty ones below J, and J)."""
    cdef Py_ssize_t n = occupancy.shape[0], j, J = 0, occupied = 0, splittable = 0, empty = 0
    cdef int64_t rows, split_rows = 0
    cdef double pairs = 0.0, after = 0.0
    rows_from_array = np.zeros(n + 1)
    labels_array = np.empty(n, dtype=np.int64)
    ends_array = np.empty(n, dtype=np.int64)
    choices_array = np.empty(n + 1, dtype=np.int64)
    cdef double[::1] rows_from = rows_from_array
    cdef int64_t[::1] labels = labels_array, ends = ends_array, choices = choices_array
    for j in range(n - 1, -1, -1):
        after = after + occupancy[j]
        rows_from[j] = after
    for j in range(n):
        rows = occupancy[j]
        if rows > 0:
            occupied += 1
            J = j + 1
        if rows >= 2:
            split_rows += rows
            labels[splittable], ends[splittable] = j, split_rows
            splittable += 1
        pairs = pairs + <double> (rows * (rows - 1))
    for j in range(J):
        if occupancy[j] == 0:
            choices[empty] = j
            empty += 1
    choices[empty] = J
    return (rows_from_array, J, occupied, labels_array[:splittable], ends_array[:splittable],
            <double> split_rows, pairs, choices_array[:empty + 1])


def log_labelled_prior_change(const int64_t[::1] occupancy, const double[::1] rows_from,
                              double alpha, Py_ssize_t source, Py_ssize_t target, double moved):
    """The labelled prior's log p(z | alpha) after ``moved`` rows of label ``source`` join
    label ``target`` (at most ``occupancy.size``) less before, in O(labels between them);
    ``occupancy``: rows per label; ``rows_from`` (occupancy.size + 1,): R_j, the rows at labels
    j and after, R[-1] = 0.

    The stick factors telescope (``n_j + M_j = M_{j-1}``, ``B(1, alpha) = 1 / alpha``)::

        log p(z | alpha) = sum_j lgamma(1 + n_j) - sum_j log(1 + R_j / alpha) + const

    over any labels past the last occupied one (R_j is 0 there), so a move changes its two
    labels' lgamma terms and R_j only between them.
    """
    if not (0 <= source < occupancy.shape[0] and 0 <= target <= occupancy.shape[0]
            and rows_from.shape[0] == occupancy.shape[0] + 1):
        raise ValueError("log_labelled_prior_change: labels or rows_from out of range")
    return _log_prior_change(occupancy, rows_from, alpha, source, target, moved)


def shift_labels_in_place(int64_t[::1] occupancy, double[::1] rows_from,
                          int64_t[::1] occupied, int64_t[::1] before, Py_ssize_t n_labels,
                          double alpha, const unsigned char[::1] down,
                          const double[::1] picks, const double[::1] log_u):
    """The label shifts of ``simplexsg.dpmixture.label_shift.shift_labels``, one a uniform
    ``picks[t]`` (the component, among the occupied ones), ``down[t]`` (1: down) and
    ``log_u[t]`` (the acceptance's log uniform) each, on the labels' arrays in place:
    ``occupancy`` (rows per label) and ``rows_from`` (``label_counts``'s R), zeros past the
    ``n_labels`` labels in use, with room for a shift up past them per proposal; ``occupied``,
    the occupied labels in increasing order; ``before``, the label before of each label, its
    entries swapped as the components move. Returns (shifts accepted, labels in use)."""
    cdef Py_ssize_t t, c, b, j, at, low, high, accepted = 0, n_occupied = occupied.shape[0]
    cdef Py_ssize_t labels_held = 0
    cdef int64_t n, label
    cdef bint in_order = n_occupied > 0
    if not (rows_from.shape[0] == occupancy.shape[0] + 1 == before.shape[0] + 1
            and n_labels + down.shape[0] <= occupancy.shape[0]
            and picks.shape[0] == log_u.shape[0] == down.shape[0]):
        raise ValueError("shift_labels_in_place: the labels' arrays need room for a label "
                         "per proposal, and one uniform of each kind a proposal")
    for j in range(n_labels):                   # the shifts index occupied by the uniforms
        labels_held += occupancy[j] > 0
    for j in range(n_occupied):
        in_order = in_order and 0 <= occupied[j] < n_labels and occupancy[occupied[j]] > 0
        in_order = in_order and (j == 0 or occupied[j] > occupied[j - 1])
    for t in range(picks.shape[0]):
        in_order = in_order and 0.0 <= picks[t] < 1.0
    if not in_order or labels_held != n_occupied:
        raise ValueError("shift_labels_in_place: occupied must be the occupied labels in "
                         "increasing order, and picks uniforms in [0, 1)")
    with nogil:
        for t in range(down.shape[0]):
            at = <Py_ssize_t> (picks[t] * n_occupied)
            c = occupied[at]
            b = c - 1 if down[t] else c + 1
            while 0 <= b < n_labels and occupancy[b]:
                b = b - 1 if down[t] else b + 1
            if b < 0:
                continue
            if b == n_labels:                   # one past every label: grow by one
                n_labels += 1
            n = occupancy[c]
            if log_u[t] >= _log_prior_change(occupancy, rows_from, alpha, c, b, <double> n):
                continue
            accepted += 1
            occupancy[b], occupancy[c] = n, 0
            low, high = min(b, c), max(b, c)
            for j in range(low + 1, high + 1):
                rows_from[j] += n if b > c else -n
            # the labels between c and b are occupied: c's place among them goes to b
            if b > c:
                for j in range(at, at + b - c - 1):
                    occupied[j] = occupied[j + 1]
                occupied[at + b - c - 1] = b
            else:
                for j in range(at, at - (c - b - 1), -1):
                    occupied[j] = occupied[j - 1]
                occupied[at - (c - b - 1)] = b
            label = before[b]
            before[b], before[c] = before[c], label
    return accepted, n_labels


cdef double _log_pair_probability(double n_rows, double splittable, double split_rows,
                                  double pairs, double shared, double component_share,
                                  double row_share) noexcept nogil:
    """log q(i, k | z) of an ordered pair of distinct rows, in a state of ``n_rows`` rows with
    ``splittable`` components of at least two rows, holding ``split_rows`` rows, and ``pairs``
    ordered pairs of distinct rows within a component (sum of n_j (n_j - 1)); ``shared``: the
    rows of the component holding both rows of the pair, 0 if they are in two components.
    Shares of the proposals: ``component_share`` draw a component uniformly among those of at
    least two rows, then a pair in it; ``row_share`` a row uniformly among their rows, then
    another of its component; the rest a pair of rows of two components, uniformly (all of
    them where no component has two rows)."""
    if shared:
        return log(component_share / (splittable * shared * (shared - 1.0))
                   + row_share / (split_rows * (shared - 1.0)))
    return log((1.0 - component_share - row_share if splittable else 1.0)
               / (n_rows * (n_rows - 1.0) - pairs))


cdef double _log_split_pair_ratio(double n_rows, double other_splittable,
                                  double other_split_rows, double other_pairs, double kept,
                                  double moved, double component_share,
                                  double row_share) noexcept nogil:
    cdef double size = kept + moved
    return (_log_pair_probability(n_rows, other_splittable + (kept >= 2) + (moved >= 2),
                                  other_split_rows + kept * (kept >= 2) + moved * (moved >= 2),
                                  other_pairs + kept * (kept - 1.0) + moved * (moved - 1.0), 0,
                                  component_share, row_share)
            - _log_pair_probability(n_rows, other_splittable + 1, other_split_rows + size,
                                    other_pairs + size * (size - 1.0), size, component_share,
                                    row_share))


def log_pair_probability(double n_rows, double splittable, double split_rows, double pairs,
                         double shared, double component_share, double row_share):
    """log q(i, k | z) of the pair of rows a proposal draws (``_log_pair_probability``): the
    state's ``n_rows`` rows, ``splittable`` components of at least two rows holding
    ``split_rows`` rows, ``pairs`` = sum over components of n_j (n_j - 1); ``shared``: the size
    of the component holding both rows, 0 for two components."""
    return _log_pair_probability(n_rows, splittable, split_rows, pairs, shared,
                                 component_share, row_share)


def log_split_pair_ratio(double n_rows, double other_splittable, double other_split_rows,
                         double other_pairs, double kept, double moved, double component_share,
                         double row_share):
    """log q(i, k | split state) - log q(i, k | merged state), for a component of ``kept +
    moved`` rows split into i's ``kept`` and k's ``moved``, beside the other components:
    ``other_splittable`` of at least two rows, holding ``other_split_rows`` rows, with
    ``other_pairs`` ordered pairs within them (``log_pair_probability``): a split's ratio; a
    merge's is its negative."""
    return _log_split_pair_ratio(n_rows, other_splittable, other_split_rows, other_pairs, kept,
                                 moved, component_share, row_share)


cdef bint _record(const int64_t[::1] indptr, const int64_t[::1] indices,
                  const double[::1] data, const int64_t* rows, Py_ssize_t n_rows,
                  double* dense, Py_ssize_t n_features, double base, const double[::1] rising,
                  _Sums* out) noexcept nogil:
    """The summed counts of the rows ``rows[:n_rows]`` (in one pass over their stored counts,
    through ``dense``, n_features zeros, left zeros), their categories, total and log marginal,
    in ``out``; True if out of memory (``out`` then holds no component)."""
    cdef Py_ssize_t r, c, size = 0, at = 0
    cdef double total = 0.0
    for r in range(n_rows):
        _add_row(indptr, indices, data, rows[r], dense)
    for c in range(n_features):
        size += dense[c] != 0.0
    cdef int64_t* categories = <int64_t*> malloc(max(size, 1) * sizeof(int64_t))
    cdef double* counts = <double*> malloc(max(size, 1) * sizeof(double))
    for c in range(n_features):
        if dense[c] != 0.0:
            total += dense[c]
            if categories != NULL and counts != NULL:
                categories[at], counts[at] = c, dense[c]
                at += 1
            dense[c] = 0.0
    if categories == NULL or counts == NULL:
        free(categories)
        free(counts)
        out[0] = _Sums(NULL, NULL, -1, 0.0, 0.0)
        return True
    out[0] = _Sums(categories, counts, size,
                   _summed_log_marginal(counts, size, n_features, base, rising), total)
    return False


cdef enum:
    # what ``ComponentScreen.screen`` stopped at (``_OUTCOMES``)
    SCREENED = 0        # the budget: every proposal it made was rejected
    BY_COMPONENT = 1    # a split, its component drawn uniformly: the caller draws the pair
    BY_ROW = 2          # a split, its component drawn by a row: the caller draws the pair
    MERGE = 3           # a merge whose ratio without q passes the uniform: q decides
    MISSING = 4         # a component without its sums: the caller's error

_OUTCOMES = ("screened", "component", "row", "merge")


cdef class ComponentScreen:
    """Each component's summed counts and log marginal, and the screen of split-merge
    proposals that reads them (``simplexsg.dpmixture.split_merge``).

    Rows are those of a CSR matrix (``indptr``, ``indices``, ``data``; int64, int64, float64)
    with ``n_features`` columns, components Dirichlet(``base``); ``rising``: ``lgamma(base + c)
    - lgamma(base)`` for the counts c a merged category's table holds (``lgamma`` above).
    ``set(label, rows)`` records a component, ``drop`` and ``clear`` forget one or all;
    ``screen`` draws proposals until one needs more than its components' sums.
    """
    cdef const int64_t[::1] indptr
    cdef const int64_t[::1] indices
    cdef const double[::1] data
    cdef const double[::1] rising
    cdef Py_ssize_t n_features, capacity
    cdef double base
    cdef _Sums* sums
    cdef double* dense                  # n_features zeros between calls: a block's sum

    def __cinit__(self, const int64_t[::1] indptr, const int64_t[::1] indices,
                  const double[::1] data, Py_ssize_t n_features, double base,
                  const double[::1] rising):
        self.indptr, self.indices, self.data, self.rising = indptr, indices, data, rising
        self.n_features, self.base, self.capacity = n_features, base, 0
        self.sums = NULL
        self.dense = <double*> calloc(max(n_features, 1), sizeof(double))
        if self.dense == NULL:
            raise MemoryError("ComponentScreen: no memory for a block's summed counts")

    def __dealloc__(self):
        self.clear()
        free(self.sums)
        free(self.dense)

    cdef void _forget(self, Py_ssize_t label) noexcept nogil:
        if label < self.capacity:
            free(self.sums[label].categories)
            free(self.sums[label].counts)
            self.sums[label] = _Sums(NULL, NULL, -1, 0.0, 0.0)

    def clear(self):
        """Forget every component."""
        cdef Py_ssize_t label
        for label in range(self.capacity):
            self._forget(label)

    def drop(self, Py_ssize_t label):
        """Forget component ``label`` (now empty)."""
        self._forget(label)

    cdef void _reserve(self, Py_ssize_t labels) except *:
        """Room for the labels below ``labels``; the new ones hold no component."""
        cdef Py_ssize_t c, capacity
        cdef _Sums* grown
        if labels <= self.capacity:
            return
        capacity = max(labels, 2 * self.capacity)
        grown = <_Sums*> realloc(self.sums, capacity * sizeof(_Sums))
        if grown == NULL:
            raise MemoryError("ComponentScreen: no memory for the components")
        for c in range(self.capacity, capacity):
            grown[c] = _Sums(NULL, NULL, -1, 0.0, 0.0)
        self.sums, self.capacity = grown, capacity

    def set(self, Py_ssize_t label, const int64_t[::1] rows):
        """Record component ``label`` >= 0 whose rows are ``rows`` (indices into the matrix):
        its summed counts, in one pass over their stored counts, and its log marginal."""
        cdef bint failed
        if label < 0:
            raise ValueError(f"ComponentScreen.set: label {label} < 0")
        self._reserve(label + 1)
        self._forget(label)
        cdef const int64_t* first = &rows[0] if rows.shape[0] else NULL
        with nogil:
            failed = _record(self.indptr, self.indices, self.data, first, rows.shape[0],
                             self.dense, self.n_features, self.base, self.rising,
                             &self.sums[label])
        if failed:
            raise MemoryError("ComponentScreen: no memory for a component's counts")

    def set_all(self, const int64_t[::1] order, const int64_t[::1] bounds, int n_jobs=1):
        """Forget every component, then record each label j whose rows are
        ``order[bounds[j]:bounds[j + 1]]`` (none if empty): ``set`` of every label at once, the
        labels shared among ``n_jobs`` threads; the same sums whatever their number."""
        cdef Py_ssize_t j, labels = bounds.shape[0] - 1, d = max(self.n_features, 1)
        cdef Py_ssize_t failures = 0            # a sum over the threads (a prange reduction)
        cdef int threads = max(1, n_jobs)
        cdef double* dense
        self.clear()
        self._reserve(labels)
        cdef double* scratch = <double*> calloc(threads * d, sizeof(double))
        if scratch == NULL:
            raise MemoryError("ComponentScreen: no memory for the blocks' summed counts")
        cdef const int64_t[::1] indptr = self.indptr, indices = self.indices
        cdef const double[::1] data = self.data, rising = self.rising
        cdef Py_ssize_t n_features = self.n_features
        cdef double base = self.base
        cdef _Sums* sums = self.sums
        with nogil, parallel(num_threads=threads):
            dense = scratch + threadid() * d
            for j in prange(labels, schedule="dynamic"):
                if bounds[j + 1] > bounds[j] and _record(
                        indptr, indices, data, &order[bounds[j]], bounds[j + 1] - bounds[j],
                        dense, n_features, base, rising, &sums[j]):
                    failures += 1
        free(scratch)
        if failures:
            self.clear()
            raise MemoryError("ComponentScreen: no memory for a component's counts")

    cdef const _Sums* _held(self, Py_ssize_t label) except NULL:
        if not 0 <= label < self.capacity or self.sums[label].size < 0:
            raise KeyError(f"ComponentScreen: no component {label}")
        return &self.sums[label]

    def log_marginal(self, Py_ssize_t label):
        """Component ``label``'s log marginal (``_summed_log_marginal`` of its summed counts)."""
        return self._held(label).log_marginal

    def total(self, Py_ssize_t label):
        """Component ``label``'s total count."""
        return self._held(label).total

    def merged_gain(self, Py_ssize_t a, Py_ssize_t b):
        """The log marginal of components ``a`` and ``b`` merged less each one's."""
        return _merged_gain(self._held(a), self._held(b), self.n_features, self.base,
                            self.rising)

    def screen(self, bit_generator, const int64_t[::1] z, const int64_t[::1] occupancy,
               const double[::1] rows_from, Py_ssize_t J, Py_ssize_t occupied,
               Py_ssize_t splittable, double split_rows, double pairs, double alpha,
               bint scans, double component_share, double row_share, double scanned_share,
               double delayed_total, double delayed_row_total, Py_ssize_t n_proposals,
               double row_budget, Py_ssize_t done, double rows):
        """Split-merge proposals on the labelled allocations ``z`` (n >= 2 rows; every
        occupied label recorded here), drawn from ``bit_generator`` exactly as
        ``split_merge.SplitMerge`` draws them, while ``done`` < ``n_proposals`` or ``rows`` <
        ``row_budget``, and rejected here as long as they are merges rejected before their
        pass over the rows (or whose reverse split could not pick the emptied label).

        ``occupancy`` (rows per label), ``rows_from`` (R_j), ``J`` (one past the last
        occupied label), ``occupied`` and ``splittable`` (labels of at least one and two rows),
        ``split_rows`` (the rows of the latter) and ``pairs`` (sum of n_j (n_j - 1)) describe
        z; ``component_share`` and ``row_share``: the shares of splits by component and by
        row (``log_pair_probability``); ``scans``: whether a proposal first draws if it is
        scanned. A pair of two components is drawn by drawing pairs of rows until their
        components differ; where one component holds every row there is none, and the
        proposal makes no move. A merge draws a uniform u; one not scanned whose two components
        hold at least ``delayed_total`` counts, and ``delayed_row_total`` a row on average, has
        a delayed acceptance and draws u1 (the first stage's) after its ratio: it needs u1 < r1
        and u < r / r1 (r: its ratio), so u u1 < r; the others need u < r.

        Returns (outcome, done, rows, i, k, log u, log u1, scanned, log ratio): outcome
        "screened" once the budget is spent; else the proposal it stopped at, not counted in
        done and rows: "component" or "row" (a split, whose pair the caller draws after the
        draw of ``scanned``: ``SplitMerge``), "merge" (``log ratio``, the acceptance's log
        without q, passes ``log u`` plus ``log u1``, 0 without a delayed acceptance).
        """
        cdef bitgen_t* bitgen = <bitgen_t*> PyCapsule_GetPointer(bit_generator.capsule,
                                                                 "BitGenerator")
        cdef Py_ssize_t n_rows = z.shape[0], J_after
        cdef int64_t c, e
        cdef uint64_t i = 0, k = 0
        cdef int outcome = SCREENED
        cdef bint scanned = False, delayed = False
        cdef double log_u = 0.0, log_u1 = 0.0, log_ratio = 0.0, n_c, n_e, mechanism
        cdef double gain, sizes, between, log_choices, pair_ratio
        cdef double across = <double> n_rows * (n_rows - 1.0) - pairs
        if n_rows < 2 or occupancy.shape[0] < J or rows_from.shape[0] != occupancy.shape[0] + 1:
            raise ValueError("ComponentScreen.screen: fewer than two rows, or the labels' "
                             "arrays do not match J")
        with bit_generator.lock:
            with nogil:
                while done < n_proposals or rows < row_budget:
                    scanned = scans and random_standard_uniform(bitgen) < scanned_share
                    if splittable:
                        mechanism = random_standard_uniform(bitgen)
                        if mechanism < component_share:
                            outcome = BY_COMPONENT
                            break
                        if mechanism < component_share + row_share:
                            outcome = BY_ROW
                            break
                    if across <= 0.0:       # one component: no pair of two, no move
                        done += 1
                        if component_share + row_share <= 0.0:
                            break           # and never a split: the budget cannot be spent
                        continue
                    while True:             # an ordered pair of rows of two components
                        i = random_bounded_uint64(bitgen, 0, n_rows - 1, 0, False)
                        k = random_bounded_uint64(bitgen, 0, n_rows - 2, 0, False)
                        k += k >= i
                        if z[i] != z[k]:
                            break
                    log_u = log(random_standard_uniform(bitgen))
                    c, e = z[i], z[k]
                    if (c >= self.capacity or e >= self.capacity or self.sums[c].size < 0
                            or self.sums[e].size < 0):
                        outcome = MISSING
                        break
                    J_after = J                     # J once e merges into c
                    if e == J - 1:
                        J_after = e
                        while occupancy[J_after - 1] == 0:
                            J_after -= 1
                    if e > J_after:    # the reverse split could not pick e: never accepted
                        done += 1
                        continue
                    n_c, n_e = occupancy[c], occupancy[e]
                    delayed = _delayed(self.sums[c].total + self.sums[e].total, n_c + n_e,
                                       scanned, delayed_total, delayed_row_total)
                    log_u1 = log(random_standard_uniform(bitgen)) if delayed else 0.0
                    gain = _merged_gain(&self.sums[c], &self.sums[e], self.n_features,
                                        self.base, self.rising)
                    sizes = _log_prior_sizes(occupancy, e, c, n_e)
                    log_choices = log(<double> (J_after - (occupied - 1) + 1))
                    pair_ratio = _log_split_pair_ratio(
                        n_rows, splittable - (n_c >= 2) - (n_e >= 2),
                        split_rows - n_c * (n_c >= 2) - n_e * (n_e >= 2),
                        pairs - n_c * (n_c - 1.0) - n_e * (n_e - 1.0), n_c, n_e,
                        component_share, row_share)
                    # the labels between cost O(labels): first a bound, the ratio at its
                    # most (past rounding), then the ratio itself only where that passes
                    between = _log_prior_between_at_least(rows_from, alpha, e, c, n_e)
                    log_ratio = gain + (sizes - between) - log_choices - pair_ratio
                    if log_ratio + SCREEN_MARGIN * (1.0 + fabs(gain) + fabs(sizes)
                                                    + fabs(between) + fabs(log_ratio)) > (
                            log_u + log_u1):
                        log_ratio = (gain + (sizes - _log_prior_between(rows_from, alpha, e,
                                                                        c, n_e))
                                     - log_choices - pair_ratio)
                        if log_ratio > log_u + log_u1:
                            outcome = MERGE
                            break
                    done += 1                       # log q <= 0 cannot make up for it
                    rows += n_c + n_e
        if outcome == MISSING:
            missing = c if c >= self.capacity or self.sums[c].size < 0 else e
            raise KeyError(f"ComponentScreen.screen: no component {missing}")
        return (_OUTCOMES[outcome], done, rows, int(i), int(k), log_u, log_u1, bool(scanned),
                log_ratio)
