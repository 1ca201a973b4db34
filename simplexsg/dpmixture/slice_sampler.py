"""The slice sampler of the DP mixture of multinomials, step by step, as functions of an explicit
``ChainState``: minibatched with SCIR or SGRLD (Baker, Fearnhead, Fox & Nemeth 2018, section
4.2), or exact Gibbs on all rows (Kalli, Griffin & Walker 2011).

Model: ``x_i | z_i ~ Multinomial(n_i, phi_{z_i})``, ``phi_j ~ Dirichlet(base)``, stick-breaking
weights ``w_j = v_j prod_{l<j} (1 - v_l)`` with ``v_j ~ Beta(1, alpha)`` and
``alpha ~ Gamma(a, b)`` (shape, rate).

Representation: ``phi_j`` is the normalised row j of positive gamma variables ``theta`` (J, d),
and ``v_j = g_j0 / (g_j0 + g_j1)`` for a pair of gamma variables ``sticks`` (J, 2), so that both
are simplex parameters the SCIR/SGRLD samplers of ``simplexsg.simplex`` move. Stick weights are
kept in logs, ``log v = log g0 - log(g0 + g1)``, ``log(1 - v) = log g1 - log(g0 + g1)``: v is
never rounded to 0 or 1, and no ``log(0)`` arises.

One iteration (``iterate``) on a set S of rows (a minibatch; every row for "gibbs"):

1. slices ``u_i ~ U(0, w_{z_i})`` for i in S;
2. new sticks (from the prior given alpha) while the leftover mass ``prod_j (1 - v_j)`` exceeds
   ``min_S u_i``, and the components (from the base measure) of those whose weight reaches
   ``min_S u_i``: the others can hold no row, and steps 4-5 drop or redraw them;
3. allocations ``p(z_i = j) ∝ 1(w_j >= u_i) prod_c phi_jc^x_ic`` (the executor's kernel,
   ``local.py``); for "gibbs", split-merge proposals (``split_merge.py``) and label shifts
   (``label_shift.py``) follow;
4. sticks and components after the last occupied one are dropped; components left without rows
   are redrawn from the base measure (for "gibbs", step 5 draws every component anew);
5. sticks: ``(g_j0, g_j1)`` targets ``Gamma(1 + m_j) x Gamma(alpha + M_j)``, i.e.
   ``v_j ~ Beta(1 + m_j, alpha + M_j)`` with ``m_j`` rows in j and ``M_j`` rows after j;
   components: ``theta_j`` targets ``Gamma(base + sum_{i in j} x_i)``; both with the counts of S
   scaled by N/|S|, one SCIR/SGRLD step (exact draws, an infinitely long SCIR step, for "gibbs").
   The counts of a component born in this iteration (a stick drawn in step 2) are not scaled:
   the rows outside S were allocated before it existed, so S holds all of its rows, and its
   counts are exact as they are; scaled, one row would weigh as N/|S| rows, and keep the stick
   and every empty one before it for the ~1/h steps its weight takes to decay;
6. ``alpha ~ Gamma(a + J, b - sum_{j<J} log(1 - v_j))``, its conditional given the J sticks.

Rows new to the chain (a streamed corpus, ``partial_fit``) have no allocation to slice from:
they are drawn ``∝ w_j Mult(x | phi_j)`` after the sticks are extended until the leftover mass is
below LEFTOVER_TOLERANCE. Every draw of an iteration comes from the generator it is given, in
the same order whichever executor runs the kernel.

This is the order of the SCIR paper's DP mixture experiment with the bugs of its authors' code
fixed: the counts that move the sticks and components are those of the rows just allocated, not
of a fresh minibatch with stale allocations; emptied components are redrawn from the base
measure, not reused; SGRLD drives the second stick coordinate with ``1 - v``; v stays strictly
inside (0, 1).
"""
import dataclasses
from collections import namedtuple

