"""The simplex samplers' per-row transitions: one step of one row (one simplex) of gamma
variables, by SCIR or by SGRLD, and their entry points over the rows of an array.

The row functions (``_scir_row``, ``_sgrld_row``, declared in ``_simplex.pxd``) are also the
two moves of the LDA global step (``_global_step.pyx``, which cimports them).

SCIR: exact Cox-Ingersoll-Ross steps of every coordinate.

The CIR transition over time h is ``c/2 * ncx2(2 a, 2 lam)`` with ``c = 1 - exp(-h)`` and
``lam = theta exp(-h) / c`` (Baker et al. 2018, Section 3). It is drawn exactly in one of two equivalent forms:

* shape a >= 1/2: ``c * (Gamma(a - 1/2) + (Z + sqrt(2 lam))^2 / 2)``, Z ~ N(0, 1)
  (ncx2(df) = chi2(df - 1) + (Z + sqrt(nonc))^2 for df > 1, as numpy does; at df = 1, a =
  1/2, the chi2 part is 0 and a draw is one normal: the common case of the DP mixture's
  default base measure, where the Poisson form below costs a Poisson and a gamma of shape
  about lam, 1/h, at each category a cluster's rows leave empty);
* shape a < 1/2: ``N ~ Poisson(lam)``, then ``c * Gamma(a + N)``. The Poisson is drawn by its
  first arrival time E ~ Exp(1) (``N = 0`` when ``E > lam``, otherwise 1 plus a Poisson of
  ``lam - E``). When N = 0, ``E - lam`` is again Exp(1) and independent of the event
  (memorylessness), and it supplies the uniform ``U = exp(-(E - lam))`` of the first proposal
  of ``_log_gamma_below_one``, the rejection method numpy uses for gamma shapes below 1, drawn
  in log space. A word with no counts (a = beta < 1/2, LDA's common case) so costs one
  exponential and one ``exp``, and, when its proposal is not certain to be accepted (about a
  third of words at beta = 0.01, more at larger beta), one more exponential and ``exp``.

Tiny values, per row (the last axis is the simplex):

* a row of d >= 2 coordinates whose largest value is below ``ROW_CEILING`` (1e-250) is scaled,
  in log space, so that its largest coordinate is 1e-250. This keeps the simplex value
  ``theta / sum(theta)`` exact and changes the law of the next step only with probability below
  ``1e-250 * exp(-h) / c`` per coordinate (the transition depends on theta only through lam).
  Rows of one coordinate (plain Gamma variables, no simplex) are not scaled;
* every coordinate is then floored at DBL_MIN (about 2.2e-308), the smallest normal double.

So no output is NaN, inf, zero or subnormal, and no row is all-zero.

SGRLD, expanded mean (Patterson & Teh 2013): ``theta' = |theta + h drift + sqrt(2 h theta) xi|``
with ``drift = shape - theta - n theta / sum(theta)``, ``shape = prior + counts``, ``n`` the
row's total count, floored at DBL_MIN too; the mean of the step (before the mirror) is
``max(theta + h drift, DBL_MIN)``.
"""
from cython.parallel cimport parallel, prange
from libc.float cimport DBL_MIN
from libc.math cimport INFINITY, NAN, exp, expm1, fabs, log, log1p, sqrt
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_poisson,
    random_standard_exponential,
    random_standard_gamma,
    random_standard_normal,
)

ROW_CEILING = 1e-250
FLOOR_VALUE = DBL_MIN

cdef double LOG_ROW_CEILING = log(ROW_CEILING)
cdef double ROW_CEILING_C = ROW_CEILING
cdef double LOG_FLOOR = log(DBL_MIN)
#: log 2^-53: a gamma proposal below it is accepted without its test (``_log_gamma_below_one``).
cdef double LOG_SURE = -53.0 * log(2.0)
#: Values whose log is below this are kept in log space until their row is finished.
cdef double LOG_TINY = -600.0


