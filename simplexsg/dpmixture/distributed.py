"""DPMixture on a Dask cluster: the rows stay on the workers, an iteration moves ``log phi``
columns, slices and labels.

``DPMixture(client=..., sampler="scir" or "sgrld").fit(X)`` cuts X into row shards held by the
workers (``simplexsg._dask.ShardedCorpus``, as LDA's: each shard a task, recomputed when its
worker is lost); ``fit(CorpusShards(paths))`` has the workers read the files, one shard each,
and never holds the rows in this process: the driver reads back only the pilot's rows and the
convergence check's sample (``ShardedCorpus.rows``) and each row's entry count. ``DaskExecutor`` is the training loop's executor seam, with the methods of
``simplexsg.dpmixture.local.LocalExecutor``. The driver keeps the whole chain state and every
random draw: it extends the sticks, draws each row's slice ``u_i ~ U(0, w_{z_i})`` from its
previous label and each row's uniform from the iteration's generator, exactly as in process.
Then, for each shard holding rows of the minibatch (its share, a contiguous run of the sorted
minibatch):

1. the share's features (sorted column ids of its stored counts) come back to the driver;
2. the driver sends the share's row numbers, its rows' log slices and uniforms (2 floats a
   row), the log stick weights (J,) and the ``log phi`` columns of those features only
   (J x |features|, never J x d); the worker runs the allocation kernel (``slice_allocate``,
   the same arithmetic on the same values as in process) and returns the rows' new labels and
   their (component, feature, count) sums;
3. the shares' results are summed by a pairwise tree of tasks on the workers (labels
   concatenated in minibatch order); the driver receives at most the minibatch's features x J
   counts and takes the global step (``slice_sampler.update``) as in process.

The counts are integer-valued (exact in float64, scaled by N / |S| on the driver after the
sum), each row's draw depends only on its own slice and uniform, so the fit equals the
in-process fit bit for bit for any number of workers, and a task rerun after a lost worker
returns the same result. The exact sampler does not fit this seam: its split-merge moves
(``split_merge.SplitMerge``) change whole clusters using every row of the clusters they touch.
"""
from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from .._dask import CorpusShards, ShardedCorpus, add_coo, map_shares, nbytes, tree_sum
from .local import allocate_rows, component_counts

__all__ = ["CorpusShards", "DaskExecutor", "ShardedCorpus"]

#: A share's (or a sum of shares') result: labels (n,) in minibatch order, and the rows' counts
#: summed by component, sparse COO (J, d) with global feature ids.
Allocation = namedtuple("Allocation", "labels counts")


# ------------------------------------------------------------------ on the workers
def _share_features(shard, rows):
    """Sorted global ids (int64) of the columns stored in the shard's rows ``rows``, zero
    counts included (the kernel reads their ``log phi``)."""
    return np.unique(shard[rows].indices).astype(np.int64)


def _share_allocation(shard, rows, columns, log_w, log_slice, uniforms, weighted, n_jobs):
    """``allocate_rows`` of the shard's rows ``rows`` with ``columns`` (J, |features|) the
    ``log phi`` of their features (``_share_features``): their ``Allocation``."""
    X = shard[rows]
    features = np.unique(X.indices)
    local = sp.csr_matrix((X.data, np.searchsorted(features, X.indices), X.indptr),
                          shape=(X.shape[0], features.size))
    z = allocate_rows(local, columns, log_w, log_slice, uniforms, weighted, n_jobs)
    return Allocation(z, sp.coo_array(component_counts(X, z, columns.shape[0])))


def _add(a, b):
    """Two shares' ``Allocation``, ``a`` before ``b`` in the minibatch."""
    return Allocation(np.concatenate([a.labels, b.labels]), add_coo(a.counts, b.counts))


# ------------------------------------------------------------------ on the driver
class DaskExecutor:
    """Allocations and component counts on the workers holding ``corpus`` (a
    ``ShardedCorpus``), with the methods of ``simplexsg.dpmixture.local.LocalExecutor``.

    ``traffic``: per allocation, a dict of the bytes of the arrays the driver ``sent`` (row
    numbers, slices, uniforms, log weights, ``log phi`` columns) and ``received`` (features,
    labels, summed counts), the minibatch's distinct ``features``, the ``components`` J and
    the ``shares``.
    """

    def __init__(self, client, corpus):
        self.client, self.corpus = client, corpus
        self.traffic = []
        self._last = None                 # the last Allocation, for ``counts``

    def take(self, X, rows):
        """The sorted global ``rows`` (None: all of them), named, not moved."""
        return np.arange(self.corpus.shape[0]) if rows is None else self.corpus[rows]

    def read(self, X, rows):
        """The sorted global ``rows``, CSR, read back from the workers (a pilot, a sample)."""
        return sp.csr_matrix(self.corpus.rows(rows))

    def row_entries(self, X):
        """Stored entries of each row (n_rows,), from the workers."""
        return self.corpus.row_entries()

    def allocate(self, rows, log_phi, log_w, log_slice, uniforms, weighted, n_jobs):
        """``allocate_rows`` of the sorted global ``rows`` (n,) on their workers; ``log_slice``
        and ``uniforms`` (n,) in the order of ``rows``. Returns the labels (n,)."""
        client, shares = self.client, self.corpus.shares(np.asarray(rows))
        features = map_shares(client, _share_features, shares)
        log_w = np.ascontiguousarray(log_w, dtype=np.float64)
        parts, sent = [], 0
        for (shard, local, first), cols in zip(shares, features):
            share = slice(first, first + len(local))
            args = (local, np.ascontiguousarray(log_phi[:, cols]), log_w, log_slice[share],
                    uniforms[share])
            parts.append(client.submit(_share_allocation, shard, *args, weighted, n_jobs,
                                       pure=False))
            sent += nbytes(local, *args)              # + the row numbers of round trip 1
        self._last = self._gather(tree_sum(client, _add, parts))
        self.traffic.append(dict(
            sent=sent, received=nbytes(*features, *self._last),
            features=len(np.unique(np.concatenate(features))), components=log_phi.shape[0],
            shares=len(shares)))
        return self._last.labels.copy()

    def counts(self, rows, z, n_components):
        """Dense (n_components, d) counts of ``rows`` by component, summed by the workers
        during ``allocate``; z must be the labels it returned."""
        if self._last is None or not np.array_equal(self._last.labels, z):
            raise RuntimeError("DaskExecutor.counts needs the labels of the last allocation")
        return sp.csr_array(self._last.counts)[:n_components].toarray()

    def _gather(self, future):
        return future.result()
