# Generic CSR helpers (_sparse.pyx) for the kernels that cimport them.
from libc.stdint cimport int32_t, int64_t

ctypedef fused index_t:
    int32_t
    int64_t

ctypedef fused count_t:
    int64_t
    double

cdef Py_ssize_t _first_outside(const index_t[::1] values, Py_ssize_t upper) noexcept nogil
cdef int _group_by_key(const int32_t* keys, Py_ssize_t n_items, Py_ssize_t n_keys,
                       int64_t* key_start, int64_t* order, int n_threads) noexcept nogil
