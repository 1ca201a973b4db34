"""How a chain of the DP mixture starts (``init``): a random start, or the pilot chain whose
clusters start it, with over-provisioning for SCIR.

``init="random"``: ``initial_components`` components from the base measure, rows allocated
uniformly among them. ``init="pilot"``: a short exact chain with split-merge moves
(``defaults.pilot_chain``: sweeps of ``slice_sampler.iterate``) on a random subset of the rows
finds the clusters; its components, sticks and alpha start the chain, and every row is then
allocated to them ``∝ w_j Mult(x | phi_j)``. A one-row-at-a-time sampler started from 20
components merges true clusters and keeps them merged (SCIR has no move that splits), while the
pilot's clusters are found on few rows at little cost. A stochastic-gradient chain cannot
create clusters that the pilot's subset of the rows did not support, so when the pilot saw a
subset SCIR starts from its clusters alone, without its empty components, and from copies of
each when it found fewer than ``initial_components``, at the scale of the whole data
(``over_provision``). On short rows the exact sampler's start adds the clusters of a second
pilot on the rows the first explains worst (``with_residual_clusters``), and a minibatch
sampler's pilot on a subset starts from that start on its own rows (``exact_start``), and
grows to more rows while it settles within a small share of its work (``grown_pilot``), and
ends with the word-anchored splits that raise its joint density (``with_anchored_splits``).
The pilot chains of a fit share one deadline, PILOT_TIME_SHARE of ``max_time``.
docs/benchmarks/dp.rst has the measurements.

Every draw derives from the chain's seed in the namespace ``Stream.INIT`` (``defaults.Stream``).
"""
import dataclasses
from time import perf_counter

import numpy as np
import scipy.sparse as sp

from .._random import substream
from ..corpus import check_counts
from ..simplex import scir_transition
from ..stopping import Plateau
from .defaults import (GIBBS_CHECK_SWEEPS, MONITOR_ROWS, PASS_ROW_VISITS, PILOT_ENTRIES,
                       PILOT_CLUSTERS_CHECKS, PILOT_CLUSTERS_TOL, PILOT_GROWTH, PILOT_PATIENCE,
                       PILOT_ROWS, PILOT_TIME_SHARE, PILOT_TOL, RESIDUAL_BELOW_ENTRIES,
                       RESIDUAL_COMPONENTS, RESIDUAL_SHARE, SHUFFLE_BATCHES, Stream,
                       pilot_bounds, pilot_chain, residual_chain)
from .anchored_splits import anchored_splits
from .local import LocalExecutor, kernel_layout
from .slice_sampler import (LEFTOVER_TOLERANCE, ChainState, Kernel, allocate,
                            allocation_visits, iterate, log_predictive, new_state, row_blocks,
                            row_sums, summary)
from .split_merge import SplitMerge


def _rng(seed, index):
    return np.random.default_rng(substream(seed, Stream.INIT, index))


def initial_state(params, n_features, seed):
    """The state of a new chain before any data (``init="random"``'s start)."""
    return new_state(params.initial_components, n_features, params.base,
                     params.alpha_shape / params.alpha_rate, _rng(seed, 0))


def matrix_start(X, state, params, seed, executor):
    """The start of a new chain on the rows of X (CSR in this process, or a ``ShardedCorpus``
    on Dask workers; ``executor``: where they are, which reads the pilot's rows): its state
    and the allocations of every row."""
    if params.init == "random":
        return state, _rng(seed, 1).integers(params.initial_components, size=X.shape[0])
    rng, deadline = _rng(seed, 2), pilot_deadline(params)
    order, more_rows = rng.permutation(X.shape[0]), None
    if params.init_rows is None:          # up to the sampler's bounds on rows and entries
        row_entries = executor.row_entries(X)[order]
        n_rows = max(1, leading_rows(row_entries, *pilot_bounds(params.sampler)))
        more_rows = _rows_after(order, n_rows, row_entries, lambda rows: executor.read(X, rows))
    else:
        n_rows = params.init_rows
    rows = np.sort(order[:n_rows])
    X_pilot = executor.read(X, rows)
    state, found, X_pilot = pilot_clusters(X_pilot, rows.size < X.shape[0], params, seed,
                                           deadline, more_rows)
    state = chain_start(state, found, X_pilot, params, rng, X.shape[0])
    kernel = Kernel.of(params, params.sampler)
    if params.sampler == "gibbs" and rows.size < X.shape[0] and short_rows(X_pilot):
        state = with_residual_clusters(X, state, params, seed, kernel, rng, deadline)
    return allocate(state, kernel, executor, executor.take(X, None), None, rng)


