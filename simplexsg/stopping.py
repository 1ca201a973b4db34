"""Stopping rule for a noisy, decreasing score (e.g. a held-out perplexity)."""


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
