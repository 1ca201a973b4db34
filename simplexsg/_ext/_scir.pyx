"""SCIR transition kernel: exact Cox-Ingersoll-Ross steps, drawn as a Poisson mixture of gammas.

For each coordinate, with ``c = 1 - exp(-h)``::

    N      ~ Poisson(theta * exp(-h) / c)
    theta' ~ Gamma(shape + N, scale=c)

which is the CIR transition ``c/2 * ncx2(2 shape, 2 theta exp(-h) / c)`` of DESIGN.md.

Small shapes: a Gamma(s) draw with s < 1 is taken in log space,
``log G = log Gamma(s + 1) + log(U) / s``, so that it does not underflow before we decide
what to do with it. Then, per row (the last axis is the simplex):

* a row whose largest ``log theta'`` is below ``LOG_ROW_CEILING`` (1e-250) is shifted so that
  its largest coordinate is 1e-250. This keeps the simplex value ``theta / sum(theta)``
  exact and changes the law of the next step only with probability below
  ``1e-250 * exp(-h) / c`` per coordinate (the CIR transition depends on theta only through
  that Poisson rate);
* every coordinate is then floored at DBL_MIN (about 2.2e-308), the smallest normal double.

So no output is NaN, inf, zero or subnormal, and no row is all-zero.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.float cimport DBL_MIN
from libc.math cimport exp, expm1, log
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_poisson,
    random_standard_gamma,
    random_standard_uniform,
)

LOG_ROW_CEILING_VALUE = log(1e-250)
FLOOR_VALUE = DBL_MIN

cdef double LOG_ROW_CEILING = LOG_ROW_CEILING_VALUE
cdef double LOG_FLOOR = log(DBL_MIN)


cdef bitgen_t* bitgen_pointer(object bit_generator) except NULL:
    capsule = bit_generator.capsule
    if not PyCapsule_IsValid(capsule, "BitGenerator"):
        raise TypeError("expected a numpy BitGenerator")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, "BitGenerator")


cdef inline double _log_standard_gamma(bitgen_t* rng, double shape) noexcept nogil:
    """log of a Gamma(shape, 1) draw, accurate for tiny shapes."""
    if shape >= 1.0:
        return log(random_standard_gamma(rng, shape))
    # Gamma(s) = Gamma(s + 1) * U^(1/s); log(0) = -inf is floored by the caller.
    return log(random_standard_gamma(rng, shape + 1.0)) + log(random_standard_uniform(rng)) / shape


def scir_rows(const double[:, ::1] theta, const double[:, ::1] shape, double h,
              object bit_generator, double[:, ::1] out):
    """One SCIR step of every row of ``theta`` (n_rows, d) with CIR shapes ``shape`` (n_rows, d).

    ``h`` > 0 is the diffusion time of the step. Writes the new state into ``out`` (same shape,
    may not alias ``theta``). Draws from ``bit_generator`` while holding its lock.
    """
    cdef bitgen_t* rng = bitgen_pointer(bit_generator)
    cdef Py_ssize_t n_rows = theta.shape[0], d = theta.shape[1], i, j
    cdef double c = -expm1(-h)                 # 1 - e^-h, accurate for small h
    cdef double rate = exp(-h) / c
    cdef double log_c = log(c)
    cdef double row_max, shift, v
    with bit_generator.lock, nogil:
        for i in range(n_rows):
            row_max = -1e308
            for j in range(d):
                v = log_c + _log_standard_gamma(
                    rng, shape[i, j] + <double> random_poisson(rng, theta[i, j] * rate))
                out[i, j] = v
                if v > row_max:
                    row_max = v
            shift = LOG_ROW_CEILING - row_max if row_max < LOG_ROW_CEILING else 0.0
            for j in range(d):
                v = out[i, j] + shift
                out[i, j] = exp(v) if v > LOG_FLOOR else DBL_MIN