def random_rows(row_entries, max_rows, max_entries, rng):
    """Sorted indices of a random subset of the rows with ``row_entries`` stored counts
    (n,): the first rows of a permutation drawn by ``rng``, up to ``max_rows`` rows and
    ``max_entries`` stored counts (at least one row)."""
    order = rng.permutation(row_entries.size)
    return np.sort(order[:max(1, leading_rows(row_entries[order], max_rows, max_entries))])


def leading_rows(row_entries, max_rows, max_entries):
    """How many of the rows with ``row_entries`` stored counts (n,), in order, fit within
    ``max_rows`` rows and ``max_entries`` stored counts (0 when the first does not)."""
    return min(max_rows, int(np.searchsorted(np.cumsum(row_entries), max_entries, "right")))


def _rows_after(order, taken, row_entries, read):
    """``more_rows`` of ``pilot_clusters`` for rows in memory: the next rows of the
    permutation ``order`` after its first ``taken`` (``row_entries``: their stored counts,
    in that order), as ``read`` (of sorted row indices) gives them; None when none fit."""
    def more_rows(max_rows, max_entries):
        nonlocal taken
        n_rows = leading_rows(row_entries[taken:], max_rows, max_entries)
        taken += n_rows
        return read(np.sort(order[taken - n_rows:taken])) if n_rows else None
    return more_rows


def short_rows(X_pilot):
    """Whether the rows of an exact sampler's pilot (CSR) are short: they hold fewer than
    RESIDUAL_BELOW_ENTRIES stored counts, so that small clusters need a second pilot."""
    return X_pilot.nnz < RESIDUAL_BELOW_ENTRIES


def short_rows_on_average(X):
    """Whether the CSR rows X are short on average: a pilot of PILOT_ROWS of them would be
    (``short_rows``), fewer than RESIDUAL_BELOW_ENTRIES / PILOT_ROWS (10) stored counts a
    row."""
    return X.nnz * PILOT_ROWS < RESIDUAL_BELOW_ENTRIES * max(X.shape[0], 1)


def with_residual_clusters(X, state, params, seed, kernel, rng, deadline=None):
    """``state`` (a pilot's, on a subset of the CSR rows X in this process) with the clusters
    of a second pilot chain on the rows its clusters explain worst (``residual_rows``, after
    an allocation of every row ``∝ w_j Mult(x | phi_j)``): started at random from
    RESIDUAL_COMPONENTS components, with the moves and stopping rule of ``residual_chain``.
    Each first cluster's weight is its share of the rows, each second one's its weight in
    the second pilot times that pilot's share of the rows. ``deadline``: ``run_pilot``'s."""
    state, z = allocate(state, kernel, LocalExecutor(), X, None, rng)
    found = summary(state, z)
    rows = residual_rows(X, found, params.base)
    X_rows = X[rows]
    if X_rows.sum() == 0:
        return state
    second, extra, _ = run_pilot(X_rows, params, substream(seed, Stream.INIT, 4),
                                 chain=residual_chain(), components=RESIDUAL_COMPONENTS,
                                 deadline=deadline)
    share = rows.size / X.shape[0]
    weights = np.concatenate([np.bincount(found.labels) / X.shape[0] * (1.0 - share),
                              extra.weights * share])
    theta = np.vstack([state.theta[found.occupied], second.theta[extra.occupied]])
    return ChainState(theta, _sticks(weights / weights.sum(), state.alpha), state.alpha)


def residual_rows(X, found, base):
    """Sorted indices of the rows of X (CSR) that the clusters of ``found`` (a ``Summary``
    of X) explain worst: the RESIDUAL_SHARE of them with the lowest log likelihood per
    count under their component against the unigram profile of X (its column sums plus
    ``base``), at most the rows and stored counts of ``pilot_bounds("scir")``."""
    n, log_phi = X.shape[0], np.log(found.components)
    fit = np.empty(n)
    for block in row_blocks(n, int(np.diff(X.indptr).max(initial=1))):
        part = X[block]                # a block at a time: the gathers hold its entries only
        labels = np.repeat(found.labels[block], np.diff(part.indptr))
        fit[block] = row_sums(part, part.data * log_phi[labels, part.indices])
    unigram = np.asarray(X.sum(axis=0)).ravel() + base
    gain = (fit - X @ np.log(unigram / unigram.sum())) / np.maximum(
        np.asarray(X.sum(axis=1)).ravel(), 1.0)
    worst = np.argsort(gain, kind="stable")
    max_rows, max_entries = pilot_bounds("scir")
    entries = np.cumsum(np.diff(X.indptr)[worst])
    k = min(int(RESIDUAL_SHARE * n), max_rows, int(np.searchsorted(entries, max_entries, "right")))
    return np.sort(worst[:k])


