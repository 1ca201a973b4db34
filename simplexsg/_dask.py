"""What the Dask versions of the models share: row shards held as recomputable tasks (a matrix
cut by the driver, or files the workers read: ``CorpusShards``), their placement, reading rows
back, a pairwise tree sum on the workers, sparse count sums and byte accounting.

A shard is a task whose argument is its rows (or the file it reads), not scattered data: when a
worker dies, the scheduler recomputes its shards from the tasks, with no replicas to manage.
Every task is submitted with ``pure=False`` and all of its inputs (random draws included) as
arguments, so a task rerun elsewhere returns the same result.

Dask is imported by the functions that need it only: the package imports without it.
"""
import numpy as np
import scipy.sparse as sp

from ._fitting import array_digest
from .corpus import check_counts
from .readers import UCIBowCorpus, _read_vocabulary

#: Rows per block when a worker reads a file.
READ_BLOCK = 10_000


# ------------------------------------------------------------------ on the workers
def hold(rows):
    """A shard whose rows travel in its task, so that the scheduler can recompute it."""
    return rows


def read_shard(path, reader, vocab_path):
    """The rows of one file, CSR int64 (n, W), checked as ``fit`` checks a matrix."""
    corpus = reader(path, vocab_path)
    blocks = list(corpus.iter_csr(READ_BLOCK))
    X = sp.vstack(blocks, format="csr") if blocks else sp.csr_array((0, corpus.n_features))
    return check_counts(X)


def row_entries(shard):
    """Stored entries of each row of a CSR shard (n,), int64."""
    return np.diff(shard.indptr).astype(np.int64)


def take_rows(shard, rows):
    """The shard's rows ``rows`` (local, sorted), CSR."""
    return shard[rows]


def describe(shard):
    """(rows, columns, digest, sum of the entries) of a CSR shard."""
    return (shard.shape[0], shard.shape[1], array_digest(shard.indptr, shard.indices, shard.data),
            float(shard.data.sum()))


def add_coo(a, b):
    """The sum of two sparse COO arrays of one shape, in canonical order (duplicates summed)."""
    total = sp.coo_array(
        (np.concatenate([a.data, b.data]),
         tuple(np.concatenate(pair) for pair in zip(a.coords, b.coords))), shape=a.shape)
    total.sum_duplicates()
    return total


# ------------------------------------------------------------------ on the driver
def worker_slots(client):
    """One worker address per thread of the cluster, workers interleaved."""
    threads = client.nthreads()
    return [address for turn in range(max(threads.values()))
            for address, n in sorted(threads.items()) if turn < n]


def submit_shard(client, function, *args, slot):
    """A shard task placed on ``slot`` (another worker may recompute it)."""
    return client.submit(function, *args, workers=[slot], allow_other_workers=True, pure=False)


def map_shares(client, function, shares):
    """``function(shard, local rows)`` for each share of ``ShardedCorpus.shares``, run where
    the shard lives, gathered in share order (a step's first round trip: the columns each
    share needs)."""
    return client.gather([client.submit(function, shard, rows, pure=False)
                          for shard, rows, _ in shares])


