"""Stopping rule for a noisy, decreasing score (e.g. a held-out perplexity): ``Plateau``, and
``PlateauMonitor``, the convergence check that applies it to a pluggable score of a model."""
from time import perf_counter


class Plateau:
    """Says when a score to be minimised has stopped improving.

    ``update(score)`` returns True once ``patience`` successive scores have each failed to beat
    the best score seen before them by the fraction ``tol`` (score >= best * (1 - tol)):
    scikit-learn's ``n_iter_no_change`` / ``tol`` rule, with a relative tolerance since a
    perplexity has no natural scale. Scores must be positive.
    """

    def __init__(self, tol=1e-3, patience=2):
        self.tol, self.patience = float(tol), int(patience)
        self.best, self.misses = float("inf"), 0

    def update(self, score):
        if score < self.best * (1.0 - self.tol):
            self.misses = 0
        else:
            self.misses += 1
        self.best = min(self.best, score)
        return self.misses >= self.patience


class PlateauMonitor(Plateau):
    """A convergence check: the ``Plateau(tol, patience)`` rule on ``score(model)``, recorded.

    ``score``: a callable ``score(model) -> float``, positive, smaller is better (a perplexity,
    minus a log-likelihood). It must pickle (a module-level function or a small class with
    ``__call__``, not a closure), since a fitted model keeps its monitor, and hold no reference
    to the model. ``first_check`` (int, default 0): the first checks that score nothing and
    return False (those numbered 0, ..., first_check - 1; none when it is <= 0). ``name``
    (default "score"): the key of the score in ``history``.

    ``check(model, step, **record)`` (the caller's step or iteration count ``step``) scores the
    model and returns ``update(score)``: True on a plateau. Each scored check appends to
    ``history`` the dict ``{"step": step, name: the score, "check_seconds": the seconds the
    score took (``time.perf_counter``), **record}`` (``record``: what else the caller notes at
    the check, e.g. the training seconds so far). ``history`` and the counters are rebound,
    never changed in place, so a shallow copy (``copy.copy``) is a snapshot that a later check
    leaves as it was.
    """

    def __init__(self, score, tol=1e-3, patience=2, first_check=0, name="score"):
        super().__init__(tol, patience)
        self.score, self.first_check, self.name = score, int(first_check), name
        self.checks, self.history = 0, []

    def check(self, model, step, **record):
        self.checks += 1
        if self.checks <= self.first_check:
            return False
        start = perf_counter()
        value = self.score(model)
        entry = {"step": step, self.name: value, "check_seconds": perf_counter() - start,
                 **record}
        self.history = self.history + [entry]
        return self.update(value)