cdef inline double _log_gamma_below_one(bitgen_t* rng, double a, double inv_a, double a_cut,
                                        double e, double* value) noexcept nogil:
    """log of a Gamma(a, 1) draw, 0 < a < 1, given ``e`` ~ Exp(1) independent of the rest,
    ``inv_a = 1 / a`` and ``a_cut = a / (1 - a)``; the draw itself goes to ``value``, or 0
    when its log is at most LOG_TINY (the caller keeps such a value in log space).

    numpy's rejection method for shapes below 1 (``random_standard_gamma``) with its uniform
    U taken as ``exp(-e)`` (U <= 1 - a exactly when e >= -log1p(-a), which lies in [a,
    a / (1 - a)] and is computed only when e does): a proposal X = U^(1/a),
    accepted when X <= V, V ~ Exp(1), or X = (1 - a + a Y)^(1/a), Y = -log((1 - U) / a),
    accepted when X <= V + Y; each piece's proposal density times its acceptance probability
    is a x^(a - 1) e^-x. A proposal X = U^(1/a) below 2^-53 is accepted without drawing V: its
    rejection probability 1 - e^-X is below the resolution of a double uniform. A rejected
    proposal, and U = 1 (e = 0, outside numpy's [0, 1)), draw e afresh."""
    cdef double log_x, y, x
    while True:
        if e >= a_cut or (e >= a and e >= -log1p(-a)):
            log_x = -e * inv_a              # -inf for a subnormal a: the caller floors it
            x = exp(log_x) if log_x > LOG_TINY else 0.0
            if log_x < LOG_SURE or x <= random_standard_exponential(rng):
                value[0] = x
                return log_x
        elif e > 0.0:
            y = -log(-expm1(-e) * inv_a)
            log_x = log1p(a * (y - 1.0)) * inv_a
            x = exp(log_x)
            if x <= random_standard_exponential(rng) + y:
                value[0] = x
                return log_x
        e = random_standard_exponential(rng)


cdef inline void _finish_row(double* row, Py_ssize_t d, double log_top) noexcept nogil:
    """Finish a row holding values >= DBL_MIN and, as negatives, logs below LOG_FLOOR.

    ``log_top`` is the log of the row's largest value. Scales the row so that its largest value
    is ROW_CEILING when it lies below that (d >= 2 only), then floors at DBL_MIN.
    """
    cdef Py_ssize_t j
    cdef double v, shift = 0.0
    if d > 1 and log_top < LOG_ROW_CEILING:
        shift = LOG_ROW_CEILING - log_top
    for j in range(d):
        if row[j] < 0 or shift != 0.0:
            v = (log(row[j]) if row[j] > 0 else row[j]) + shift
            row[j] = exp(v) if v > LOG_FLOOR else DBL_MIN


cdef void _scir_row(const double* theta, const double* shape, Py_ssize_t d, double c,
                    double rate, bitgen_t* rng, double* out) noexcept nogil:
    """One SCIR step of one row (one simplex) of ``d`` coordinates, drawing from ``rng``;
    ``c = 1 - e^-h``, ``rate = e^-h / c``."""
    cdef Py_ssize_t j
    cdef double a, v, z, lam, first, log_v
    cdef double top = 0.0                       # largest value stored as is
    cdef double log_top_tiny = -INFINITY        # largest log stored as a negative
    cdef double inv_shape = -1.0                # the last a < 1/2 seen,
    cdef double inv_a = NAN, a_cut = NAN        # and its 1 / a, a / (1 - a)
    for j in range(d):
        a = shape[j]
        log_v = 0.0                             # log of the value when it is v * e^log_v
        if not _draws_poisson(a):
            z = random_standard_normal(rng) + sqrt(2.0 * theta[j] * rate)
            v = c * ((random_standard_gamma(rng, a - 0.5) if a > 0.5 else 0.0) + 0.5 * z * z)
        else:
            lam = theta[j] * rate
            first = random_standard_exponential(rng)
            if first > lam:                     # N = 0: c Gamma(a)
                if inv_shape != a:
                    inv_shape = a
                    inv_a = 1.0 / a
                    a_cut = a / (1.0 - a)
                log_v = _log_gamma_below_one(rng, a, inv_a, a_cut, first - lam, &v)
                if v > 0.0:
                    v *= c
                    log_v = 0.0
                else:
                    v = c
            else:                               # N >= 1: shape a + N >= 1
                v = c * random_standard_gamma(
                    rng, a + 1.0 + <double> random_poisson(rng, lam - first))
        if log_v != 0.0 or v < DBL_MIN:
            v = log(v) + log_v if v > 0 else LOG_FLOOR
            if v <= LOG_FLOOR:
                v = max(v, -1e308)
                out[j] = v
                log_top_tiny = max(log_top_tiny, v)
                continue
            v = exp(v)
        out[j] = v
        top = max(top, v)
    if top < ROW_CEILING_C or log_top_tiny > -INFINITY:
        _finish_row(out, d, log(top) if top > 0 else log_top_tiny)