import numpy as np
from scipy.special import gammaln

from .._ext._dp import log_components, mixture_log_likelihood
from ..simplex import scir_transition, to_simplex
from .defaults import MIN_SPLIT_MERGE, SPLIT_MERGE_WORK, label_shift_count, split_merge_count
from .label_shift import shift_labels
from .local import kernel_layout

#: Sticks drawn at a time, at least, when the leftover mass must shrink below the smallest
#: slice; more where the sticks expected to take it there are more (``sticks_to_draw``).
NEW_STICKS = 8
#: Dense values (rows x components) scored at a time by ``predict``.
BLOCK_VALUES = 1 << 22
#: Rows new to the chain are allocated ∝ w_j Mult(x | phi_j) after the sticks are extended
#: until the leftover mass is below this; the rest of the mass is ignored.
LEFTOVER_TOLERANCE = 1e-6


@dataclasses.dataclass(frozen=True)
class ChainState:
    """What an iteration reads and replaces: the gamma variables of the represented components
    ``theta`` (J, d) and sticks ``sticks`` (J, 2), and the DP concentration ``alpha``."""

    theta: np.ndarray
    sticks: np.ndarray
    alpha: float


@dataclasses.dataclass(frozen=True)
class Kernel:
    """What the steps read and never change: ``sampler`` ("scir", "sgrld" or "gibbs", the
    chain's), the base measure's Dirichlet parameter ``base``, the Gamma prior of alpha,
    ``n_jobs``, the split-merge proposals per iteration (``split_merge``: "auto" or an int),
    and for "scir" / "sgrld" the ``step_class`` (``simplexsg.simplex.SCIR`` or ``SGRLD``) with
    the schedules of the components' and the sticks' steps; ``split_merge_work``: the budget
    of budgeted "auto" proposals, in block rows per row and occupied component (None:
    SPLIT_MERGE_WORK); ``label_shifts``: whether the exact sampler's moves end with label
    shifts (``split_merge``)."""

    sampler: str
    base: float
    alpha_shape: float
    alpha_rate: float
    n_jobs: int = 1
    split_merge: object = 0
    step_class: type = None
    step_size: object = None
    stick_step_size: object = None
    split_merge_work: float = None
    label_shifts: bool = True

    @classmethod
    def of(cls, params, sampler):
        """The kernel of a chain of ``sampler`` with the resolved parameters ``params``
        (``defaults.Params``)."""
        return cls(sampler, params.base, params.alpha_shape, params.alpha_rate, params.n_jobs,
                   params.split_merge, params.step_class, params.step_size,
                   params.stick_step_size)


def log_weights(sticks):
    """log w_j (J,) of the stick pairs (J, 2), and the log leftover mass log prod (1 - v_j)."""
    log_sticks = np.log(sticks)
    log_total = np.logaddexp(log_sticks[:, 0], log_sticks[:, 1])
    log_v, log_1mv = log_sticks[:, 0] - log_total, log_sticks[:, 1] - log_total
    before = np.concatenate([[0.0], np.cumsum(log_1mv)])
    return log_v + before[:-1], before[-1]


def sticks_to_draw(log_rest, lowest, alpha):
    """Sticks to draw from the prior to take the log leftover mass ``log_rest`` down to
    ``lowest``: each takes 1 / alpha from it on average (-log(1 - v), v ~ Beta(1, alpha)),
    so the expected number, and at least NEW_STICKS: a few draws, not one per
    NEW_STICKS sticks, where alpha is large and the slices small."""
    return max(NEW_STICKS, int(np.ceil((log_rest - lowest) * alpha)))


def prior_sticks(n, alpha, rng):
    """``n`` stick pairs drawn from the prior: Gamma(1) x Gamma(alpha)."""
    return scir_transition(np.ones((n, 2)), np.tile([1.0, alpha], (n, 1)), np.inf, rng)


