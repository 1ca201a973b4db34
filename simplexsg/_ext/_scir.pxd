from numpy.random cimport bitgen_t

cdef void _scir_row(const double* theta, const double* shape, Py_ssize_t d, double c,
                    double rate, bitgen_t* rng, double* out) noexcept nogil
