"""Where the allocation step runs: an executor draws a minibatch's allocations and sums its
counts by component.

The slice sampler (``slice_sampler.allocate`` and ``slice_sampler.update``) hands an executor
the rows it names (``take``), the ``log phi`` of the components, the log stick weights and each
row's log slice and uniform, all drawn by the sampler; the executor runs the kernel
``slice_allocate`` wherever the rows are and returns their labels, then their counts by
component. ``LocalExecutor`` runs it in this process; ``simplexsg.dpmixture.distributed``'s
``DaskExecutor`` on the workers holding the rows, with the same methods. The counts are
integer-valued sums, exact in any order, so every executor gives the same fit bit for bit.
"""
import numpy as np
import scipy.sparse as sp

from .._ext._dp import slice_allocate, summed_by_component

__all__ = ["LocalExecutor", "allocate_rows", "component_counts", "kernel_layout"]


def allocate_rows(X, log_phi, log_w, log_slice, uniforms, weighted, n_jobs):
    """Components z (n,) of the CSR rows X (n, d), drawn by the kernel ``slice_allocate`` from
    ``log_phi`` (J, d), ``log_w`` (J,), ``log_slice`` (n,) and ``uniforms`` (n,) (step 3 of
    ``slice_sampler``); ``weighted``: rows new to the chain, drawn ∝ w_j Mult(x | phi_j)."""
    z = np.empty(X.shape[0], dtype=np.int64)
    missing = slice_allocate(X.indptr.astype(np.int64, copy=False),
                             X.indices.astype(np.int64, copy=False),
                             X.data.astype(np.float64, copy=False),
                             np.ascontiguousarray(log_phi), log_w, log_slice, uniforms, z,
                             weighted, n_jobs)
    if missing:  # cannot happen: w_z >= u_i always holds for the row's own component
        raise RuntimeError(f"{missing} rows found no component above their slice")
    return z


def kernel_layout(X):
    """The CSR count matrix X as the kernels read it: int64 indptr and indices, float64
    counts (the same values), so that ``allocate_rows`` and ``split_merge.SplitMerge`` convert
    nothing per call where scipy keeps the int64 indices (``csr_array`` does)."""
    return sp.csr_array((X.data.astype(np.float64), X.indices.astype(np.int64),
                         X.indptr.astype(np.int64)), shape=X.shape)


def component_counts(X, z, n_components):
    """Sparse (n_components, d) sums of the CSR count rows X (n, d) by component z (n,).

    Integer-valued float64, exact: the sum over any split of the rows is the same array, so the
    shares of a Dask fit add up to the in-process counts bit for bit."""
    indicator = sp.csr_matrix((np.ones(z.size), (z, np.arange(z.size))),
                              shape=(n_components, z.size))
    return indicator @ X


class LocalExecutor:
    """Allocations and component counts in this process (``DaskExecutor`` has the same
    methods)."""

    @staticmethod
    def take(X, rows):
        """The rows ``rows`` (sorted; None: all) of X as ``allocate`` and ``counts`` read them."""
        return X if rows is None else X[rows]

    @staticmethod
    def read(X, rows):
        """The rows ``rows`` (sorted) of X, CSR in this process: those the driver needs whole
        (the pilot's, the convergence check's)."""
        return X[rows]

    @staticmethod
    def row_entries(X):
        """Stored entries of each row of X (n_rows,)."""
        return np.diff(X.indptr)

    @staticmethod
    def allocate(X_rows, log_phi, log_w, log_slice, uniforms, weighted, n_jobs):
        """``allocate_rows`` of ``X_rows``."""
        return allocate_rows(X_rows, log_phi, log_w, log_slice, uniforms, weighted, n_jobs)

    @staticmethod
    def counts(X_rows, z, n_components):
        """Dense ``component_counts`` of ``X_rows`` by their components z (n_components,
        d), in one pass over the stored counts (``summed_by_component``)."""
        return summed_by_component(X_rows.indptr.astype(np.int64, copy=False),
                                   X_rows.indices.astype(np.int64, copy=False),
                                   X_rows.data.astype(np.float64, copy=False),
                                   z.astype(np.int64, copy=False), n_components, X_rows.shape[1])
