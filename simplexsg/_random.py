"""Turn a user's ``random_state`` into a numpy Generator (the kernels draw from its bit generator)."""
import numbers

import numpy as np


def check_generator(random_state):
    """Return a ``numpy.random.Generator`` for ``random_state``.

    None gives fresh OS entropy; an int or ``SeedSequence`` seeds a new PCG64 generator; a
    ``Generator`` is used as is (and advanced), so passing the same Generator to successive
    calls draws one continuous stream.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int, a numpy SeedSequence or a numpy Generator, "
        f"got {type(random_state).__name__}"
    )


def document_bit_generators(seed, iteration, doc_indices):
    """One PCG64 bit generator per document, a function of (seed, iteration, document index) only.

    Document ``d`` of iteration ``t`` gets
    ``PCG64(SeedSequence(entropy, spawn_key=root_key + (t, d)))``, where ``entropy`` and
    ``root_key`` are those of ``seed`` (a ``SeedSequence``; an int or sequence of ints is used as
    the entropy, with an empty root key). The streams are independent of how documents are split
    into minibatches or across threads: a kernel that draws for document ``d`` only from its own
    generator gives the same result for any ``n_jobs``.

    PCG64 costs about 11 us to create from a SeedSequence, half of it the SeedSequence itself;
    SFC64 and Philox are no cheaper and MT19937 is about 9x dearer.

    Parameters
    ----------
    seed : int, sequence of ints or numpy.random.SeedSequence
    iteration : int >= 0
    doc_indices : iterable of ints >= 0 (global document indices)

    Returns
    -------
    list of numpy.random.PCG64, in the order of ``doc_indices``.
    """
    if isinstance(seed, np.random.SeedSequence):
        entropy, root_key, pool_size = seed.entropy, tuple(seed.spawn_key), seed.pool_size
    else:
        entropy, root_key, pool_size = seed, (), 4
    if entropy is None:
        raise ValueError("seed must carry its entropy (an int or a SeedSequence), got None")
    if isinstance(iteration, bool) or not isinstance(iteration, numbers.Integral) or iteration < 0:
        raise ValueError(f"iteration must be an int >= 0, got {iteration!r}")
    iteration = int(iteration)
    return [
        np.random.PCG64(np.random.SeedSequence(
            entropy, spawn_key=root_key + (iteration, int(d)), pool_size=pool_size))
        for d in doc_indices
    ]


def seed_sequence(random_state):
    """A SeedSequence for an estimator's ``random_state`` (None: fresh entropy; Generator: a
    seed drawn from it). Estimators derive every stream from it with ``substream``."""
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(2 ** 63)))
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.SeedSequence(random_state)
    raise TypeError("random_state must be None, an int, a numpy SeedSequence or Generator, "
                    f"got {type(random_state).__name__}")


def substream(seed, *key):
    """A SeedSequence of ``seed``'s entropy with ``key`` appended to its spawn key."""
    return np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + key)
