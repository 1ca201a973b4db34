# The per-row transitions of the simplex samplers (_simplex.pyx), for the LDA global step.
from numpy.random cimport bitgen_t

cdef void _scir_row(const double* theta, const double* shape, Py_ssize_t d, double c,
                    double rate, bitgen_t* rng, double* out) noexcept nogil
cdef void _sgrld_row(const double* theta, const double* shape, double est_total, Py_ssize_t d,
                     double h, bitgen_t* rng, double* out, double* mean) noexcept nogil


cdef inline bint _draws_poisson(double shape) noexcept nogil:
    """Whether ``_scir_row`` draws a coordinate of this CIR shape by its Poisson form (below
    1/2; from 1/2 on, the normal form draws no Poisson)."""
    return shape < 0.5