def base_components(n, n_features, base, rng, n_jobs=1):
    """``n`` components (n, n_features) drawn from the base measure: Gamma(base) each, on
    ``n_jobs`` threads (the draws do not depend on them)."""
    return scir_transition(np.ones((n, n_features)), np.full((n, n_features), base), np.inf, rng,
                           n_jobs)


def new_state(n_components, n_features, base, alpha, rng):
    """A chain's start: ``n_components`` components from the base measure, then as many sticks
    from the prior given ``alpha``."""
    theta = base_components(n_components, n_features, base, rng)
    return ChainState(theta, prior_sticks(n_components, alpha, rng), alpha)


def extend(state, sticks, base, rng, n_jobs=1, drawn=None):
    """``state`` with the stick pairs ``sticks`` (n, 2) appended, and n components drawn from
    the base measure; ``drawn`` (bool (n,); None: all): only those are drawn, the others are
    placeholders (1 in every category) for components that no row can join, which the update
    drops or redraws as empty (module docstring, step 2)."""
    n, d = sticks.shape[0], state.theta.shape[1]
    if drawn is None:
        theta = base_components(n, d, base, rng, n_jobs)
    else:
        theta = np.ones((n, d))
        theta[drawn] = base_components(np.count_nonzero(drawn), d, base, rng, n_jobs)
    return dataclasses.replace(state, theta=np.vstack([state.theta, theta]),
                               sticks=np.vstack([state.sticks, sticks]))


def allocate(state, kernel, executor, X, z, rng):
    """Steps 1-3 on the rows X (as ``executor.take`` names them) with current components z:
    returns the state (sticks and components extended as needed) and the rows' new components.
    ``z`` None: rows new to the chain, drawn ∝ w_j Mult(x | phi_j)."""
    log_w, log_rest = log_weights(state.sticks)
    if z is None:
        log_slice = np.full(X.shape[0], -np.inf)
        lowest = np.log(LEFTOVER_TOLERANCE)
    else:
        log_slice = log_w[z] + np.log1p(-rng.random(z.size))    # u ~ U(0, w_z], log
        lowest = log_slice.min()
    sticks, n_before = state.sticks, state.sticks.shape[0]
    while log_rest > lowest:       # sticks first; their components in one draw after
        sticks = np.vstack([sticks, prior_sticks(sticks_to_draw(log_rest, lowest, state.alpha),
                                                 state.alpha, rng)])
        log_w, log_rest = log_weights(sticks)
    # the components some row can join: weight above its slice (rows new to the chain: all);
    # a new one that none can join is not drawn
    joinable = np.ones(log_w.size, dtype=bool) if z is None else log_w >= lowest
    if sticks.shape[0] > n_before:
        drawn = None if z is None else joinable[n_before:]
        state = extend(state, sticks[n_before:], kernel.base, rng, kernel.n_jobs, drawn)
    log_phi = log_components(state.theta, np.flatnonzero(joinable), kernel.n_jobs)
    labels = executor.allocate(X, log_phi, log_w, log_slice, rng.random(X.shape[0]), z is None,
                               kernel.n_jobs)
    return state, labels


