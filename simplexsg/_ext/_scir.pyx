"""SCIR transition kernel: exact Cox-Ingersoll-Ross steps of every coordinate.

The CIR transition over time h is ``c/2 * ncx2(2 a, 2 lam)`` with ``c = 1 - exp(-h)`` and
``lam = theta exp(-h) / c`` (Baker et al. 2018, Section 3). It is drawn exactly in one of two equivalent forms:

* shape a >= 1: ``c * (Gamma(a - 1/2) + (Z + sqrt(2 lam))^2 / 2)``, Z ~ N(0, 1)
  (ncx2(df) = chi2(df - 1) + (Z + sqrt(nonc))^2 for df > 1, as numpy does);
* shape a < 1: ``N ~ Poisson(lam)``, then ``c * Gamma(a + N)``, the gamma drawn in log space when
  its shape is below 1, ``log G = log Gamma(s + 1) + log(U) / s``, so that it cannot underflow
  before we decide what to do with it (log(U) drawn as minus an exponential; the Poisson by
  its first arrival time, ``_poisson``).

Tiny values, per row (the last axis is the simplex):

* a row of d >= 2 coordinates whose largest value is below ``ROW_CEILING`` (1e-250) is scaled,
  in log space, so that its largest coordinate is 1e-250. This keeps the simplex value
  ``theta / sum(theta)`` exact and changes the law of the next step only with probability below
  ``1e-250 * exp(-h) / c`` per coordinate (the transition depends on theta only through lam).
  Rows of one coordinate (plain Gamma variables, no simplex) are not scaled;
* every coordinate is then floored at DBL_MIN (about 2.2e-308), the smallest normal double.

So no output is NaN, inf, zero or subnormal, and no row is all-zero.
"""
from cython.parallel cimport prange
from libc.float cimport DBL_MIN
from libc.math cimport INFINITY, exp, expm1, log, sqrt
from libc.stdint cimport uintptr_t
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


cdef inline double _log_standard_gamma(bitgen_t* rng, double shape) noexcept nogil:
    """log of a Gamma(shape, 1) draw, accurate for tiny shapes: for shape < 1,
    ``log Gamma(shape + 1) + log(U) / shape`` with ``log(U) = -E``, E ~ Exp(1)."""
    if shape >= 1.0:
        return log(random_standard_gamma(rng, shape))
    return log(random_standard_gamma(rng, shape + 1.0)) - random_standard_exponential(rng) / shape


cdef inline double _poisson(bitgen_t* rng, double lam) noexcept nogil:
    """A Poisson(lam) draw. The first arrival of a unit-rate Poisson process, E ~ Exp(1), comes
    after lam with probability e^-lam (the draw is then 0); otherwise the count is 1 plus a
    Poisson(lam - E) (memorylessness). Cheaper than numpy's for the tiny rates of words with
    no counts, and exact."""
    cdef double first = random_standard_exponential(rng)
    if first > lam:
        return 0.0
    return 1.0 + <double> random_poisson(rng, lam - first)


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
                    double rate, double log_c, bitgen_t* rng, double* out) noexcept nogil:
    """One SCIR step of one row (one simplex) of ``d`` coordinates, drawing from ``rng``;
    ``c = 1 - e^-h``, ``rate = e^-h / c``, ``log_c = log(c)``."""
    cdef Py_ssize_t j
    cdef double a, v, z
    cdef double top = 0.0                       # largest value stored as is
    cdef double log_top_tiny = -INFINITY        # largest log stored as a negative
    for j in range(d):
        a = shape[j]
        if a >= 1.0:
            z = random_standard_normal(rng) + sqrt(2.0 * theta[j] * rate)
            v = c * (random_standard_gamma(rng, a - 0.5) + 0.5 * z * z)
        else:
            v = log_c + _log_standard_gamma(rng, a + _poisson(rng, theta[j] * rate))
            if v <= LOG_FLOOR:
                v = max(v, -1e308)              # -E / shape overflows for a subnormal shape
                out[j] = v
                log_top_tiny = max(log_top_tiny, v)
                continue
            v = exp(v)
        out[j] = v
        top = max(top, v)
    if top < ROW_CEILING_C or log_top_tiny > -INFINITY:
        _finish_row(out, d, log(top) if top > 0 else log_top_tiny)


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
    cdef double log_c = log(c)
    cdef bitgen_t* rng
    for b in prange(n_blocks, nogil=True, num_threads=max(1, n_jobs), schedule="static"):
        rng = <bitgen_t*> bitgens[b]
        for i in range(b * rows_per_block, min(n_rows, (b + 1) * rows_per_block)):
            _scir_row(&theta[i, 0], &shape[i, 0], theta.shape[1], c, rate, log_c, rng, &out[i, 0])
