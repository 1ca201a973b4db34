"""Defaults of the DP mixture, the namespaces of its random streams, and the resolved
parameters of a fit (``Params``, made by ``validation.check_params``)."""
import dataclasses
import enum

import numpy as np
from scipy.special import digamma

from ..simplex import SCIR, SGRLD

#: Step sizes per sampler, components and sticks (h is the diffusion time of a step, as in
#: ``simplexsg.simplex``): SGRLD's are the SCIR paper's tuned values for msweb; SCIR's are a
#: fifth of the paper's 0.1, so that a step averages the counts of about 50 minibatches, not
#: 10 ("The DP mixture at scale" in docs/benchmarks/dp.rst).
SAMPLER_DEFAULTS = {
    "scir": dict(cls=SCIR, step_size=0.02, stick_step_size=0.02),
    "sgrld": dict(cls=SGRLD, step_size=1e-3, stick_step_size=5e-3),
    "gibbs": dict(cls=None, step_size=None, stick_step_size=None),
}
#: Iterations of ``max_iter=None`` (SCIR/SGRLD, the exact sampler); with a ``tol`` given, this
#: many times as many at most, the convergence check deciding when to stop.
MAX_ITER, MAX_ITER_GIBBS, TOL_ITER_FACTOR = 1000, 200, 5
#: ``tol="auto"`` per sampler: the fit stops once ``n_iter_no_change`` checks in a row gain
#: less than this fraction of the score. The exact sampler's chain settles within tens of
#: sweeps, and sweeps are costly; SCIR's held-out score settles within a few hundred
#: iterations whatever the data's size, its clusters the pilot's; SGRLD, kept for comparison,
#: runs its ``max_iter`` (None: no check). Measured in "The exact sampler's length" and "SCIR's
#: length and the pilot's" (docs/benchmarks/dp.rst).
AUTO_TOL = {"gibbs": 5e-4, "scir": 1e-3, "sgrld": None}
#: Sweeps of the exact sampler between convergence checks: a sweep's gain is below the score's
#: spread between sweeps ("The exact sampler's length" in docs/benchmarks/dp.rst).
GIBBS_CHECK_SWEEPS = 5
#: Iterations of SCIR and SGRLD between convergence checks at most (a pass over the rows when
#: that is shorter): about the 1/h = 50 steps over which a default SCIR step forgets its
#: state, so that successive scores are of states apart ("SCIR's length and the pilot's" in
#: docs/benchmarks/dp.rst).
MINIBATCH_CHECK_ITER = 50
#: ``sampler="auto"`` runs the exact sampler on data sets of at most this many rows and stored
#: counts, SCIR above: up to these sizes the exact sampler scores better than SCIR in about the
#: same time, and beyond ten times the rows a sweep costs as much as SCIR's whole fit; the
#: bound on counts is just above the largest data measured ("The crossover at 4,000-row
#: minibatches" in docs/benchmarks/dp.rst).
AUTO_GIBBS_ROWS, AUTO_GIBBS_ENTRIES = 1_000_000, 100_000_000
#: Training rows the convergence check scores when no ``X_heldout`` is given.
MONITOR_ROWS = 1000
#: Iterations and split-merge proposals per iteration of the pilot chain of ``init="pilot"``
#: for the exact sampler, whose own moves go on from there (no more proposals than pilot rows:
#: on a handful of rows 50 would cost a second for nothing).
PILOT_ITER, PILOT_SPLIT_MERGE = 100, 50
#: Sweeps of the pilot chain for SCIR and SGRLD at most, with the exact sampler's "auto"
#: split-merge proposals: their chains keep the pilot's clusters, so the pilot must find the
#: small ones ("The DP mixture at scale" in docs/benchmarks/dp.rst).
MINIBATCH_PILOT_ITER = 400
#: That pilot stops once its sweeps have done this much work, in visits: an allocation visits
#: each stored count of a row once per component the row can join (expected over its slice),
#: and each row a split-merge pass goes over counts as PASS_ROW_VISITS, whatever its length
#: (what a row of a pass costs against a visit on rows of a few words; longer rows' pilots get
#: more time). Its sweeps' cost differs a hundredfold between sources, so a bound in sweeps is
#: either too short or too dear ("The pilot's length on short rows" in docs/benchmarks/dp.rst).
MINIBATCH_PILOT_WORK, PASS_ROW_VISITS = 6e10, 128
#: That pilot's budget of split-merge proposals a sweep, in block rows per row and occupied
#: component, as SPLIT_MERGE_WORK is the exact sampler's warm-up's. Smaller: at
#: SPLIT_MERGE_WORK the dominant cluster of the fortunes mixture ends spread over three
#: components, at 0.05 the short rows' pilots find fewer clusters ("Splits by component and by
#: row, merges across components" in docs/benchmarks/dp.rst).
MINIBATCH_PILOT_SPLIT_MERGE_WORK = 0.1
#: A minibatch sampler's pilot on a subset of the rows, once settled with at least
#: PILOT_GROWTH times the work it spent to spare (of MINIBATCH_PILOT_WORK), goes on over
#: PILOT_GROWTH - 1 times as many rows again (within MINIBATCH_PILOT_ENTRIES), and again
#: while that holds: a stage on PILOT_GROWTH times the rows costs at least PILOT_GROWTH times
#: as much, and on short rows of few clusters the pilot's bound on rows, not its work, leaves
#: small clusters merged ("The pilot that grows" in docs/benchmarks/dp.rst).
PILOT_GROWTH = 2
#: A minibatch sampler's pilot on a subset of the rows, and the exact chain's warm-up on short
#: rows, end with word-anchored splits (``anchored_splits``): in each component of at least
#: ANCHOR_MIN_ROWS rows, the split of the rows holding a word against the rest, for the
#: ANCHOR_WORDS words held by the most of its rows between the shares ANCHOR_ROW_SHARES of
#: them, each refined by ANCHOR_SCANS restricted Gibbs scans. A cluster of 0.1% of the rows
#: holds 200 of a 200,000-row pilot's, so a component of fewer than 50 rows hides none; a word
#: held by more than half of a component's rows marks the component itself ("Word-anchored
#: splits" in docs/benchmarks/dp.rst).
ANCHOR_WORDS, ANCHOR_SCANS, ANCHOR_MIN_ROWS, ANCHOR_ROW_SHARES = 30, 3, 50, (0.02, 0.5)
#: The pilot chain's convergence check, whatever the fit's ``tol``: every GIBBS_CHECK_SWEEPS
#: sweeps it scores MONITOR_ROWS of its rows, and it stops once PILOT_PATIENCE scores in a row
#: gain less than PILOT_TOL of the score, before its sweeps are done: the exact sampler's
#: "auto" rule, since the pilot is that sampler ("SCIR's length and the pilot's" in
#: docs/benchmarks/dp.rst).
PILOT_TOL, PILOT_PATIENCE = AUTO_TOL["gibbs"], 3
#: A minibatch sampler's pilot stops on that plateau only once its occupied components have
#: also moved by at most PILOT_CLUSTERS_TOL of their number over the last
#: PILOT_CLUSTERS_CHECKS checks: on short rows the pilot goes on finding clusters long after
#: its score has settled, by a few a check, within the count's noise over fewer checks ("The
#: pilot's length on short rows" in docs/benchmarks/dp.rst).
PILOT_CLUSTERS_TOL, PILOT_CLUSTERS_CHECKS = 0.05, 6
#: Of a ``max_time`` budget, the share the pilot chain may spend: it stops after the sweep that
#: passes it, leaving the chain the rest.
PILOT_TIME_SHARE = 0.5
#: Rows and stored counts of the pilot chain at most (``init_rows=None``), for the exact sampler
#: ("gibbs"), which finds more clusters itself.
PILOT_ROWS, PILOT_ENTRIES = 5000, 100_000
#: The same for SCIR and SGRLD, whose chains keep the pilot's clusters and add few: enough rows
#: to hold clusters of 0.1% of the data, and enough of their counts, on rows of a few words,
#: to tell them apart ("The DP mixture at scale" and "The pilot's rows" in
#: docs/benchmarks/dp.rst).
MINIBATCH_PILOT_ROWS, MINIBATCH_PILOT_ENTRIES = 200_000, 5_000_000
#: A streamed corpus of at most STREAM_IN_MEMORY_ROWS rows and STREAM_IN_MEMORY_ENTRIES stored
#: counts is read into memory, in its order, and fitted as a count matrix when the sampler is
#: "auto" or "gibbs". Within a minibatch sampler's pilot's rows the exact sampler on every row
#: beats SCIR after that pilot in time and fit wherever measured, so the bound is one of
#: memory: twice the pilot's counts, where the fit's peak stays near the pilot's at its own
#: bounds ("Small streamed corpora" in docs/benchmarks/dp.rst).
STREAM_IN_MEMORY_ROWS, STREAM_IN_MEMORY_ENTRIES = MINIBATCH_PILOT_ROWS, 2 * MINIBATCH_PILOT_ENTRIES
#: The exact sampler's pilot start, when the pilot saw a subset of the rows and they hold
#: fewer than RESIDUAL_BELOW_ENTRIES stored counts (short rows), adds the clusters
#: of a second pilot chain on the rows the first one's clusters explain worst
#: (``init.with_residual_clusters``): the RESIDUAL_SHARE of the rows with the lowest log
#: likelihood per count under their component against the data's unigram profile (at most a
#: minibatch sampler's pilot's rows and stored counts), started at random from
#: RESIDUAL_COMPONENTS components, with a minibatch sampler's pilot moves and stopping rule
#: and at most RESIDUAL_PILOT_WORK visits. The first pilot's few thousand rows hold the large
#: clusters; small ones, of short rows, need many rows, and a random start on every row cuts a
#: dominant cluster into pieces that the moves merge only after hundreds of sweeps. Where
#: the first pilot's rows are long, it already holds PILOT_ENTRIES counts, and a second pilot
#: gains nothing and costs time ("The exact sampler's start" in docs/benchmarks/dp.rst).
RESIDUAL_SHARE, RESIDUAL_COMPONENTS, RESIDUAL_PILOT_WORK = 0.5, 100, 5e9
RESIDUAL_BELOW_ENTRIES = PILOT_ENTRIES // 2
#: ``split_merge="auto"`` in the warm-up of the exact sampler (at least SPLIT_MERGE_WARMUP
#: sweeps, until its chain settles: ``training.Trainer._end_warmup``) and in every sweep of a
#: pilot chain: at least MIN_SPLIT_MERGE proposals per iteration, and more until their blocks
#: held SPLIT_MERGE_WORK x rows x occupied components rows (a budget in block rows, which the
#: seed alone decides; a split passes over its block's rows, a merge sums its two components'
#: counts). Such a budget stops on what the proposals met, so the moves it makes do not leave
#: the posterior invariant; after the warm-up alpha sets the count (``split_merge_count``).
MIN_SPLIT_MERGE, SPLIT_MERGE_WORK, SPLIT_MERGE_WARMUP = 10, 0.25, 5
#: A streamed corpus's shuffle buffer in minibatches (``shuffle_buffer=None``).
SHUFFLE_BATCHES = 4