def split_merge(state, kernel, move, z, rng, moves_scale=None):
    """``kernel.split_merge`` proposals of ``move`` (a ``split_merge.SplitMerge``) on the
    allocations z of every row (in place), then ``label_shift_count`` label shifts
    (``label_shift``) if ``kernel.label_shifts``, then as many represented sticks and
    components as the labels need (drawn from the prior: the exact sampler redraws them given
    z). "auto" with ``moves_scale`` (a number): ``split_merge_count(moves_scale, alpha, rows)``
    proposals, a count that z does not decide, so the moves leave p(z | alpha, X) invariant;
    without it (a warm-up, a pilot): MIN_SPLIT_MERGE proposals and more until their blocks
    held ``kernel.split_merge_work`` x rows x occupied components rows, a budget that stops on
    what the proposals met. ``move.proposed`` says how many were made."""
    if kernel.split_merge == "auto" and moves_scale is not None:
        move.run(z, state.alpha, rng, split_merge_count(moves_scale, state.alpha, z.size),
                 n_jobs=kernel.n_jobs)
    elif kernel.split_merge == "auto":
        occupied = np.count_nonzero(np.bincount(z))
        work = SPLIT_MERGE_WORK if kernel.split_merge_work is None else kernel.split_merge_work
        move.run(z, state.alpha, rng, MIN_SPLIT_MERGE, row_budget=work * z.size * occupied,
                 n_jobs=kernel.n_jobs)
    else:
        move.run(z, state.alpha, rng, kernel.split_merge, n_jobs=kernel.n_jobs)
    if kernel.label_shifts:
        shift_labels(z, state.alpha, rng, label_shift_count(state.alpha, z.size))
    return represented(state, kernel, z, rng)


def represented(state, kernel, z, rng):
    """``state`` with as many represented sticks and components as the labels z need, those
    it lacks drawn from the prior (the exact sampler redraws them given z)."""
    missing = int(z.max()) + 1 - state.sticks.shape[0]
    if missing <= 0:
        return state
    return extend(state, prior_sticks(missing, state.alpha, rng), kernel.base, rng,
                  kernel.n_jobs)


def allocation_visits(sticks, z, row_entries):
    """The visits an allocation sweep of rows with components z (n,) and ``row_entries``
    stored counts (n,) makes, expected over the slices: a row of component c, its slice u ~
    U(0, w_c), is compared with the components j of w_j >= u, sum_j min(1, w_j / w_c) of
    them in expectation, over each of its stored counts (the kernel's work; a measure of
    cost that the seed alone decides)."""
    w = np.exp(log_weights(sticks)[0])
    entries = np.bincount(z, weights=row_entries, minlength=w.size)
    used = np.flatnonzero(entries)
    ascending = np.sort(w)
    below = np.searchsorted(ascending, w[used], side="left")      # the j of w_j < w_c
    lighter = np.concatenate([[0.0], np.cumsum(ascending)])[below]
    return float(entries[used] @ (w.size - below + lighter / w[used]))


def holding_a_row(sticks, n_total):
    """Indices of the components whose weight is at least ``1 / n_total``: those expected to
    hold a row of a data set of ``n_total`` rows."""
    return np.flatnonzero(log_weights(sticks)[0] >= -np.log(n_total))


