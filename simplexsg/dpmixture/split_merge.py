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

One proposal: an ordered pair of distinct rows (i, k), drawn by one of three mechanisms. With
probability ``SPLIT_SHARE``, a component drawn uniformly among those of at least two rows, then
two of its rows; with probability ``ROW_SPLIT_SHARE``, a row drawn uniformly among the rows of
those components, then another of its component; otherwise two rows of two components, drawn
uniformly among such pairs. The first two propose splits, the third merges. Uniform pairs of
any two rows would propose to split a component of n of N rows with probability (n / N)^2:
where one component holds most rows, most proposals would be splits of it, each a pass over
most rows, while two small clusters merged in a component of a few hundred rows would wait
for hundreds of thousands of proposals. Drawn by component, each is split about as often
whatever its size; drawn by row, in proportion to its rows, enough to split a large one
(docs/benchmarks/dp.rst, "Splits by component and by row, merges across components"). The
pair's probability ``q(i, k | z)`` depends on the state, and its ratio between the two states
enters each acceptance below (``_ext._split_merge.log_split_pair_ratio``).

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

A proposal not scanned whose block is large and of long rows (``DELAYED_BLOCK_PREFIXES``
prefixes' counts or more, below; ``DELAYED_ROW_COUNTS`` a row on average) has a delayed
acceptance (Christen & Fox 2005): a first stage accepts it with probability min(1, r1), and
only then a second with min(1, r / r1), r the ratio above. Any r1 with r1(z -> z') r1(z' -> z)
= 1 keeps the move reversible. Here log r1 is the split's log ratio on the prefix of its
block's rows, in their random order, that holds ``DELAYED_CHECK_PER_CATEGORY`` counts a
category (its sides' marginals less the merged block's, less log q, plus lgamma(n) of each
side less the block's), extended by its rate per count over the prefix's second half across
``DELAYED_EXTENSION`` of the counts after it; a merge's is its negative, on the same order and
sides. A split that the prefix already rejects costs the prefix, not the block: on a block of
thousands of long rows that holds one cluster, nearly every split is one. The prefix pays a
split's whole cost in parameters but holds only a share of its evidence, hence the extension
(docs/benchmarks/dp.rst, "Delayed acceptance on long rows").

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
posterior invariant. So does a run of moves whose number z does not decide; ``run``'s
``row_budget``, which stops on the blocks its proposals met, does not, and serves only the
warm-up of the exact sampler's chain and the pilot chains (``slice_sampler.split_merge``).
"""
import collections
import contextlib
import dataclasses
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from scipy.special import betaln, gammaln

from .._ext._split_merge import (ComponentScreen, delayed_acceptance, label_counts,
                                 log_labelled_prior_change, log_split_pair_ratio, pass_tables,
                                 restricted_scans, sequential_allocation)

__all__ = ["SplitMerge", "log_labelled_prior", "log_labelled_prior_change", "rising_factorials",
           "rows_from_label"]

#: Probability that a proposal is a split of a component drawn uniformly among those of at
#: least two rows (docs/benchmarks/dp.rst, "Split proposals within a component").
SPLIT_SHARE = 0.1
#: Probability that a proposal is a split of the component of a row drawn uniformly among
#: theirs: a component is split in proportion to its rows. The other proposals are merges of
#: two rows' components (docs/benchmarks/dp.rst, "Splits by component and by row, merges
#: across components").
ROW_SPLIT_SHARE = 0.05
#: With restricted Gibbs scans (``SplitMerge(scans=...)``), the share of the proposals that
#: make them; the others are the sequential allocation's alone (docs/benchmarks/dp.rst,
#: "Restricted Gibbs scans").
SCANNED_SHARE = 0.5
#: Counts of a category up to which a merge reads its rising factorial from a table (8 MB at
#: most; ``lgamma`` above).
RISING_TABLE = 1 << 20
#: Entries of each table of a pass's lgamma and log calls (``pass_tables``; 8 MB each at
#: most): a block's totals up to a million counts, its sizes up to a million rows, a category's
#: counts up to a million; libm above.
PASS_TABLE = 1 << 20
#: Rows of a proposal's block from which, with ``n_jobs`` > 1, its pass runs beside the
#: proposals after it (``SplitMerge.run``): about a millisecond's pass, well above a thread
#: hand-off's cost.
OVERLAP_ROWS = 2000
#: Proposals drawn ahead of the oldest unsettled one at most.
MAX_AHEAD = 64
#: A proposal not scanned whose block holds at least DELAYED_BLOCK_PREFIXES times the prefix's
#: counts, and DELAYED_ROW_COUNTS a row on average, has a delayed acceptance (module
#: docstring): its first stage judges it on the prefix of its block's rows, in their random
#: order, that holds DELAYED_CHECK_PER_CATEGORY counts a category (column). A split's cost in
#: parameters grows with the categories and its evidence with the counts, so the prefix needs
#: counts in proportion to the categories, and rows long enough to carry evidence
#: (docs/benchmarks/dp.rst, "Delayed acceptance on long rows").
DELAYED_CHECK_PER_CATEGORY, DELAYED_BLOCK_PREFIXES, DELAYED_ROW_COUNTS = 50, 2, 32
#: The first stage extends the prefix's rate of evidence over this share of the block's counts
#: after it, so that it weighs some of the evidence the rest of the block adds; not all of it,
#: as the rate comes from the prefix's second half, a few hundred rows (the same section).
DELAYED_EXTENSION = 0.5
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
    rows_from = np.zeros(occupancy.size + 1)
    np.cumsum(occupancy[::-1], out=rows_from[-2::-1])
    return rows_from


class _Blocks:
    """Rows per label of z (``occupancy``) and each occupied label's rows, sorted (``rows``),
    with what a proposal reads of them (``rows_from``: ``rows_from_label(occupancy)``; ``J``,
    one past the last occupied label; the counts of ``occupied`` labels and of ``splittable``
    ones, of at least two rows, those labels (``splittable_labels``) and the running total of
    their rows (``split_ends``), the rows they hold (``split_rows``), the ordered pairs of rows
    within a component (``pairs``); the labels a split may give its new block,
    ``labels_to_choose``: the empty ones below J, and J), kept up to date by ``move``, so that
    a proposal costs the size of its blocks and the labels between its two, not O(n), and
    the labels once a move, not once a proposal. ``order`` and ``bounds``: the rows sorted by
    label and each label's run of them, as z first was (``move`` leaves them)."""

    def __init__(self, z):
        self.occupancy = np.bincount(z)
        self.order = np.argsort(z, kind="stable")
        self.bounds = np.zeros(self.occupancy.size + 1, dtype=np.int64)
        self.occupancy.cumsum(out=self.bounds[1:])
        bounds = self.bounds.tolist()
        self.rows = {j: self.order[bounds[j]:bounds[j + 1]]
                     for j in self.occupancy.nonzero()[0].tolist()}
        self._count()

    def _count(self):
        (self.rows_from, self.J, self.occupied, self.splittable_labels, self.split_ends,
         self.split_rows, self.pairs, self.labels_to_choose) = label_counts(self.occupancy)
        self.splittable = self.splittable_labels.size

    def move(self, z, moved, target, source, n_labels=None):
        """Relabel the rows ``moved`` (sorted; all of label ``source``'s or part of them) to
        ``target``, in z and here; ``n_labels``: the labels to keep after (those before the
        move that this one undoes)."""
        z[moved] = target
        if target >= self.occupancy.size:
            self.occupancy = np.concatenate(
                [self.occupancy, np.zeros(target + 1 - self.occupancy.size, dtype=np.int64)])
        self.occupancy[source] -= moved.size
        self.occupancy[target] += moved.size
        if n_labels is not None:
            self.occupancy = self.occupancy[:n_labels]
        stay = self.rows[source][z[self.rows[source]] == source]
        if stay.size:
            self.rows[source] = stay
        else:
            del self.rows[source]
        self.rows[target] = np.sort(np.concatenate([self.rows.get(target, moved[:0]), moved]))
        self._count()


class SplitMerge:
    """Split-merge proposals on rows X (CSR non-negative integer counts, as
    ``simplexsg.corpus.check_counts`` returns them, or in ``local.kernel_layout``, whose arrays
    it then shares) with Dirichlet(``base``) components.

    ``scans``: restricted Gibbs scans of the scanned proposals (module docstring; 0: none).
    ``propose(z, alpha, rng)`` makes one proposal and updates the labelled allocations ``z``
    (int64, in place) if it is accepted; returns "split", "merge" or None (rejected).
    ``run(z, alpha, rng, n)`` makes n of them, keeping each label's rows, and each component's
    marginal and summed counts (``screen``), until a move changes them, so that a split costs
    the size of its block and a merge the categories of its two components. ``rows_passed``:
    the rows the passes of every ``run`` so far went over, those of a scanned proposal once per
    pass, a merge's whole block though its pass may stop sooner (their work, which the seed
    alone decides); ``proposed``: the proposals the last ``run`` made; ``check_counts`` and
    ``delayed_total``: the counts of a delayed acceptance's prefix and of its smallest block.
    """

    def __init__(self, X, base, scans=0):
        self.scans = int(scans)
        self.X = X if sp.issparse(X) and X.format == "csr" else sp.csr_array(X)
        self.indptr = self.X.indptr.astype(np.int64, copy=False)    # shared with a matrix in
        self.indices = self.X.indices.astype(np.int64, copy=False)  # the kernels' layout
        self.data = self.X.data.astype(np.float64, copy=False)
        self.n_rows, self.n_features, self.base = X.shape[0], X.shape[1], float(base)
        self.check_counts = DELAYED_CHECK_PER_CATEGORY * self.n_features
        self.delayed_total = DELAYED_BLOCK_PREFIXES * self.check_counts
        # lgamma(base + c) - lgamma(base) for the counts c a component's category can hold
        largest = int(np.max(np.bincount(self.indices, self.data, minlength=1)))
        self.rising = rising_factorials(self.base, min(largest, RISING_TABLE) + 1)
        self.screen = ComponentScreen(self.indptr, self.indices, self.data, self.n_features,
                                      self.base, self.rising)
        self.tables = pass_tables(
            self.n_features * self.base, min(int(self.data.sum()) + 1, PASS_TABLE),
            min(self.n_rows + 2, PASS_TABLE), self.base, min(largest, PASS_TABLE) + 1)
        self.rows_passed, self.proposed = 0, 0

    def run(self, z, alpha, rng, n_proposals, row_budget=0, n_jobs=1):
        """``n_proposals`` proposals on z (in place), and more until the blocks they proposed
        to split or merge held ``row_budget`` rows in total, those of a scanned proposal once
        per pass (1 + ``scans``) (a budget in work, so the result depends on the seed alone);
        returns how many were accepted. Fewer than two rows admit no proposal (no pair of
        distinct rows): none is made, whatever the budget. ``n_jobs`` > 1: the pass of a
        proposal of at least ``OVERLAP_ROWS`` rows runs on one of ``n_jobs`` threads while
        this one makes the proposals after it as if it were rejected, and applies those it
        accepts, all undone if it is accepted: the same moves, whatever ``n_jobs``. This
        thread's own work, Python and the screen, holds the interpreter most of the time, so
        the passes get ``n_jobs`` threads of their own beside it."""
        return self._run(z, alpha, rng, n_proposals, row_budget, n_jobs).accepted

    def propose(self, z, alpha, rng):
        """One proposal (the class docstring); None, and no draw, for fewer than two rows."""
        return self._run(z, alpha, rng, 1, 0, 1).accepted_kind

    def _run(self, z, alpha, rng, n_proposals, row_budget, n_jobs):
        """The ``_Tally`` of ``run``. The kernel's screen draws every proposal and rejects the
        merges whose ratio without q already falls below the uniform, most of them; the
        others are made here."""
        tally = _Tally(n_proposals, row_budget)
        if z.size < 2:
            return tally
        blocks = _Blocks(z)
        self.screen.set_all(blocks.order, blocks.bounds, n_jobs)
        workers = n_jobs if n_jobs > 1 else 0
        with ThreadPoolExecutor(workers) if workers else contextlib.nullcontext() as pool:
            self._pipeline(z, alpha, rng, blocks, tally, pool, workers)
        self.rows_passed += tally.passed
        self.proposed = tally.done
        return tally

    def _pipeline(self, z, alpha, rng, blocks, tally, pool, workers):
        """Draw, make and settle the proposals in order. The pass of a proposal of at least
        ``OVERLAP_ROWS`` rows goes to one of ``workers`` threads of ``pool`` while this
        thread draws and makes the ones after it as if it were rejected, applying those it
        accepts as it goes. Once its pass is done it is judged on the state it was drawn in
        (the moves applied after it undone, then made again if it is rejected); if it is
        accepted, the proposals after it are dropped, and the generator and the tally go back
        to where they were after its own draws. So do the screen's draws after it that spent
        the budget: they screened the state before it."""
        pending = collections.deque()          # drawn, not yet settled, in order
        spent = False                          # the budget
        while True:
            while pending and pending[0].ready():
                head = pending.popleft()
                if head.accepted is None:      # its pass ran beside the proposals after it
                    applied = [proposal for proposal in pending if proposal.applied]
                    for proposal in reversed(applied):
                        self._apply(proposal, z, blocks, undo=True)
                    head.judge(self, blocks, alpha)
                    if not head.accepted:
                        for proposal in applied:
                            self._apply(proposal, z, blocks)
                        continue
                    if pending or spent:       # draws after it: made again
                        _drop(pending)
                        rng.bit_generator.state = head.generator_state
                        vars(tally).update(vars(head.tally))
                        spent = False
                    self._settle(head, z, blocks, tally)
            if not (spent or len(pending) >= MAX_AHEAD):
                proposal = self._draw(z, alpha, rng, blocks, tally)
                if proposal is None:
                    spent = True
                    continue
                if pool is not None and proposal.work >= OVERLAP_ROWS and sum(
                        p.future is not None and not p.future.done() for p in pending) < workers:
                    # where the generator and the tally are after it
                    proposal.generator_state = rng.bit_generator.state
                    proposal.tally = dataclasses.replace(tally)
                    proposal.future = pool.submit(proposal.pass_over, self)
                    pending.append(proposal)
                    continue
                proposal.pass_over(self)
                proposal.judge(self, blocks, alpha)
                self._settle(proposal, z, blocks, tally)
                if pending:                    # applied ahead of a pass: undone if need be
                    proposal.applied = proposal.accepted
                    pending.append(proposal)
            elif pending:
                pending[0].future.result()
            else:
                return

    def _draw(self, z, alpha, rng, blocks, tally):
        """The next proposal that the screen does not reject, its draws made and its work
        counted in ``tally`` (with the screened ones before it); None once the budget is
        spent."""
        (outcome, tally.done, tally.rows, i, k, log_u, log_u1, scanned,
         log_ratio) = self.screen.screen(
            rng.bit_generator, z, blocks.occupancy, blocks.rows_from, blocks.J,
            blocks.occupied, blocks.splittable, blocks.split_rows, blocks.pairs, alpha,
            self.scans > 0, SPLIT_SHARE, ROW_SPLIT_SHARE, SCANNED_SHARE,
            self.delayed_total, DELAYED_ROW_COUNTS, tally.n_proposals, tally.row_budget,
            tally.done, tally.rows)
        if outcome == "screened":
            return None
        if outcome == "component":
            i, k, log_u = self._pair_within(blocks, rng)
        elif outcome == "row":
            i, k, log_u = self._pair_by_row(blocks, rng)
        c, e = int(z[i]), int(z[k])
        order_seed = int(rng.bit_generator.random_raw())  # the pass's order and uniforms
        if outcome == "merge":
            members = np.concatenate([blocks.rows[c], blocks.rows[e]])
            keep = (members != i) & (members != k)
            side = np.zeros(members.size, dtype=np.int8)
            side[blocks.rows[c].size:] = 1
            proposal = _Merge(i, k, e, c, members[keep], side[keep], order_seed, log_u,
                              log_ratio, blocks.rows[e])
            total = self.screen.total(c) + self.screen.total(e)
        else:
            members = blocks.rows[c]
            choices = blocks.labels_to_choose
            e = int(choices[rng.integers(choices.size)])
            proposal = _Split(i, k, c, e, members[(members != i) & (members != k)], order_seed,
                              log_u, choices.size, members.size)
            total = self.screen.total(c)
        if delayed_acceptance(total, members.size, scanned, self.delayed_total,
                              DELAYED_ROW_COUNTS):
            if outcome != "merge":                      # a merge's is the screen's
                log_u1 = math.log(rng.random())
            proposal.check_counts, proposal.log_u1 = self.check_counts, log_u1
            proposal.check_rest = DELAYED_EXTENSION * max(total - self.check_counts, 0.0)
        if scanned:
            proposal.scan_uniforms = rng.random((self.scans, proposal.others.size))
        proposal.work = members.size * (1 + self.scans * scanned)
        tally.done, tally.rows = tally.done + 1, tally.rows + proposal.work
        tally.passed += proposal.work
        return proposal

    def _settle(self, proposal, z, blocks, tally):
        """Apply ``proposal`` if it was accepted, and count it in ``tally``."""
        if proposal.accepted:
            tally.accepted, tally.accepted_kind = tally.accepted + 1, proposal.kind
            proposal.moved = np.sort(proposal.moved)
            self._apply(proposal, z, blocks)

    def _apply(self, proposal, z, blocks, undo=False):
        """Move the rows ``proposal.moved`` (sorted) of an accepted ``proposal`` in z, the
        blocks and the screen's components; ``undo``: move them back, the state before it to
        the bit."""
        if not undo:
            proposal.labels_before = blocks.occupancy.size
            blocks.move(z, proposal.moved, proposal.target, proposal.source)
        else:
            blocks.move(z, proposal.moved, proposal.source, proposal.target,
                        proposal.labels_before)
        for label in (proposal.target, proposal.source):
            if label in blocks.rows:
                self.screen.set(label, blocks.rows[label])
            else:
                self.screen.drop(label)

    @staticmethod
    def _pair_within(blocks, rng):
        """(i, k, log u): a pair of distinct rows of a component drawn uniformly among those of
        at least two rows, then the proposal's uniform."""
        members = blocks.rows[int(blocks.splittable_labels[rng.integers(blocks.splittable)])]
        return SplitMerge._with_another(members, int(rng.integers(members.size)), rng)

    @staticmethod
    def _pair_by_row(blocks, rng):
        """(i, k, log u): row i drawn uniformly among the rows of the components of at least two
        rows, k uniformly among the other rows of its component, then the proposal's
        uniform."""
        ends = blocks.split_ends
        r = int(rng.integers(ends[-1]))
        at = int(np.searchsorted(ends, r, side="right"))
        members = blocks.rows[int(blocks.splittable_labels[at])]
        return SplitMerge._with_another(members, r - int(ends[at] - members.size), rng)

    @staticmethod
    def _with_another(members, i, rng):
        """(row ``members[i]``, another of ``members`` drawn uniformly, log u): the pair's
        second row and the proposal's uniform, drawn the same way by either mechanism."""
        k = rng.integers(members.size - 1)
        return int(members[i]), int(members[k + (k >= i)]), math.log(rng.random())

    def sequential_pass(self, i, k, others, side, forced, order_seed, stop_below=-np.inf,
                        check_counts=0, check_below=-np.inf, check_rest=0.0):
        """(log q of the sequential allocation of ``others`` between i (side 0) and k (side
        1), visited in the random order that ``order_seed`` draws, with the uniforms of their
        sides (``others``, and a ``forced`` ``side``, shuffled in place as the pass goes), the
        log marginals of the two sides' blocks (2,), the first stage's log ratio r1 on the
        prefix of ``check_counts`` counts (0: none)); ``forced`` with ``stop_below``: a value
        below it as soon as log q falls below it (from the prefix on, raised by r1), and the
        pass ends at the prefix if r1 is below ``check_below`` (``sequential_allocation``)."""
        marginals, check = np.empty(2), np.zeros(1)
        log_q = sequential_allocation(self.indptr, self.indices, self.data, self.n_features, i,
                                      k, others, None, side, forced, self.base, marginals,
                                      stop_below, self.tables, check_counts, check,
                                      check_below, check_rest, order_seed)
        return log_q, marginals, check[0]

    def scan_pass(self, i, k, others, launch, target, uniforms, stop_below=-np.inf):
        """(log q of the last of ``self.scans`` restricted Gibbs scans at ``uniforms`` (scans,
        others.size) from the sides ``launch`` (written: the final sides), the final sides'
        log marginals (2,)); ``target`` (or None): the last scan's sides, forced
        (``restricted_scans``)."""
        marginals = np.empty(2)
        forced = target is not None
        log_q = restricted_scans(self.indptr, self.indices, self.data, self.n_features, i, k,
                                 others, uniforms, launch, target if forced else launch, forced,
                                 self.base, marginals, stop_below, self.tables)
        return log_q, marginals


@dataclasses.dataclass
class _Tally:
    """What ``SplitMerge.run`` has done: its budget (``n_proposals``, ``row_budget``), the
    proposals made (``done``) and the rows their blocks held (``rows``), the rows of those
    that the screen passed on to a pass (``passed``), the moves accepted and the kind of the
    last one."""
    n_proposals: int
    row_budget: float
    done: int = 0
    rows: float = 0.0
    passed: int = 0
    accepted: int = 0
    accepted_kind: str = None


def _drop(pending):
    """Forget the proposals drawn after an accepted one, once their passes have stopped."""
    for proposal in pending:
        if proposal.future is not None and not proposal.future.cancel():
            proposal.future.result()
    pending.clear()


class _Proposal:
    """A proposal whose draws are made (``SplitMerge._draw``): ``pass_over`` makes its pass
    over the rows (the kernels, on any thread; ``future``, where it runs on a pool's), and
    ``judge`` decides it (``accepted``) on the state it was drawn in. Its pair of rows i and
    k, the component ``source`` whose rows move to label ``target``, the ``others`` of the
    block, ``order_seed`` (which draws the order in which the pass visits them, shuffling
    ``others`` in place, and their sides' uniforms) and ``log_u`` are common to both kinds;
    ``work``: the rows it passes over; with its pass on a pool's thread, ``generator_state``
    and ``tally``: where the generator and the tally were after its draws; ``applied``: it
    was accepted and applied while a pass before it ran (``SplitMerge._pipeline``), and
    ``moved`` and ``labels_before`` (the labels the blocks had) undo it. With a delayed
    acceptance, ``check_counts`` (the prefix's counts; 0: none) and ``log_u1``, the first
    stage's uniform; its pass sets ``log_r1``, the first stage's log ratio (0 without one:
    passed)."""
    scan_uniforms, work, future, accepted, applied = None, 0, None, None, False
    check_counts, check_rest, log_u1, log_r1 = 0, 0.0, -math.inf, 0.0

    def __init__(self, i, k, source, target, others, order_seed, log_u):
        self.i, self.k, self.source, self.target = i, k, source, target
        self.others, self.order_seed, self.log_u = others, order_seed, log_u

    def ready(self):
        """Whether its pass is done."""
        return self.future is None or self.future.done()


class _Split(_Proposal):
    """A split of component ``source``, row k and the others on its side moving to label
    ``target``."""
    kind = "split"

    def __init__(self, i, k, source, target, others, order_seed, log_u, n_choices, size):
        super().__init__(i, k, source, target, others, order_seed, log_u)
        self.n_choices, self.size = n_choices, size

    def pass_over(self, move):
        self.side = np.empty(self.others.size, dtype=np.int8)
        self.log_q, self.marginals, self.log_r1 = move.sequential_pass(
            self.i, self.k, self.others, self.side, False, self.order_seed,
            check_counts=self.check_counts, check_below=self.log_u1, check_rest=self.check_rest)
        if self.scan_uniforms is not None:
            self.log_q, self.marginals = move.scan_pass(self.i, self.k, self.others, self.side,
                                                        None, self.scan_uniforms)

    def judge(self, move, blocks, alpha):
        if not self.log_u1 < self.log_r1:       # the first stage: its pass ended at the prefix
            self.accepted = False
            return
        n_moved = 1 + int(np.count_nonzero(self.side))
        log_ratio = (self.marginals.sum() - move.screen.log_marginal(self.source)
                     + log_labelled_prior_change(blocks.occupancy, blocks.rows_from, alpha,
                                                 self.source, self.target, n_moved)
                     - self.log_q + math.log(self.n_choices)
                     + log_split_pair_ratio(move.n_rows, blocks.splittable - 1,
                                            blocks.split_rows - self.size,
                                            blocks.pairs - self.size * (self.size - 1.0),
                                            self.size - n_moved, n_moved, SPLIT_SHARE,
                                            ROW_SPLIT_SHARE))
        self.accepted = self.log_u < log_ratio - self.log_r1
        if self.accepted:
            self.moved = np.concatenate([[self.k], self.others[self.side == 1]])


class _Merge(_Proposal):
    """A merge of component ``source`` (row k's) into ``target`` (row i's); ``log_ratio``, its
    acceptance's log without q (the screen's), ``side`` the sides its reverse split must
    recreate (1: the rows of ``source``, ``source_rows``), in the order of ``others``."""
    kind = "merge"

    def __init__(self, i, k, source, target, others, side, order_seed, log_u, log_ratio,
                 source_rows):
        super().__init__(i, k, source, target, others, order_seed, log_u)
        self.side, self.log_ratio, self.source_rows = side, log_ratio, source_rows

    def pass_over(self, move):
        # log q only falls: the pass stops once the merge is rejected whatever its rest (with
        # a delayed acceptance, from the prefix on, where the first stage's ratio is known)
        stop_below = self.log_u - self.log_ratio - _DECISION_MARGIN
        if self.scan_uniforms is not None:
            launch = np.empty(self.others.size, dtype=np.int8)
            move.sequential_pass(self.i, self.k, self.others, launch, False, self.order_seed)
            self.side = np.isin(self.others, self.source_rows).astype(np.int8)  # in its order
            self.log_q = move.scan_pass(self.i, self.k, self.others, launch, self.side,
                                        self.scan_uniforms, stop_below)[0]
        else:
            self.log_q, _, self.log_r1 = move.sequential_pass(
                self.i, self.k, self.others, self.side, True, self.order_seed, stop_below,
                self.check_counts, self.log_u1, self.check_rest)

    def judge(self, move, blocks, alpha):
        self.moved = blocks.rows[self.source]
        self.accepted = (self.log_u1 < self.log_r1
                         and self.log_u < self.log_ratio + self.log_q - self.log_r1)
