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
