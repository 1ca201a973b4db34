"""Posterior-mean estimates from the tail of a chain, when its length is or is not known.

``TailAverage(start)`` averages the samples of steps ``t >= start``: the burn-in is fixed.

``TailAverage(None)`` serves a chain that may stop at any step (a time budget, a stopping rule):
the steps are cut into blocks [0, 1), [1, 2), [2, 4), [4, 8), ... [2^j, 2^(j+1)), and the
average after T steps covers the last completed block and the block in progress, i.e. the steps
from ``2^(j-1)`` on, where ``2^j <= T - 1 < 2^(j+1)`` (T >= 3). That discards at least the
first quarter and less than the first half of the chain, whenever it stops, and holds two
running sums only.
"""


class TailAverage:
    """Running mean of the samples ``x_t`` (arrays of one shape) of the steps t = 0, 1, ...

    ``add`` rebinds its sums and never changes an array in place, so a shallow copy is a
    snapshot (what ``restore_on_error`` needs).

    Parameters
    ----------
    start : int >= 0 or None
        First step averaged (the burn-in); None: the doubling-block rule of the module
        docstring.

    Attributes
    ----------
    start : first step of the current average (moves forward under the doubling rule).
    count : number of samples in it.
    """

    def __init__(self, start=None):
        self.fixed = start is not None
        self.start = 0 if start is None else int(start)
        self._previous, self._n_previous = 0.0, 0
        self._current, self._n_current = 0.0, 0
        self._block_end = 1              # doubling rule: the block in progress ends here

    def add(self, t, x):
        """Record the sample ``x`` of step ``t`` (steps come in increasing order)."""
        if self.fixed:
            if t >= self.start:
                self._current = self._current + x
                self._n_current += 1
            return
        if t >= self._block_end:         # the block in progress is complete: it becomes the
            self.start = self._block_end - self._n_current      # previous one
            self._previous, self._n_previous = self._current, self._n_current
            self._current, self._n_current = 0.0, 0
            while t >= self._block_end:
                self._block_end *= 2
        self._current = self._current + x
        self._n_current += 1

    @property
    def count(self):
        return self._n_previous + self._n_current

    def mean(self):
        """The average, or None before the first averaged sample."""
        if not self.count:
            return None
        return (self._previous + self._current) / self.count