class Stream(enum.IntEnum):
    """Namespaces of the random streams derived from the estimator's SeedSequence
    (``simplexsg._random.substream(seed, namespace, index)``). The values key the draws: a
    fit's result depends on them, so they never change."""

    #: The start of a chain; index 0: the initial state, 1: random allocations, 2: the pilot's
    #: rows and everything after the pilot, 3: the pilot chain's own seed, 4: the second
    #: pilot's (``RESIDUAL_SHARE``), 5 and 6: a minibatch sampler's pilot's own start
    #: (``init.exact_start``), 7 + k: stage k of its growth (``init.grown_pilot``).
    INIT = 0
    #: The order of a pass (its permutation, or a stream's shuffle buffer); index: the pass.
    ORDER = 1
    #: Every draw of an iteration; index: the iteration.
    STEP = 2
    #: The training rows the convergence check scores.
    MONITOR = 3
    #: Word-anchored splits; index 0: those that end a minibatch sampler's pilot
    #: (``init.with_anchored_splits``), 1: those that end the exact chain's warm-up
    #: (``training.Trainer``).
    SPLITS = 4


def auto_sampler(n_rows, n_entries=None, chain_sampler=None):
    """The sampler of ``sampler="auto"``: the chain's own (``chain_sampler``, when continuing
    one), else "gibbs" for at most AUTO_GIBBS_ROWS rows and AUTO_GIBBS_ENTRIES stored counts
    (``n_entries``; None: not counted) in memory, else "scir" (``n_rows`` None: a streamed
    corpus or ``partial_fit``)."""
    small = (n_rows is not None and n_rows <= AUTO_GIBBS_ROWS
             and (n_entries is None or n_entries <= AUTO_GIBBS_ENTRIES))
    return chain_sampler or ("gibbs" if small else "scir")