def stream_start(stream, state, params, seed):
    """The start of a new chain on a streamed corpus (``simplexsg.corpus.BowStream``): the
    pilot (``init="pilot"``) on the first minibatches of a shuffled pass, up to the pilot's
    rows and counts. Returns the state, the rows the convergence check scores (MONITOR_ROWS:
    those the pass reads after the pilot's, which the pilot did not fit; the pilot's first
    when it read every row) and the corpus's number of rows."""
    rng = _rng(seed, 2)
    max_rows, max_entries = pilot_bounds(params.sampler)
    batch = min(params.batch_size, max_rows)
    batches = stream.minibatches(batch, SHUFFLE_BATCHES * batch, rng)
    X_pilot = _next_rows(batches, params.init_rows or max_rows,
                    None if params.init_rows else max_entries)
    n_rows = stream.n_documents if stream.n_documents is not None else sum(
        1 for _ in stream.corpus)
    if X_pilot is None or n_rows == 0:
        raise ValueError("the corpus has no documents")
    if X_pilot.sum() == 0:
        raise ValueError("the corpus's first documents have no counts")
    if params.init != "pilot":
        X_monitor = _next_rows(batches, MONITOR_ROWS)
    else:
        more_rows = None if params.init_rows else (
            lambda max_rows, max_entries: _next_rows(batches, max_rows, max_entries))
        state, found, X_pilot = pilot_clusters(X_pilot, X_pilot.shape[0] < n_rows, params,
                                               seed, pilot_deadline(params), more_rows)
        X_monitor = _next_rows(batches, MONITOR_ROWS)       # before the start's draws
        state = chain_start(state, found, X_pilot, params, rng, n_rows)
    return state, (X_pilot if X_monitor is None else X_monitor)[:MONITOR_ROWS], n_rows


def whole_stream(stream, max_rows, max_entries, block):
    """The rows of a streamed corpus (``BowStream``) in its order (CSR), read ``block`` at a
    time, when it holds at most ``max_rows`` rows and ``max_entries`` stored counts; else None,
    having read up to the block that passes a bound (nothing when its declared documents, or
    the stored counts a UCI file's header declares, ``nnz``, already do: the pilot reads those
    rows again). None too for a corpus without documents (the streamed fit says so)."""
    declared = getattr(stream.corpus, "nnz", None)
    if (stream.n_documents is not None and stream.n_documents > max_rows) or (
            declared is not None and declared > max_entries):
        return None
    X = _next_rows(stream.minibatches(block), max_rows + 1, max_entries + 1)
    return X if X is not None and X.shape[0] <= max_rows and X.nnz <= max_entries else None


def _next_rows(batches, max_rows, max_entries=None):
    """The CSR rows of the next minibatches of ``batches`` (``BowStream.minibatches``), until
    ``max_rows`` rows or ``max_entries`` stored counts (None: no bound) are read or the pass
    ends; None when it has ended."""
    read, rows, entries = [], 0, 0
    for _, X_rows in batches:
        read.append(sp.csr_matrix(check_counts(X_rows)))
        rows, entries = rows + read[-1].shape[0], entries + read[-1].nnz
        if rows >= max_rows or (max_entries is not None and entries >= max_entries):
            break
    return sp.vstack(read, format="csr") if read else None


