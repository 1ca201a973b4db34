"""Turn a user's ``random_state`` into a numpy Generator (the kernels draw from its bit generator)."""
import hashlib
import numbers

import numpy as np
import scipy.sparse as sp

from ._ext._bitgen import DocumentStreams


def check_generator(random_state):
    """Return a ``numpy.random.Generator`` for ``random_state``.

    None gives fresh OS entropy; an int or ``SeedSequence`` seeds a new PCG64 generator; a
    ``Generator`` is used as is (and advanced), so passing the same Generator to successive
    calls draws one continuous stream.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and random_state < 0:
        raise ValueError(f"random_state must be an int >= 0, got {random_state}")
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int, a numpy SeedSequence or a numpy Generator, "
        f"got {type(random_state).__name__}"
    )


def document_streams(seed, iteration, doc_indices):
    """One bit generator per document, a function of (seed, iteration, document index) only.

    The streams are xoshiro256** generators (``simplexsg._ext._bitgen.DocumentStreams``) seeded
    from the 256-bit key ``SeedSequence(entropy, spawn_key=root_key + (iteration,))`` and the
    document's global index, where ``entropy`` and ``root_key`` are those of ``seed`` (a
    ``SeedSequence``; an int or sequence of ints is used as the entropy, with an empty root key).
    They are independent of how documents are split into minibatches or across threads: a kernel
    that draws for document ``d`` only from its own stream gives the same result for any
    ``n_jobs``.

    Parameters
    ----------
    seed : int, sequence of ints or numpy.random.SeedSequence
    iteration : int >= 0
    doc_indices : iterable of ints >= 0 (global document indices)

    Returns
    -------
    DocumentStreams: ``len(doc_indices)`` streams, in the order of ``doc_indices``;
    ``.addresses`` are their ``bitgen_t*`` for a kernel, valid while the object is alive.
    """
    if isinstance(seed, np.random.SeedSequence):
        entropy, root_key, pool_size = seed.entropy, tuple(seed.spawn_key), seed.pool_size
    else:
        entropy, root_key, pool_size = seed, (), 4
    if entropy is None:
        raise ValueError("seed must carry its entropy (an int or a SeedSequence), got None")
    if isinstance(iteration, bool) or not isinstance(iteration, numbers.Integral) or iteration < 0:
        raise ValueError(f"iteration must be an int >= 0, got {iteration!r}")
    key = np.random.SeedSequence(entropy, spawn_key=root_key + (int(iteration),),
                                 pool_size=pool_size).generate_state(4, np.uint64)
    doc_indices = np.fromiter(doc_indices, dtype=np.int64)
    if doc_indices.size and doc_indices.min() < 0:
        raise ValueError("document indices must be >= 0")
    return DocumentStreams(key, doc_indices)


def content_ids(X):
    """A 63-bit id per row of a count matrix, a function of the row's words and counts only.

    BLAKE2b (8-byte digest) of the row's word indices and counts in canonical CSR form (sorted
    indices, duplicates summed, no stored zeros), so equal documents get equal ids wherever they
    sit. Used as ``document_streams``' document indices and to seed per-document shuffles, which
    makes a document's Monte Carlo estimates independent of its position in a batch.
    Returns int64 (n_rows,), >= 0.
    """
    X = sp.csr_matrix(X, dtype=np.int64, copy=True)
    X.sum_duplicates()
    X.eliminate_zeros()
    indices, counts = X.indices.astype(np.int64), X.data
    ids = np.empty(X.shape[0], dtype=np.int64)
    for d, (start, stop) in enumerate(zip(X.indptr[:-1], X.indptr[1:])):
        digest = hashlib.blake2b(indices[start:stop].tobytes(), digest_size=8)
        digest.update(counts[start:stop].tobytes())
        ids[d] = int.from_bytes(digest.digest(), "little") >> 1
    return ids


def seed_sequence(random_state):
    """A SeedSequence for an estimator's ``random_state`` (None: fresh entropy; Generator or
    legacy RandomState: a seed drawn from it). Estimators derive every stream from it with
    ``substream``."""
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(2 ** 63)))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(int(random_state.randint(2 ** 63 - 1, dtype=np.int64)))
    if random_state is None or isinstance(random_state, (int, np.integer)):
        if random_state is not None and random_state < 0:
            raise ValueError(f"random_state must be an int >= 0, got {random_state}")
        return np.random.SeedSequence(random_state)
    raise TypeError("random_state must be None, an int, or a numpy SeedSequence, Generator or "
                    f"RandomState, got {type(random_state).__name__}")


def substream(seed, *key):
    """A SeedSequence of ``seed``'s entropy with ``key`` appended to its spawn key."""
    return np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + key)