def tree_sum(client, add, parts):
    """The future of ``add`` folded over the futures ``parts`` in order, by pairs of neighbours
    (``add(a, b)``: ``a`` comes before ``b``), each sum a task on the workers."""
    while len(parts) > 1:
        parts = [client.submit(add, *parts[i:i + 2], pure=False) if i + 1 < len(parts)
                 else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


def nbytes(*arrays):
    """Bytes of numpy arrays and sparse COO arrays (data and coordinates); None counts 0."""
    total = 0
    for a in arrays:
        if sp.issparse(a):
            total += a.data.nbytes + sum(c.nbytes for c in a.coords)
        elif a is not None:
            total += a.nbytes
    return total


class ShardedCorpus:
    """The driver's handle on a CSR matrix held by the workers in row shards: shard futures,
    ``starts`` (n_shards + 1,) their first rows, ``shape`` (n_rows, n_columns), ``total`` (the
    sum of the entries: the tokens of a corpus), ``fingerprint`` (a digest per shard).

    ``corpus[rows]`` is ``rows``: in a training loop a minibatch is named, not moved.
    """

    def __init__(self, client, shards, id2word=None):
        described = client.gather([client.submit(describe, s, pure=False) for s in shards])
        widths = {W for _, W, _, _ in described}
        if len(widths) != 1:
            raise ValueError(f"the shards have different vocabulary sizes {sorted(widths)}: "
                             "give every file the same vocabulary (vocab_path)")
        self.client, self.shards, self.id2word = client, shards, id2word
        self.starts = np.concatenate([[0], np.cumsum([n for n, _, _, _ in described])])
        self.shape = (int(self.starts[-1]), widths.pop())
        self.total = sum(total for _, _, _, total in described)
        self.fingerprint = ("shards", self.shape, tuple(d for _, _, d, _ in described))

    @classmethod
    def scatter(cls, client, X):
        """An in-memory CSR matrix cut into one shard of consecutive rows per worker thread."""
        import dask
        slots = worker_slots(client)
        cuts = np.linspace(0, X.shape[0], len(slots) + 1).astype(np.int64)
        # the rows travel in the task (so that it is recomputable), which Dask warns about
        with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1 PiB"}):
            shards = [submit_shard(client, hold, X[a:b], slot=slot)
                      for a, b, slot in zip(cuts[:-1], cuts[1:], slots)]
        return cls(client, shards)

    def __getitem__(self, rows):
        return rows

    def row_entries(self):
        """Stored entries of every row (n_rows,), int64, gathered from the workers."""
        client = self.client
        parts = client.gather([client.submit(row_entries, s, pure=False) for s in self.shards])
        return np.concatenate(parts)

    def rows(self, rows):
        """The sorted global ``rows`` read back from the workers: CSR (len(rows), n_columns),
        in order. For the few rows a driver needs whole (a pilot, a monitor sample)."""
        rows = np.asarray(rows, dtype=np.int64)
        shares = self.shares(rows)
        if not shares:
            return sp.csr_array((0, self.shape[1]), dtype=np.int64)
        client = self.client
        return sp.vstack(client.gather([client.submit(take_rows, shard, local, pure=False)
                                        for shard, local, _ in shares]), format="csr")

    def shares(self, rows):
        """(shard, local rows, first position) for each shard holding some of the sorted
        global ``rows``, in minibatch order."""
        cuts = np.searchsorted(rows, self.starts)
        return [(self.shards[s], rows[a:b] - self.starts[s], int(a))
                for s, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])) if b > a]


class CorpusShards:
    """A corpus in files that the workers of a model's Dask client read themselves
    (``LDA(client=...)``, ``DPMixture(client=...)``), one shard per file, in the order given:
    the fit equals the in-process fit of the files' rows stacked in that order. Every worker
    must see the paths (a shared file system).

    ``reader``: ``simplexsg.readers.UCIBowCorpus`` (default) or ``LDACCorpus``, built on the
    worker as ``reader(path, vocab_path)``; every file must have the same vocabulary size
    (LDA-C files: give ``vocab_path``). The driver opens only ``vocab_path`` (to name the
    words).
    """

    def __init__(self, paths, reader=UCIBowCorpus, vocab_path=None):
        self.paths, self.reader, self.vocab_path = [str(p) for p in paths], reader, vocab_path
        if not self.paths:
            raise ValueError("CorpusShards needs at least one file")

    def read(self, client):
        """The ``ShardedCorpus`` of the files, read by the workers."""
        slots = worker_slots(client)
        shards = [submit_shard(client, read_shard, path, self.reader, self.vocab_path,
                               slot=slots[i % len(slots)]) for i, path in enumerate(self.paths)]
        id2word = None if self.vocab_path is None else _read_vocabulary(self.vocab_path)
        return ShardedCorpus(client, shards, id2word)