cdef void _sgrld_row(const double* theta, const double* shape, double est_total, Py_ssize_t d,
                     double h, bitgen_t* rng, double* out, double* mean) noexcept nogil:
    """One expanded-mean SGRLD step of one row of ``d`` coordinates with ``shape = prior +
    counts`` and ``est_total`` the sum of the counts (the LDA global step: ``beta + est``, and
    n_k), drawing from ``rng``: the new sample in ``out``, the mean of the step (before the
    mirror) in ``mean``."""
    cdef Py_ssize_t j
    cdef double total = 0.0, drift, m
    for j in range(d):
        total += theta[j]
    for j in range(d):
        drift = shape[j] - theta[j] - est_total * theta[j] / total
        m = theta[j] + h * drift
        out[j] = max(fabs(m + sqrt(2.0 * h * theta[j]) * random_standard_normal(rng)), DBL_MIN)
        mean[j] = max(m, DBL_MIN)


def scir_rows(const double[:, ::1] theta, const double[:, ::1] shape, double h,
              const uintptr_t[::1] bitgens, Py_ssize_t rows_per_block, double[:, ::1] out,
              int n_jobs=1):
    """One SCIR step of every row of ``theta`` (n_rows, d) with CIR shapes ``shape`` (n_rows, d).

    ``h`` > 0 is the diffusion time of the step. Rows ``[b * rows_per_block, (b + 1) *
    rows_per_block)`` draw from the bit generator at address ``bitgens[b]`` (see
    ``_bitgen.bitgen_addresses``; the caller keeps it alive and unused by others), so the result
    does not depend on ``n_jobs``, the OpenMP threads over blocks. Writes into ``out`` (same
    shape, may not alias ``theta``).
    """
    cdef Py_ssize_t n_rows = theta.shape[0], n_blocks = bitgens.shape[0], b, i
    if rows_per_block < 1 or n_blocks * rows_per_block < n_rows:
        raise ValueError(f"{n_blocks} bit generators of {rows_per_block} rows cannot cover {n_rows} rows")
    cdef double c = -expm1(-h)                 # 1 - e^-h, accurate for small h
    cdef double rate = exp(-h) / c
    cdef bitgen_t* rng
    for b in prange(n_blocks, nogil=True, num_threads=max(1, n_jobs), schedule="static"):
        rng = <bitgen_t*> bitgens[b]
        for i in range(b * rows_per_block, min(n_rows, (b + 1) * rows_per_block)):
            _scir_row(&theta[i, 0], &shape[i, 0], theta.shape[1], c, rate, rng, &out[i, 0])


def sgrld_rows(const double[:, ::1] theta, const double[:, ::1] shape,
               const double[::1] count_totals, double h, const uintptr_t[::1] bitgens,
               Py_ssize_t rows_per_block, double[:, ::1] out, int n_jobs=1):
    """One expanded-mean SGRLD step of every row of ``theta`` (n_rows, d) > 0, with
    ``shape = prior + counts`` and ``count_totals`` the rows' sums of the counts (the n_k of
    the drift). Rows ``[b * rows_per_block, (b + 1) * rows_per_block)`` draw from the bit
    generator ``bitgens[b]``, so the result does not depend on ``n_jobs``; writes ``out``."""
    cdef Py_ssize_t n_rows = theta.shape[0], d = theta.shape[1], n_blocks = bitgens.shape[0]
    cdef Py_ssize_t b, i
    if rows_per_block < 1 or n_blocks * rows_per_block < n_rows:
        raise ValueError(f"{n_blocks} bit generators of {rows_per_block} rows cannot cover "
                         f"{n_rows} rows")
    if (shape.shape[0] != n_rows or shape.shape[1] != d or count_totals.shape[0] != n_rows
            or out.shape[0] != n_rows or out.shape[1] != d):
        raise ValueError(f"theta is {n_rows} x {d}, shape {shape.shape[0]} x {shape.shape[1]}, "
                         f"count_totals {count_totals.shape[0]}, out {out.shape[0]} x "
                         f"{out.shape[1]}: they must match")
    cdef double* mean = NULL
    cdef int out_of_memory = 0
    cdef int* failed = &out_of_memory
    with nogil, parallel(num_threads=max(1, n_jobs)):
        mean = <double*> malloc(max(d, 1) * sizeof(double))
        if mean == NULL:
            failed[0] = 1
        for b in prange(n_blocks, schedule="static"):
            if mean == NULL:
                continue
            for i in range(b * rows_per_block, min(n_rows, (b + 1) * rows_per_block)):
                _sgrld_row(&theta[i, 0], &shape[i, 0], count_totals[i], d, h,
                           <bitgen_t*> bitgens[b], &out[i, 0], mean)
        free(mean)
    if out_of_memory:
        raise MemoryError(f"a row buffer of {d} values")
