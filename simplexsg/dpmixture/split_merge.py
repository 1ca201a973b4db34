"""Split-merge moves for the exact sampler of the DP mixture (Jain & Neal 2004, with the
sequentially-allocated proposal of Dahl 2003).

The slice sampler changes one row's component at a time, so a component that holds two true
clusters, or two components that hold halves of one, persist for many sweeps. A split-merge move
changes a whole block at once, by Metropolis-Hastings on the labelled allocations z with the
components and the sticks integrated out::

    p(z | alpha, X) ∝ prod_{j < J} B(1 + n_j, alpha + M_j) / B(1, alpha)
                      x prod_{occupied j} DirMult(X_j | base)

(n_j rows in component j, M_j rows in components after j, J one past the last occupied label,
X_j the summed counts of component j's rows; the multinomial coefficients are the same for
every z and are left out). The labels matter: stick-breaking weights are not exchangeable, so
the move is on labelled allocations, not on bare partitions.

One proposal: an ordered pair of distinct rows (i, k): with probability ``SPLIT_SHARE``, two
rows of a component drawn uniformly among those of at least two rows; otherwise uniform over
all pairs. Uniform pairs alone would propose to split a component of n of N rows with
probability (n / N)^2, so that two small clusters merged in one component (n = 100 of 50,000
rows: 4e-6) would wait for hundreds of thousands of proposals; the component-first draw splits
each component about as often, whatever its size. The pair's probability ``q(i, k | z)`` then
depends on the state, and its ratio between the two states enters each acceptance below
(``_ext._split_merge.log_split_pair_ratio``).

* Same component c: split. The new label e is uniform among the empty labels below J and J
  itself; k moves to e, i stays, and the other rows of c, in a random order, join i's or k's
  side by the sequential allocation of ``_ext._split_merge.sequential_allocation``
  (probability q).
  Acceptance ``p(z') |E(z)| q(i, k | z') / (p(z) q q(i, k | z))``.
* Different components c = z_i, e = z_k: merge e into c. The reverse split must be able to pick
  e again (e below or at J of the merged state); then acceptance ``p(z') q q(i, k | z') /
  (p(z) |E(z')| q(i, k | z))`` with q the probability that the sequential allocation, in a
  random order, recreates the two blocks.
  Since q <= 1, a merge whose ratio without q is already below the uniform is rejected without
  computing q, and the pass that computes q stops as soon as the part of q it has is too small
  (each row's factor is at most 1): the same decisions, at the cost of the rows needed to
  reach them. The first kind are most proposals; ``_ext._split_merge.ComponentScreen``, which
  holds each component's summed counts, draws every proposal and rejects those itself, so
  that they cost the categories of their two components and no Python.

With ``scans`` (restricted Gibbs scans, Jain & Neal 2004), a share ``SCANNED_SHARE`` of the
proposals, chosen independently of the state, go further: the sequential allocation only
launches the split, which ``scans`` scans then refine, each row of the block drawn given every
other row of the two sides (``_ext._split_merge.restricted_scans``), and q is the probability
of the last scan's outcome given the state before it. A merge's reverse launches the same way from
the merged block and scores the last scan forced to the current sides. Where the first rows of
a block say little (short rows, dense overlapping profiles), the sequential allocation alone
proposes near-random splits; the scans find the split the whole block supports. Each kind of
proposal is reversible on its own, so their mixture is too.

The random order is drawn the same way in both directions and independently of the state, so
each order defines a reversible move and so does their mixture. A move followed by exact draws
of the components and sticks given z (the exact sampler's next steps) leaves the joint
posterior invariant.
"""
import math

import numpy as np
import scipy.sparse as sp
from scipy.special import betaln, gammaln

from .._ext._split_merge import (ComponentScreen, log_labelled_prior_change,
                                 log_split_pair_ratio, restricted_scans, sequential_allocation)

__all__ = ["SplitMerge", "log_labelled_prior", "log_labelled_prior_change", "rising_factorials",
           "rows_from_label"]