def expected_clusters(alpha, n_rows):
    """The expected number of clusters of ``n_rows`` rows under the DP prior of concentration
    ``alpha``: ``sum_{i < n} alpha / (alpha + i) = alpha (psi(alpha + n) - psi(alpha))``."""
    return float(alpha * (digamma(alpha + n_rows) - digamma(alpha)))


def split_merge_count(scale, alpha, n_rows):
    """Split-merge proposals of a sweep of the exact sampler after its warm-up: ``scale`` (the
    warm-up's last sweep's proposals over the square root of the clusters expected given its
    alpha) times ``sqrt(expected_clusters(alpha, n_rows))``, at least
    MIN_SPLIT_MERGE. A count that the allocations do not decide, so that the moves leave
    p(z | alpha, X) invariant; it grows with alpha as the chain finds more clusters
    ("Split-merge moves that leave the posterior invariant" in
    docs/benchmarks/dp.rst)."""
    return max(MIN_SPLIT_MERGE, int(round(scale * np.sqrt(expected_clusters(alpha, n_rows)))))


def label_shift_count(alpha, n_rows):
    """Label shifts of a sweep of the exact sampler (``label_shift``): one per cluster expected
    given alpha, at least one; a count that z does not decide."""
    return max(1, int(round(expected_clusters(alpha, n_rows))))