def update(state, kernel, executor, X, z, scale, t, rng, kept=None, established=None):
    """Steps 4-6 of iteration t: truncate, redraw empty components (not for "gibbs", which
    draws every component anew), move sticks and components by the counts of rows X
    (allocations z), then alpha. The counts are scaled by ``scale`` for the first
    ``established`` components (None: all; those the chain had before this iteration's
    allocation drew sticks from the prior) and taken as they are for those born since (module
    docstring, step 5). ``kept``: the allocations of every row the chain keeps (they decide
    truncation and emptiness: rows absent from X still count as members); None: rows new to
    the chain, whose allocations cannot say which components the rows outside X occupy:
    truncation keeps every component up to the last one that z uses or that, among the
    established ones, is expected to hold a row of the data (``holding_a_row``): a small
    cluster a minibatch misses is not dropped, and a stick just drawn from the prior is not
    kept for its prior weight alone. No component is redrawn."""
    z_all = z if kept is None else kept
    J = int(z_all.max()) + 1
    if kept is None:
        holding = holding_a_row(state.sticks[:established], scale * z.size)
        J = max(J, int(holding.max(initial=-1)) + 1)
    occupancy = np.bincount(z_all, minlength=J)
    sticks, theta = state.sticks[:J], state.theta[:J]
    empty = np.flatnonzero(occupancy == 0)
    if empty.size and kept is not None and kernel.sampler != "gibbs":   # gibbs draws all below
        theta = theta.copy()
        theta[empty] = base_components(empty.size, theta.shape[1], kernel.base, rng,
                                       kernel.n_jobs)
    first_born = J if established is None else established
    row_scale = np.where(np.arange(J) < first_born, scale, 1.0)
    members = np.bincount(z, minlength=J) * row_scale
    after = np.concatenate([np.cumsum(members[::-1])[::-1][1:], [0.0]])
    stick_counts = np.column_stack([members, after])
    stick_prior = np.tile([1.0, state.alpha], (J, 1))
    counts = row_scale[:, None] * executor.counts(X, z, J)
    if kernel.sampler == "gibbs":
        sticks = scir_transition(sticks, stick_prior + stick_counts, np.inf, rng, kernel.n_jobs)
        theta = scir_transition(theta, kernel.base + counts, np.inf, rng, kernel.n_jobs)
    else:
        sticks = _simplex_step(kernel, "stick_step_size", t, sticks, stick_prior, stick_counts,
                               rng)
        theta = _simplex_step(kernel, "step_size", t, theta, kernel.base, counts, rng)
    log_sticks = np.log(sticks)
    log_1mv = log_sticks[:, 1] - np.logaddexp(log_sticks[:, 0], log_sticks[:, 1])
    alpha = float(rng.gamma(kernel.alpha_shape + J,
                            1.0 / (kernel.alpha_rate - log_1mv.sum())))
    if kernel.sampler != "gibbs":     # gibbs redraws whole sticks next time: v is its state
        sticks = redraw_stick_totals(sticks, stick_counts, alpha, kernel.sampler, rng)
    return ChainState(theta, sticks, alpha)


def _simplex_step(kernel, name, t, theta, prior, counts, rng):
    """Step t of ``kernel.step_class`` with the schedule ``name``, on the chain's own arrays
    (unchecked: ``advance``); a ValueError, e.g. a step too small for the counts, names the
    parameter."""
    sampler = kernel.step_class(getattr(kernel, name), n_jobs=kernel.n_jobs)
    try:
        return sampler.advance(theta, prior, counts, t, rng)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def redraw_stick_totals(sticks, stick_counts, alpha, sampler, rng):
    """Each stick pair's total g0 + g1 redrawn given its proportion v and the new alpha.

    The sticks are pairs of gamma variables whose target, given alpha, is
    Gamma(1 + m_j) x Gamma(alpha + M_j) for SCIR (total Gamma(1 + alpha + m_j + M_j),
    independent of v) and whose total SGRLD's expanded mean leaves at its prior,
    Gamma(1 + alpha). alpha | v integrates the totals out, so (alpha, totals) | v is one
    exact block update; keeping the totals drawn for the previous alpha biases alpha and
    the number of clusters (tests/dpmixture/test_dpmixture_exact.py)."""
    shape = 1.0 + alpha + (stick_counts.sum(axis=1) if sampler == "scir"
                           else np.zeros(len(sticks)))
    proportions = sticks / sticks.sum(axis=1, keepdims=True)
    return np.maximum(proportions * rng.gamma(shape)[:, None], np.finfo(np.float64).tiny)


def iterate(state, kernel, executor, X, z, n_total, t, rng, *, kept=None, rows=None,
            move=None, moves_scale=None, laps=None):
    """Iteration t (steps 1-6) on the rows X with current components z (None: rows new to the
    chain), their counts scaled by ``n_total`` / rows. ``kept``: the allocations of every row,
    whose entries ``rows`` receive the new ones (in place); ``move``: the split-merge move of
    the exact sampler, with ``moves_scale`` (``split_merge``); ``laps``
    (``simplexsg._fitting.Laps``, or None): takes the laps "local" (the allocations), "moves"
    and "global" (the components, sticks and alpha) at their ends. Returns the new state and
    the rows' components."""
    lap = (lambda phase: None) if laps is None else laps.lap
    established = state.sticks.shape[0]
    state, labels = allocate(state, kernel, executor, X, z, rng)
    lap("local")
    if move is not None:
        state = split_merge(state, kernel, move, labels, rng, moves_scale)
    if kept is not None:
        kept[rows] = labels             # in place: the one array of the chain
    lap("moves")
    state = update(state, kernel, executor, X, labels, n_total / labels.size, t, rng, kept,
                   established)
    lap("global")
    return state, labels