#: Probability that a proposal's pair of rows is drawn from one component, a split
#: (docs/benchmarks/dp.rst, "Split proposals within a component").
SPLIT_SHARE = 0.05
#: With restricted Gibbs scans (``SplitMerge(scans=...)``), the share of the proposals that
#: make them; the others are the sequential allocation's alone (docs/benchmarks/dp.rst,
#: "Restricted Gibbs scans").
SCANNED_SHARE = 0.5
#: Counts of a category up to which a merge reads its rising factorial from a table (8 MB at
#: most; ``lgamma`` above).
RISING_TABLE = 1 << 20
#: A merge's pass over its rows for q stops once log q is this far below what acceptance
#: needs (nats): past rounding error, so the decision is the one the whole pass would make.
_DECISION_MARGIN = 1e-6


def rising_factorials(base, size):
    """``lgamma(base + c) - lgamma(base)`` for c in [0, size) (size,): the log rising factorial
    of ``base``, exact to rounding at every c (``gammaln``, not a running sum)."""
    return gammaln(base + np.arange(size)) - gammaln(base)


def log_labelled_prior(occupancy, alpha):
    """log p(z | alpha) up to a constant, from the rows per label (occupancy, any length; the
    labels after the last occupied one contribute nothing)."""
    occupied = np.flatnonzero(occupancy)
    if occupied.size == 0:
        return 0.0
    n = np.asarray(occupancy[:occupied[-1] + 1], dtype=np.float64)
    after = np.concatenate([np.cumsum(n[::-1])[::-1][1:], [0.0]])
    return float(np.sum(betaln(1.0 + n, alpha + after)) - n.size * betaln(1.0, alpha))


def rows_from_label(occupancy):
    """R (occupancy.size + 1,): R[j] the rows at labels j and after, R[-1] = 0."""
    return np.concatenate([np.cumsum(occupancy[::-1])[::-1], [0]]).astype(np.float64)


class _Blocks:
    """Rows per label of z (``occupancy``) and each occupied label's rows, sorted (``rows``),
    with what a proposal reads of them (``rows_from``: ``rows_from_label(occupancy)``; ``J``,
    one past the last occupied label; the counts of ``occupied`` labels and of ``splittable``
    ones, of at least two rows), kept up to date by ``move`` so that a proposal costs the size
    of its blocks and the labels between its two, not O(n) or O(labels)."""

    def __init__(self, z):
        self.occupancy = np.bincount(z)
        order = np.argsort(z, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(self.occupancy)])
        self.rows = {int(j): order[bounds[j]:bounds[j + 1]]
                     for j in np.flatnonzero(self.occupancy)}
        self._count()

    def _count(self):
        occupancy = self.occupancy
        self.rows_from = rows_from_label(occupancy)
        occupied = np.flatnonzero(occupancy)
        self.J, self.occupied = int(occupied[-1]) + 1, occupied.size
        self.splittable = int(np.count_nonzero(occupancy >= 2))

    def move(self, z, moved, target, source):
        """Relabel the rows ``moved`` (all of label ``source``'s or part of them) to
        ``target``, in z and here."""
        z[moved] = target
        if target >= self.occupancy.size:
            self.occupancy = np.concatenate(
                [self.occupancy, np.zeros(target + 1 - self.occupancy.size, dtype=np.int64)])
        self.occupancy[source] -= moved.size
        self.occupancy[target] += moved.size
        stay = self.rows[source][~np.isin(self.rows[source], moved, assume_unique=True)]
        if stay.size:
            self.rows[source] = stay
        else:
            del self.rows[source]
        self.rows[target] = np.sort(np.concatenate([self.rows.get(target, moved[:0]), moved]))
        self._count()

    def labels_to_choose(self):
        """The labels a split may give its new block: the empty ones below J, and J."""
        return np.concatenate([np.flatnonzero(self.occupancy[:self.J] == 0), [self.J]])


