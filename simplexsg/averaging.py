"""Posterior-mean estimates from the tail of a chain, when its length is or is not known.

``TailAverage(start)`` averages the samples of steps ``t >= start``: the burn-in is fixed.

``TailAverage(None)`` serves a chain that may stop at any step (a time budget, a stopping rule):
the steps are cut into blocks that grow by half, [0, 1), [1, 2), [2, 3), [3, 5), [5, 8),
[8, 12), [12, 18), ... (each block ends at ``e + ceil(e / 2)`` when the previous one ends at
e), and the average after T steps covers the last completed block and the block in progress.
That discards about 4/9 to 2/3 of the chain whenever it stops (at T >= 12: at least 0.4 T
steps, fewer than 2 T / 3), and holds two running sums only.

Why blocks that grow by half and not double (which discards a quarter to a half): a
stochastic-gradient chain is still moving for much of a fit, and an average that reaches
further back is dragged by the steps it has left behind. ``benchmarks/lda_averaging.py``
(SCIRLDA's defaults on the study corpora, 64 rows) finds the same final perplexity on most
corpora and 0.6-2.6% less on short documents, whose chains still move after 20 passes; narrower
windows (blocks growing by a quarter, the last quarter) gain more there and lose more on the
smallest corpora, whose samples are noisiest.
"""
import numpy as np


class TailAverage:
    """Running mean of the samples ``x_t`` (arrays of one shape) of the steps t = 0, 1, ...

    ``add(t, x)`` records a sample. A caller that computes the new sum itself (e.g. a kernel
    that adds the sample into a fresh array while producing it) calls ``open(t)``, which says
    whether step t is averaged and moves the bookkeeping on, then ``record(total)`` with the
    new sum ``current + x`` (``current``: the sum so far of the block in progress, None when
    it is empty). Sums are rebound, never changed in place, so a shallow copy is a snapshot
    (what ``restore_on_error`` needs).

    Parameters
    ----------
    start : int >= 0 or None
        First step averaged (the burn-in); None: the growing-block rule of the module
        docstring.

    Attributes
    ----------
    start : first step of the current average (moves forward under the growing-block
        rule).
    count : number of samples in it.
    """

    def __init__(self, start=None):
        self.fixed = start is not None
        self.start = 0 if start is None else int(start)
        self._previous, self._n_previous = None, 0
        self._current, self._n_current = None, 0
        self._block_end = 1              # growing blocks: the block in progress ends here

    @property
    def current(self):
        """The sum of the block in progress, or None while it is empty."""
        return self._current

    def open(self, t):
        """Whether the sample of step ``t`` (steps in increasing order) is averaged; if so,
        ``record`` must follow with the new sum."""
        if self.fixed:
            return t >= self.start
        if t >= self._block_end:         # the block in progress is complete: it becomes the
            self.start = self._block_end - self._n_current      # previous one
            self._previous, self._n_previous = self._current, self._n_current
            self._current, self._n_current = None, 0
            while t >= self._block_end:
                self._block_end += (self._block_end + 1) // 2
        return True

    def record(self, total):
        """The block's new sum after ``open``: its old sum plus the sample."""
        self._current = total
        self._n_current += 1

    def add(self, t, x):
        """Record the sample ``x`` of step ``t`` (steps come in increasing order); the average
        keeps a copy, so the caller may change ``x`` afterwards."""
        if self.open(t):
            self.record(np.array(x, copy=True) if self._current is None else self._current + x)

    @property
    def count(self):
        return self._n_previous + self._n_current

    def mean(self):
        """The average, or None before the first averaged sample."""
        if not self.count:
            return None
        total = self._current if self._previous is None else (
            self._previous if self._current is None else self._previous + self._current)
        return total / self.count


class ThinnedTail:
    """At most ``capacity`` evenly spaced samples of the averaging window, for a chain of
    known or unknown length.

    A sample of step t is kept when ``t >= start`` (the window's first step, e.g.
    ``TailAverage.start``) and t is a multiple of the stride s (a power of two, at first 1).
    When a new sample would exceed ``capacity``, every other one is dropped (those not on the
    grid of 2s) and s doubles; samples that fall out of a moving window are dropped. So the
    kept samples are spaced s apart over ``[start, T)`` and, in a window of at least
    ``capacity`` steps, number between ``capacity // 2`` and ``capacity`` (fewer just after
    the growing-block rule moves the window forward). Lists are rebound, never changed in place,
    so a shallow copy is a snapshot.

    Parameters
    ----------
    capacity : int >= 1
    """

    def __init__(self, capacity):
        self.capacity = int(capacity)
        self.stride = 1
        self.steps, self.samples = [], []

    def add(self, t, start, make):
        """Offer step ``t`` (steps in increasing order) with the window starting at ``start``;
        ``make()`` builds the sample and is called only when it is kept."""
        if self.steps and self.steps[0] < start:
            kept = [i for i, step in enumerate(self.steps) if step >= start]
            self.steps, self.samples = ([self.steps[i] for i in kept],
                                        [self.samples[i] for i in kept])
        if t < start or t % self.stride:
            return
        if len(self.steps) == self.capacity:
            self.stride *= 2
            kept = [i for i, step in enumerate(self.steps) if step % self.stride == 0]
            self.steps, self.samples = ([self.steps[i] for i in kept],
                                        [self.samples[i] for i in kept])
            if t % self.stride:
                return
        self.steps = self.steps + [t]
        self.samples = self.samples + [make()]
