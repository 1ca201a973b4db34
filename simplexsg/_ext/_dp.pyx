"""Slice-sampler allocations of a Dirichlet-process mixture of multinomials.

Row i (sparse counts x_i) with slice variable u_i may join any component j whose stick weight
w_j exceeds u_i, with probability proportional to the multinomial likelihood
``prod_c phi[j, c]^x_ic`` (Walker 2007; Kalli, Griffin & Walker 2011): the weights enter only
through the slice. Everything is in logs. The draw is an inverse CDF at a uniform the caller
supplies, so the kernel holds no random state and its result does not depend on the threads.

With ``weighted`` the draw is ``∝ w_j prod_c phi_jc^x_ic`` instead: the exact conditional of z
given the weights when the slice is -inf and every component of noticeable weight is present
(used for rows that have no allocation to slice from yet).
"""
from cython.parallel cimport parallel, prange, threadid
from libc.math cimport INFINITY, exp
from libc.stdint cimport SIZE_MAX, int64_t
from libc.stdlib cimport free, malloc


cdef int64_t _allocate_row(const int64_t[::1] indptr, const int64_t[::1] indices,
                           const double[::1] data, Py_ssize_t i, const double[:, ::1] log_phi,
                           const double[::1] log_weight, double log_slice, double uniform,
                           bint weighted, double* weight) noexcept nogil:
    """Component drawn for row i, or -1 if no component's weight reaches the slice.

    ``weight`` is scratch space of one double per component.
    """
    cdef Py_ssize_t j, p, K = log_phi.shape[0]
    cdef double loglik, top = -INFINITY, total = 0.0, cumulative = 0.0
    cdef int64_t chosen = -1
    for j in range(K):
        weight[j] = -INFINITY
        if log_weight[j] >= log_slice:
            loglik = log_weight[j] if weighted else 0.0
            for p in range(indptr[i], indptr[i + 1]):
                loglik = loglik + data[p] * log_phi[j, indices[p]]
            weight[j] = loglik
            top = max(top, loglik)
    if top == -INFINITY:
        return -1
    for j in range(K):
        weight[j] = exp(weight[j] - top)       # 0 for non-candidates; 1 for the best
        total = total + weight[j]
    uniform = uniform * total
    for j in range(K):
        if weight[j] > 0.0:
            cumulative = cumulative + weight[j]
            chosen = j
            if cumulative > uniform:
                break
    return chosen


cdef double* _scratch(Py_ssize_t threads, Py_ssize_t K) except NULL:
    """malloc'd space for K doubles per thread (the caller frees it), or MemoryError."""
    cdef size_t per_thread = max(K, 1) * sizeof(double)
    cdef double* space = NULL
    if <size_t> threads <= SIZE_MAX // per_thread:      # else the size overflows
        space = <double*> malloc(threads * per_thread)
    if space == NULL:
        raise MemoryError(f"slice_allocate: no memory for the scratch space of {K} components "
                          f"in each of {threads} threads "
                          f"({<double> threads * per_thread / 1e9:.3g} GB)")
    return space


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
    most one per row. MemoryError if the scratch space (K doubles per thread) cannot be had.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1, K = log_phi.shape[0], i
    cdef Py_ssize_t missing = 0, threads = max(1, min(n_jobs, n))
    cdef double* scratch = _scratch(threads, K)
    cdef double* weight
    with nogil, parallel(num_threads=threads):
        weight = scratch + threadid() * max(K, 1)
        for i in prange(n, schedule="static"):
            z[i] = _allocate_row(indptr, indices, data, i, log_phi, log_weight, log_slice[i],
                                 uniform[i], weighted, weight)
    free(scratch)
    for i in range(n):
        if z[i] < 0:
            missing += 1
    return missing