class SplitMerge:
    """Split-merge proposals on rows X (CSR non-negative integer counts, as
    ``simplexsg.corpus.check_counts`` returns them, or in ``local.kernel_layout``, whose arrays
    it then shares) with Dirichlet(``base``) components.

    ``scans``: restricted Gibbs scans of the scanned proposals (module docstring; 0: none).
    ``propose(z, alpha, rng)`` makes one proposal and updates the labelled allocations ``z``
    (int64, in place) if it is accepted; returns "split", "merge" or None (rejected).
    ``run(z, alpha, rng, n)`` makes n of them, keeping each label's rows, and each component's
    marginal and summed counts (``screen``), until a move changes them, so that a split costs
    the size of its block and a merge the categories of its two components.
    """

    def __init__(self, X, base, scans=0):
        self.scans = int(scans)
        self.X = X if sp.issparse(X) and X.format == "csr" else sp.csr_array(X)
        self.indptr = self.X.indptr.astype(np.int64, copy=False)    # shared with a matrix in
        self.indices = self.X.indices.astype(np.int64, copy=False)  # the kernels' layout
        self.data = self.X.data.astype(np.float64, copy=False)
        self.n_features, self.base = X.shape[1], float(base)
        # lgamma(base + c) - lgamma(base) for the counts c a component's category can hold
        largest = int(np.max(np.bincount(self.indices, self.data, minlength=1)))
        self.rising = rising_factorials(self.base, min(largest, RISING_TABLE) + 1)
        self.screen = ComponentScreen(self.indptr, self.indices, self.data, self.n_features,
                                      self.base, self.rising)

    def run(self, z, alpha, rng, n_proposals, row_budget=0):
        """``n_proposals`` proposals on z (in place), and more until the blocks they proposed
        to split or merge held ``row_budget`` rows in total, those of a scanned proposal once
        per pass (1 + ``scans``) (a budget in work, so the result depends on the seed alone);
        returns how many were accepted. Fewer than two rows admit
        no proposal (no pair of distinct rows): none is made, whatever the budget."""
        return self._run(z, alpha, rng, n_proposals, row_budget)[0]

    def propose(self, z, alpha, rng):
        """One proposal (the class docstring); None, and no draw, for fewer than two rows."""
        return self._run(z, alpha, rng, 1, 0)[1]

    def _run(self, z, alpha, rng, n_proposals, row_budget):
        """(proposals accepted, the last one's kind if accepted else None) of ``run``. The
        kernel's screen draws every proposal and rejects the merges whose ratio without q
        already falls below the uniform, most of them; the others are made here."""
        if z.size < 2:
            return 0, None
        blocks = _Blocks(z)
        self.screen.clear()
        for label, rows in blocks.rows.items():
            self.screen.set(label, rows)
        accepted = done = 0
        rows, kind = 0.0, None
        while True:
            outcome, done, rows, i, k, log_u, scanned, log_ratio = self.screen.screen(
                rng.bit_generator, z, blocks.occupancy, blocks.rows_from, blocks.J,
                blocks.occupied, blocks.splittable, alpha, self.scans > 0, SPLIT_SHARE,
                SCANNED_SHARE, n_proposals, row_budget, done, rows)
            if outcome == "screened":
                return accepted, None
            if outcome == "targeted":
                i, k, log_u = self._pair_within(blocks, rng)
            if outcome == "merge":
                kind, work = self._merge(z, rng, blocks, i, k, log_u, log_ratio, scanned)
            else:
                kind, work = self._split(z, alpha, rng, blocks, i, k, log_u, scanned)
            accepted, done, rows = accepted + (kind is not None), done + 1, rows + work
            if done >= n_proposals and rows >= row_budget:
                return accepted, kind

    @staticmethod
    def _pair_within(blocks, rng):
        """(i, k, log u): a pair of distinct rows of a component drawn uniformly among those of
        at least two rows, then the proposal's uniform."""
        label = np.flatnonzero(blocks.occupancy >= 2)[rng.integers(blocks.splittable)]
        members = blocks.rows[int(label)]
        i, k = rng.integers(members.size), rng.integers(members.size - 1)
        return int(members[i]), int(members[k + (k >= i)]), math.log(rng.random())

    def _allocation(self, i, k, others, side, forced, rng, stop_below=-np.inf):
        """(log q of the sequential allocation of ``others`` between i (side 0) and k (side
        1), the log marginals of the two sides' blocks (2,)); ``forced`` with ``stop_below``:
        a value below it as soon as log q falls below it (``sequential_allocation``)."""
        marginals = np.empty(2)
        log_q = sequential_allocation(self.indptr, self.indices, self.data, self.n_features, i,
                                      k, others, rng.random(others.size) if not forced
                                      else np.zeros(others.size), side, forced, self.base,
                                      marginals, stop_below)
        return log_q, marginals

    def _scanned(self, i, k, others, launch, target, rng, stop_below=-np.inf):
        """(log q of the last of ``self.scans`` restricted Gibbs scans from the sides
        ``launch`` (written: the final sides), the final sides' log marginals (2,));
        ``target`` (or None): the last scan's sides, forced (``restricted_scans``)."""
        marginals = np.empty(2)
        forced = target is not None
        log_q = restricted_scans(self.indptr, self.indices, self.data, self.n_features, i, k,
                                 others, rng.random((self.scans, others.size)), launch,
                                 target if forced else launch, forced, self.base, marginals,
                                 stop_below)
        return log_q, marginals

    def _split(self, z, alpha, rng, blocks, i, k, log_u, scanned):
        """Propose to split the component of rows i and k (module docstring); returns (its kind
        if accepted else None, the rows passed over)."""
        n_rows, c = z.size, int(z[i])
        members = blocks.rows[c]
        others = rng.permutation(members[(members != i) & (members != k)])
        choices = blocks.labels_to_choose()
        e = int(choices[rng.integers(choices.size)])
        side = np.empty(others.size, dtype=np.int8)
        log_q, marginals = self._allocation(i, k, others, side, False, rng)
        if scanned:
            log_q, marginals = self._scanned(i, k, others, side, None, rng)
        moved = np.concatenate([[k], others[side == 1]])
        log_ratio = (marginals.sum() - self.screen.log_marginal(c)
                     + log_labelled_prior_change(blocks.occupancy, blocks.rows_from, alpha, c,
                                                 e, moved.size)
                     - log_q + math.log(choices.size)
                     + log_split_pair_ratio(n_rows, blocks.splittable - 1,
                                            members.size - moved.size, moved.size,
                                            SPLIT_SHARE))
        return self._decide(z, blocks, log_u, log_ratio, moved, e, c, "split",
                            members.size * (1 + self.scans * scanned))

    def _merge(self, z, rng, blocks, i, k, log_u, log_ratio, scanned):
        """Propose to merge row k's component into row i's, ``log_ratio`` its acceptance's log
        without q (the screen's); returns (its kind if accepted else None, the rows passed
        over)."""
        c, e = int(z[i]), int(z[k])
        members = np.concatenate([blocks.rows[c], blocks.rows[e]])
        others = rng.permutation(members[(members != i) & (members != k)])
        side = (z[others] == e).astype(np.int8)
        # log q only falls: the pass stops once the merge is rejected whatever its rest
        stop_below = log_u - log_ratio - _DECISION_MARGIN
        if scanned:
            launch = np.empty(others.size, dtype=np.int8)
            self._allocation(i, k, others, launch, False, rng)
            log_ratio += self._scanned(i, k, others, launch, side, rng, stop_below)[0]
        else:
            log_ratio += self._allocation(i, k, others, side, True, rng, stop_below)[0]
        return self._decide(z, blocks, log_u, log_ratio, blocks.rows[e], c, e, "merge",
                            members.size * (1 + self.scans * scanned))

    def _decide(self, z, blocks, log_u, log_ratio, moved, target, source, kind, work):
        """Accept the proposal to move the rows ``moved`` from label ``source`` to ``target``
        if ``log_u`` < ``log_ratio``, updating z, the blocks and the screen's components;
        returns (``kind`` if accepted else None, ``work``)."""
        if not log_u < log_ratio:
            return None, work
        blocks.move(z, np.sort(moved), target, source)
        for label in (target, source):
            if label in blocks.rows:
                self.screen.set(label, blocks.rows[label])
            else:
                self.screen.drop(label)
        return kind, work