def pilot_clusters(X_pilot, subset, params, seed, deadline, more_rows=None):
    """The pilot chain on the rows ``X_pilot`` (``subset``: a subset of the data's rows):
    its last state, that state's ``Summary`` and the rows it ran on. A minibatch sampler's
    pilot on a subset starts where the exact sampler would start on its rows
    (``exact_start``) when they are short, and grows (``grown_pilot``) when ``more_rows`` can
    give it more of them. ``deadline``: ``run_pilot``'s, for every pilot chain it runs."""
    start = None
    if params.sampler != "gibbs" and subset:
        start = exact_start(X_pilot, params, seed, deadline)
    state, found, spare = run_pilot(X_pilot, params, substream(seed, Stream.INIT, 3),
                                    start=start, deadline=deadline)
    if params.sampler == "gibbs" or not subset:
        return state, found, X_pilot
    if more_rows is not None:
        state, found, X_pilot = grown_pilot(state, found, spare, X_pilot, params, seed,
                                            deadline, more_rows)
    state, found = with_anchored_splits(state, found, X_pilot, params, seed, deadline)
    return state, found, X_pilot


def with_anchored_splits(state, found, X_pilot, params, seed, deadline):
    """A minibatch sampler's pilot (its last ``state`` and that state's ``Summary`` ``found``
    on the CSR rows ``X_pilot``) with the word-anchored splits of its clusters that raise the
    joint density (``anchored_splits``, until ``deadline``): the clusters of short rows that
    the pilot's chain leaves merged, which the stochastic-gradient chain after it cannot split.
    Each component a split made or changed gets a draw from its rows' posterior, and a share
    of its parent's weight in proportion to its rows; the others keep theirs. Returns the
    state and its ``Summary`` (both as they were when no split raises the joint density).
    Draws from ``Stream.SPLITS`` 0."""
    rng = np.random.default_rng(substream(seed, Stream.SPLITS, 0))
    z = found.labels.astype(np.int64)
    if not anchored_splits(X_pilot, z, params.base, state.alpha, rng, deadline):
        return state, found
    n_labels, n_found = int(z.max()) + 1, found.occupied.size
    parent = np.zeros(n_labels, dtype=np.int64)
    parent[z] = found.labels                    # a split's rows all come from one cluster
    sizes = np.bincount(z, minlength=n_labels)
    changed = sizes != np.bincount(found.labels, minlength=n_found)[parent]
    theta = np.vstack([state.theta[found.occupied],
                       np.empty((n_labels - n_found, X_pilot.shape[1]))])
    counts = LocalExecutor.counts(X_pilot, z, n_labels)[changed]
    theta[changed] = scir_transition(np.ones_like(counts), params.base + counts, np.inf, rng)
    weights = found.weights[parent] * sizes / np.bincount(found.labels)[parent]
    state = ChainState(theta, _sticks(weights / weights.sum(), state.alpha), state.alpha)
    return state, summary(state, z)