#: The occupied components of a state given allocations: their indices, renormalised weights,
#: category probabilities, and the allocations relabelled to index them.
Summary = namedtuple("Summary", "occupied weights components labels")


def summary(state, z, n_total=None):
    """The ``Summary`` of ``state`` given the allocations z: the components z uses, and with
    ``n_total`` (z a minibatch of rows new to the chain, of a data set of that many rows) those
    expected to hold a row of the data (``holding_a_row``)."""
    J = state.sticks.shape[0]
    log_w, _ = log_weights(state.sticks)
    used = np.bincount(z, minlength=J) > 0
    if n_total is not None:
        used |= log_w >= -np.log(n_total)            # holding_a_row
    occupied = np.flatnonzero(used)
    relabel = np.full(J, -1)
    relabel[occupied] = np.arange(occupied.size)
    # normalised here, not by scipy.special.logsumexp, whose dispatch costs more than the sum
    weights = np.exp(log_w[occupied] - log_w[occupied].max())
    return Summary(occupied, weights / weights.sum(), to_simplex(state.theta[occupied]),
                   relabel[z])


def row_sums(X, values):
    """Sum of ``values`` (one per stored entry of CSR X) over each row's entries."""
    return np.bincount(np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)), values,
                       minlength=X.shape[0])


def log_multinomial_coefficient(X):
    """log(n_i! / prod_c x_ic!) per row (n_rows,) of CSR counts X."""
    return gammaln(np.asarray(X.sum(axis=1)).ravel() + 1.0) - row_sums(X, gammaln(X.data + 1.0))


def row_blocks(n_rows, width):
    """Slices of consecutive rows, each small enough that a dense (rows, ``width``) array of
    them holds at most BLOCK_VALUES values: scoring 10^6 rows against 1,000 components then
    takes 32 MB at a time, not 8 GB."""
    step = max(1, BLOCK_VALUES // max(width, 1))
    return [slice(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


def log_predictive(theta, sticks, base, X, n_jobs=1):
    """Log predictive density (n_rows,) of the CSR count rows X given the components ``theta``
    and the sticks ``sticks`` of a state, with the multinomial coefficient:
    ``log [sum_j w_j Mult(x | phi_j) + w_rest DirMult(x | base)]`` over the represented sticks
    j, the leftover mass ``w_rest`` scored by the Dirichlet-multinomial of the base measure
    (Dirichlet(``base``)), the mixture of the unrepresented components. The represented
    components' part is the allocation's kernel (``mixture_log_likelihood``), row by row on
    ``n_jobs`` threads (memory: log phi twice, (J, d) and transposed, and J doubles a
    thread); the values are the same whatever ``n_jobs``."""
    log_w, log_rest = log_weights(sticks)
    log_phi = log_components(theta, np.arange(theta.shape[0]), n_jobs)
    rows = kernel_layout(X)
    represented = np.empty(X.shape[0])
    mixture_log_likelihood(rows.indptr, rows.indices, rows.data, log_phi, log_w, represented,
                           n_jobs)
    d = X.shape[1]
    totals = np.asarray(X.sum(axis=1)).ravel()
    log_base = (gammaln(d * base) - gammaln(d * base + totals)
                + row_sums(X, gammaln(base + X.data) - gammaln(base)))
    return np.logaddexp(represented, log_rest + log_base) + log_multinomial_coefficient(X)