def split_merge_scale(proposals, alpha, n_rows):
    """The ``scale`` of ``split_merge_count`` that gives ``proposals`` at ``alpha``."""
    return proposals / np.sqrt(expected_clusters(alpha, n_rows))


def pilot_bounds(sampler):
    """(rows, stored counts) of the pilot chain at most when ``init_rows=None``, for the chain
    of ``sampler``."""
    if sampler == "gibbs":
        return PILOT_ROWS, PILOT_ENTRIES
    return MINIBATCH_PILOT_ROWS, MINIBATCH_PILOT_ENTRIES


def pilot_chain(sampler, n_rows):
    """(sweeps at most, split-merge proposals per sweep, the budget of "auto" proposals in
    block rows per row and occupied component (None: none, or SPLIT_MERGE_WORK), work at most)
    of the pilot chain on ``n_rows`` rows for the chain of ``sampler``; work None: no bound,
    and the pilot stops on its score's plateau alone (``init.run_pilot``)."""
    if sampler == "gibbs":
        return PILOT_ITER, min(PILOT_SPLIT_MERGE, n_rows), None, None
    return (MINIBATCH_PILOT_ITER, "auto", MINIBATCH_PILOT_SPLIT_MERGE_WORK,
            MINIBATCH_PILOT_WORK)


def residual_chain():
    """``pilot_chain``'s tuple for the second pilot chain of the exact sampler's start
    (``RESIDUAL_SHARE``): a minibatch sampler's pilot, its work bounded by
    RESIDUAL_PILOT_WORK."""
    return (MINIBATCH_PILOT_ITER, "auto", MINIBATCH_PILOT_SPLIT_MERGE_WORK,
            RESIDUAL_PILOT_WORK)


def resolve_split_merge(value):
    """``split_merge`` resolved: "auto" (True: "auto") or an int >= 0 (False: 0). Validated
    before (``DPMixture._parameter_constraints``)."""
    if isinstance(value, (bool, np.bool_)):
        return "auto" if value else 0
    return value if isinstance(value, str) else int(value)


def resolve_tol(tol, sampler):
    """``tol`` resolved for ``sampler``: a float, or None for no convergence check."""
    if isinstance(tol, str):
        return AUTO_TOL[sampler]
    return None if tol is None else float(tol)


def default_max_iter(sampler, tol):
    """``max_iter=None``: MAX_ITER (MAX_ITER_GIBBS for "gibbs"), times TOL_ITER_FACTOR with a
    ``tol`` given (a number; "auto" keeps the cap)."""
    return ((MAX_ITER_GIBBS if sampler == "gibbs" else MAX_ITER)
            * (TOL_ITER_FACTOR if tol is not None and not isinstance(tol, str) else 1))


def check_every(sampler, n_rows, batch_size):
    """Iterations between convergence checks: GIBBS_CHECK_SWEEPS sweeps of the exact sampler;
    a pass over the ``n_rows`` rows in minibatches of ``batch_size``, or MINIBATCH_CHECK_ITER
    iterations when a pass is longer."""
    if sampler == "gibbs":
        return GIBBS_CHECK_SWEEPS
    return min(-(-n_rows // batch_size), MINIBATCH_CHECK_ITER)


@dataclasses.dataclass(frozen=True)
class Params:
    """A fit's parameters, validated and resolved: ``sampler`` is never "auto", ``max_iter``
    never None, ``split_merge`` "auto" or an int, ``step_size`` and ``stick_step_size``
    schedules (None for "gibbs"); the other fields are the constructor parameters of the same
    name (``base``: ``base_concentration``; ``alpha_shape``, ``alpha_rate``: ``alpha_prior``).
    Immutable values only: what a fit changes lives on the model."""

    sampler: str
    base: float
    alpha_shape: float
    alpha_rate: float
    initial_components: int
    batch_size: int
    max_iter: int
    max_time: float
    tol: float
    n_iter_no_change: int
    n_jobs: int
    evaluate_every: int
    split_merge: object
    restricted_scans: int
    shuffle_buffer: int
    init: str
    init_rows: int
    total_samples: int
    checkpoint_every: int
    warm_start: bool
    step_size: object = None
    stick_step_size: object = None

    @property
    def step_class(self):
        """``SCIR`` or ``SGRLD`` for the minibatched samplers, None for "gibbs"."""
        return SAMPLER_DEFAULTS[self.sampler]["cls"]