def chain_start(state, found, X_pilot, params, rng, n_total):
    """The chain's start from a pilot's last ``state`` (``found``: its ``Summary`` on the
    rows ``X_pilot``, of the data's ``n_total``): SCIR's ``over_provision`` when the pilot saw
    a subset of the rows (copies: at least 1), else the state as it is."""
    if params.sampler != "scir" or X_pilot.shape[0] == n_total:
        return state
    copies = -(-params.initial_components // found.occupied.size)
    return over_provision(state, found, X_pilot, copies, params.base, rng, n_total)


def grown_pilot(state, found, spare, X_pilot, params, seed, deadline, more_rows):
    """A minibatch sampler's pilot (its last ``state``, its ``Summary`` ``found`` and the
    ``spare`` work it settled with, on the CSR rows ``X_pilot``) grown while it settles
    cheaply: as long as its work to spare is at least PILOT_GROWTH times the work it has
    spent, it takes as many rows again from ``more_rows`` (a function of (rows, stored counts)
    at most, giving the next CSR rows or None), within the pilot's bound on stored counts,
    and its chain goes on over all of them from its state, with the work it has to spare. A
    stage on twice the rows costs at least twice as much, so only a pilot that would have
    that much work left grows. The clusters of short rows that the pilot misses are small
    ones merged into others, which more rows tell apart, and a pilot that settles within a
    fraction of its budget has its clusters cheaply ("The pilot that grows" in
    docs/benchmarks/dp.rst). Stage k draws from ``Stream.INIT`` 7 + k. Returns the state, its
    ``Summary`` and the rows."""
    _, max_entries = pilot_bounds(params.sampler)
    sweeps, proposals, budget, max_work = pilot_chain(params.sampler, X_pilot.shape[0])
    stage = 0
    while spare >= PILOT_GROWTH * (max_work - spare) and X_pilot.nnz < max_entries:
        X_more = more_rows((PILOT_GROWTH - 1) * X_pilot.shape[0], max_entries - X_pilot.nnz)
        if X_more is None:
            break
        X_pilot = sp.vstack([X_pilot, X_more], format="csr")
        state, found, spare = run_pilot(X_pilot, params, substream(seed, Stream.INIT, 7 + stage),
                                        chain=(sweeps, proposals, budget, spare), start=state,
                                        deadline=deadline)
        stage += 1
    return state, found, X_pilot


def exact_start(X, params, seed, deadline=None):
    """The start of the exact sampler on the CSR rows X where they are short, as its own fit
    takes it (``matrix_start``): the clusters of a pilot on a random subset of them (within
    PILOT_ROWS and PILOT_ENTRIES), with a second pilot's on the rows these explain worst
    (``with_residual_clusters``); None where that subset holds every row or is not
    ``short_rows``. A minibatch sampler's pilot starts there: from a random start its chain
    cuts the dominant clusters of short rows into pieces and finds fewer small clusters
    ("A pilot that starts as the exact sampler" in docs/benchmarks/dp.rst). Draws from the
    streams ``Stream.INIT`` 5 (the subset, the second pilot's rows) and 6 (the first pilot)."""
    rng = _rng(seed, 5)
    rows = random_rows(np.diff(X.indptr), PILOT_ROWS, PILOT_ENTRIES, rng)
    X_small = X[rows]
    if rows.size == X.shape[0] or not short_rows(X_small):
        return None
    exact = dataclasses.replace(params, sampler="gibbs")
    small, _, _ = run_pilot(X_small, exact, substream(seed, Stream.INIT, 6), deadline=deadline)
    return with_residual_clusters(X, small, params, seed, Kernel.of(exact, "gibbs"), rng,
                                  deadline)


def pilot_deadline(params):
    """The ``perf_counter`` time by which the pilot chains of a fit with ``max_time`` stop
    (PILOT_TIME_SHARE of it from now); None without ``max_time``."""
    if params.max_time is None:
        return None
    return perf_counter() + PILOT_TIME_SHARE * params.max_time


def monitor_rows(n_rows, rng):
    """Sorted indices of the rows a convergence check scores: MONITOR_ROWS of the ``n_rows``
    drawn by ``rng`` without replacement, or every row when there are no more."""
    if n_rows <= MONITOR_ROWS:
        return np.arange(n_rows)
    return np.sort(rng.choice(n_rows, MONITOR_ROWS, replace=False))


def run_pilot(X, params, seed, chain=None, components=None, start=None, deadline=None):
    """The pilot chain on the CSR rows X: the exact sampler with the sweeps, split-merge
    proposals and bound on work of ``chain`` (None: ``pilot_chain`` for the chain of
    ``params.sampler``), from a random start with ``components`` (None:
    ``params.initial_components``) or from the state ``start`` (every row allocated to its
    components), its draws derived from ``seed``; no label shifts: its moves are budgeted,
    so not invariant, and the shifts, there for the exactness of a chain, would cost it
    sweeps for nothing ("Label shifts" in docs/benchmarks/dp.rst). It stops before its
    sweeps are done on a plateau of its own check (``PILOT_TOL``, ``PILOT_PATIENCE``: minus
    the mean log predictive of ``monitor_rows`` of X, every GIBBS_CHECK_SWEEPS sweeps); with
    a bound on its work (that of ``pilot_chain``), only once its occupied components have
    also settled (``settled``), and once its work reaches the bound (in visits: each sweep's
    ``allocation_visits`` from the state it starts at, and PASS_ROW_VISITS per row its
    moves' passes went over); with ``max_time``, after the sweep that ends past ``deadline``
    (None: ``pilot_deadline``). Returns its last state, that state's ``Summary`` and the
    work it has to spare: its bound less its work when it stopped on its plateau, else 0."""
    if X.sum() == 0:
        raise ValueError("X has no counts: every row is empty")
    n_rows, K = X.shape[0], components or params.initial_components
    sweeps, proposals, budget, max_work = chain or pilot_chain(params.sampler, n_rows)
    kernel = Kernel("gibbs", params.base, params.alpha_shape, params.alpha_rate, params.n_jobs,
                    proposals, split_merge_work=budget, label_shifts=False)
    if start is None:
        state = new_state(K, X.shape[1], params.base, params.alpha_shape / params.alpha_rate,
                          _rng(seed, 0))
        z = _rng(seed, 1).integers(K, size=n_rows)
    else:
        state, z = allocate(start, kernel, LocalExecutor(), X, None, _rng(seed, 1))
    X_kernel = kernel_layout(X)        # converted once, not in every sweep's kernels
    move = SplitMerge(X_kernel, params.base, params.restricted_scans)
    executor, rows = LocalExecutor(), np.arange(n_rows)
    X_monitor, plateau = X[monitor_rows(n_rows, _rng(seed, 2))], Plateau(PILOT_TOL, PILOT_PATIENCE)
    deadline = pilot_deadline(params) if deadline is None else deadline
    work, row_entries, occupied, spare = 0.0, np.diff(X.indptr), [], 0.0
    for t in range(sweeps):
        rng = np.random.default_rng(substream(seed, Stream.STEP, t))
        work += allocation_visits(state.sticks, z, row_entries)
        state, _ = iterate(state, kernel, executor, X_kernel, z[rows], n_rows, t, rng, kept=z,
                           rows=rows, move=move)
        if deadline is not None and perf_counter() >= deadline:
            break
        if max_work is not None and work + PASS_ROW_VISITS * move.rows_passed >= max_work:
            break
        if (t + 1) % GIBBS_CHECK_SWEEPS == 0:
            occupied.append(np.count_nonzero(np.bincount(z)))
            if plateau.update(-np.mean(log_predictive(
                    state.theta, state.sticks, params.base, X_monitor, params.n_jobs))) and (
                    max_work is None or settled(occupied)):
                if max_work is not None:
                    spare = max_work - work - PASS_ROW_VISITS * move.rows_passed
                break
    return state, summary(state, z), spare


def settled(occupied):
    """Whether the occupied components of a pilot's checks (``occupied``, in order) moved by
    at most PILOT_CLUSTERS_TOL of their number over the last PILOT_CLUSTERS_CHECKS checks."""
    if len(occupied) <= PILOT_CLUSTERS_CHECKS:
        return False
    before = occupied[-1 - PILOT_CLUSTERS_CHECKS]
    return abs(occupied[-1] - before) <= PILOT_CLUSTERS_TOL * before


def over_provision(state, found, X_pilot, copies, base, rng, n_total):
    """The pilot's ``state`` reduced to its clusters (``found``, its ``Summary`` on the rows
    ``X_pilot``), ``copies`` copies of each (1: the clusters alone), at the scale of the
    data's ``n_total`` rows: each copy an independent draw of the cluster's components given
    its pilot rows' counts scaled by ``n_total / rows / copies``, as SCIR scales a
    minibatch's, with an equal share of its weight, and sticks whose totals are those of the
    rows they stand for (``_sticks``). Rows then split among the copies at random, as in a
    random start, and the chain can empty copies or pull them apart. At the scale of the
    pilot's own rows, the first SCIR step would replace what the pilot learnt by one
    minibatch's counts, N / rows times heavier (docs/benchmarks/dp.rst, "SCIR's start at
    the data's scale"). The pilot's empty components, draws from the base measure below its
    last occupied label, are left out: SCIR draws each new row among every component it
    holds, and on 200,000 pilot rows they are over two thirds of them (the same page, "The
    pilot's empty components"). A pilot on every row needs no copies."""
    scale = n_total / X_pilot.shape[0] / copies
    counts = LocalExecutor.counts(X_pilot, found.labels, found.occupied.size)
    shape = base + scale * np.repeat(counts, copies, axis=0)
    theta = scir_transition(np.ones_like(shape), shape, np.inf, rng)
    return ChainState(theta, _sticks(np.repeat(found.weights / copies, copies), state.alpha,
                                     n_total), state.alpha)


def _sticks(weights, alpha, n_rows=0):
    """Stick pairs (J, 2) of the weights (J,), summing to 1, less LEFTOVER_TOLERANCE for the
    sticks after them: proportions v, totals 1 + alpha plus the ``n_rows`` rows the weights
    from the stick on stand for (the total of a SCIR stick's target given those rows; 0: the
    prior's alone)."""
    weights = weights * (1.0 - LEFTOVER_TOLERANCE)
    before = 1.0 - np.concatenate([[0.0], np.cumsum(weights)[:-1]])
    v = weights / before
    return np.column_stack([v, 1.0 - v]) * (1.0 + alpha + n_rows * before)[:, None]
