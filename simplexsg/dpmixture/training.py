"""The DP mixture's training loop: minibatch source -> slice-sampler iteration -> bookkeeping.

One loop (``Trainer.run``) serves the three ways to train, each with its minibatch source:
``fit`` on a count matrix (``matrix_minibatches``: a seeded permutation per pass; the
allocations of every row kept in the model's ``_z``), ``fit`` on a streamed corpus
(``stream_minibatches``: a seeded shuffle buffer; rows new to the chain; a corpus small
enough, ``init.whole_stream``, is read whole and fitted as a count matrix) and ``partial_fit``
(its one minibatch, rows new to the chain). ``fit_matrix``, ``fit_stream`` and ``partial_fit``
plan the call (a new chain, or with ``warm_start`` a resumed or continued one), then run it.

The model is the state: its fitted attributes ``theta_``, ``sticks_`` and ``alpha_`` are the
``slice_sampler.ChainState`` an iteration replaces. Each iteration runs in a transaction: an
exception (Ctrl-C included) leaves the model as after the previous iteration; a fit stopped
that way keeps its completed iterations (``interrupted_``, ``stop_reason_`` "interrupted"), or,
before any, is undone. Every draw derives from the model's SeedSequence through the namespaces
of ``defaults.Stream``, so a fit is the same for any ``n_jobs`` and any executor.
"""
import contextlib
import copy
import itertools
from time import perf_counter

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from .._fitting import (Laps, array_digest, check_unchanged, fit_plan, progress_bar,
                        restore_on_error, result_params, transaction, write_checkpoint)
from .._random import seed_sequence, substream
from ..corpus import as_corpus, check_counts, corpus_features
from ..stopping import PlateauMonitor
from . import defaults, distributed, init, slice_sampler
from .anchored_splits import anchored_splits
from .defaults import SHUFFLE_BATCHES, Stream
from .local import LocalExecutor, kernel_layout
from .split_merge import SplitMerge


def matrix_minibatches(X, executor, batch_size, seed, start):
    """Yield (rows, the rows as ``executor.take`` names them) for iterations ``start``,
    ``start + 1``, ...: iteration t takes rows ``t * batch_size`` onwards (modulo the rows) of
    its pass's seeded permutation, sorted; all rows when a batch holds them."""
    n_rows, order = X.shape[0], (None, None)       # (pass, its permutation), drawn once a pass
    for t in itertools.count(start):
        epoch, offset = divmod(t * batch_size, n_rows)
        if batch_size < n_rows and order[0] != epoch:
            order = (epoch, np.random.default_rng(substream(seed, Stream.ORDER, epoch))
                     .permutation(n_rows))
        rows = (np.sort(order[1][offset:offset + batch_size]) if batch_size < n_rows
                else np.arange(n_rows))
        yield rows, executor.take(X, None if batch_size >= n_rows else rows)


def stream_minibatches(stream, batch_size, shuffle_buffer, seed):
    """Yield (None, CSR minibatch) of a ``BowStream``, pass after pass, each drawn through the
    pass's seeded shuffle buffer of ``shuffle_buffer`` documents."""
    for epoch in itertools.count():
        rng = np.random.default_rng(substream(seed, Stream.ORDER, epoch))
        for _, X_rows in stream.minibatches(batch_size, shuffle_buffer, rng):
            yield None, sp.csr_matrix(check_counts(X_rows))


def read_state(model):
    return slice_sampler.ChainState(model.theta_, model.sticks_, model.alpha_)


def write_state(model, state):
    model.theta_, model.sticks_, model.alpha_ = state.theta, state.sticks, state.alpha


def new_chain(model, params, seed):
    """Start the fitted attributes of a new chain with seed ``seed`` (``init.initial_state``)."""
    model.sampler_, model.random_state_, model.base_concentration_ = params.sampler, seed, \
        params.base
    write_state(model, init.initial_state(params, model.n_features_in_, seed))
    model.n_iter_, model.history_, model._moves_scale = 0, [], None


def summarise(model, z, n_total=None):
    """The fitted attributes of the occupied components, given the allocations z (with
    ``n_total``: a minibatch of rows new to the chain, ``slice_sampler.summary``)."""
    found = slice_sampler.summary(read_state(model), z, n_total)
    model.n_components_ = found.occupied.size
    model.weights_, model.components_, model.labels_ = found.weights, found.components, \
        found.labels


class MinusScore:
    """The score of the convergence check: ``score(model)`` is minus ``model.score(rows)``, the
    mean log predictive density per row of ``rows`` under the model's summary (positive: the
    rows are counts); smaller is better."""

    def __init__(self, rows):
        self.rows = rows

    def __call__(self, model):
        return -model.score(self.rows)


#: The phases ``timings_`` clocks: the chain's start (random or pilot), then those of an
#: iteration in their order.
PHASES = ("init", "read", "local", "moves", "global")


def new_timings(init_seconds):
    """``timings_`` of a fit whose start took ``init_seconds``."""
    return {**dict.fromkeys(PHASES, 0.0), "init": init_seconds}


def new_monitor(params, heldout, sample):
    """The convergence check of a new fit, None without ``tol``: a ``PlateauMonitor`` (``tol``,
    ``n_iter_no_change``) of the ``MinusScore`` of ``heldout``, or without it of the training
    rows ``sample()``; its ``history`` entries name the score "minus_score"."""
    if params.tol is None:
        return None
    rows = heldout if heldout is not None else sample()
    return PlateauMonitor(MinusScore(rows), params.tol, params.n_iter_no_change,
                          name="minus_score")


class Trainer:
    """The loop of one ``fit`` (``fit=True``: it keeps time, ``history_``, the stop checks
    and ``stop_reason_``) or ``partial_fit`` (its one iteration only) on ``model`` with the
    resolved parameters ``params``; ``executor``: where the allocations run; ``n_total``: the
    rows the counts are scaled to; ``move``: the split-merge move of the exact sampler;
    ``heldout``: the rows ``history_`` scores; ``check_every``: the iterations between the
    convergence checks (the model's ``_monitor``, when it has one); ``checkpoints``: write
    them (``fit`` on a count matrix)."""

    def __init__(self, model, params, executor, n_total, *, fit=True, move=None, heldout=None,
                 check_every=1, checkpoints=False):
        self.model, self.params, self.executor, self.n_total = model, params, executor, n_total
        self.kernel = slice_sampler.Kernel.of(params, model.sampler_)
        self.fit, self.move, self.heldout = fit, move, heldout
        self.check_every = check_every
        self.new_rows_total = None     # n_total once an iteration's rows were new to the chain
        self.checkpoint_every = params.checkpoint_every if checkpoints else None

    def run(self, batches, end_iter):
        """Iterate on ``batches`` ((rows or None, minibatch) pairs) until ``n_iter_`` reaches
        ``end_iter`` or a stop check fires. An exception after an iteration completed keeps
        the completed ones (``stop_reason_`` "interrupted"); before, the caller undoes the
        call (``undone_if_untrained``)."""
        model, batches = self.model, iter(batches)
        first, reason, z = model.n_iter_, "max_iter", getattr(model, "_z", None)
        progress = None
        try:
            progress = self._progress(end_iter - first) if self.fit else None
            while model.n_iter_ < end_iter:
                laps = Laps(perf_counter())  # reading a streamed minibatch counts as training
                batch = next(batches, None)
                if batch is None:
                    break
                laps.lap("read")
                rows, X_rows = batch
                with self.transaction(rows):
                    z = self.step(X_rows, rows, laps)
                    if self.fit:
                        model.training_seconds_ += laps.last - laps.start
                        model.timings_ = laps.added_to(model.timings_)
                        self._record(z)
                if progress is not None:
                    progress.update(1)
                if self.checkpoint_every and model.n_iter_ % self.checkpoint_every == 0:
                    self.summarise(z)
                    write_checkpoint(model, model.checkpoint_path)
                stop = self._stop_reason(z) if self.fit else None
                if stop is not None:
                    reason = stop
                    break
        except BaseException:
            if model.n_iter_ != first:
                model.stop_reason_ = "interrupted"
                self.summarise(z)
            raise
        finally:
            if progress is not None:
                progress.close()
        if self.fit:
            model.stop_reason_, model.interrupted_ = reason, False
        self.summarise(z)

    def summarise(self, z):
        """The model's summary given the allocations z the last iteration returned."""
        summarise(self.model, z, self.new_rows_total)

    def transaction(self, rows):
        """One iteration, undone if it raises (Ctrl-C included): the model's attributes (rebound
        by the iteration, never written in place) and the allocations ``_z[rows]`` of a count
        matrix's rows (written in place; ``rows`` None: none) come back as they were."""
        model = self.model
        if rows is None:
            return transaction(model)
        z_before = model._z[rows]

        def undo():
            model._z[rows] = z_before
        return transaction(model, undo=undo)

    def step(self, X_rows, rows, laps=None):
        """One iteration of the chain on the minibatch ``X_rows``: the rows ``rows`` of a count
        matrix (their allocations kept in ``_z``), or None (rows new to the chain); ``laps``
        (a ``Laps``, or None) clocks its phases. Returns the allocations the model's summary
        uses (``_z``, or the minibatch's)."""
        model, t = self.model, self.model.n_iter_
        rng = np.random.default_rng(substream(model.random_state_, Stream.STEP, t))
        kept = None if rows is None else model._z
        self.new_rows_total = self.n_total if rows is None else None
        alpha = model.alpha_
        state, z = slice_sampler.iterate(
            read_state(model), self.kernel, self.executor, X_rows,
            None if rows is None else kept[rows], self.n_total, t, rng, kept=kept, rows=rows,
            move=self.move, moves_scale=model._moves_scale, laps=laps)
        write_state(model, state)
        model.n_iter_ = t + 1
        if self._end_warmup(alpha) and laps is not None:
            laps.lap("moves")           # the splits that end it
        return z if kept is None else kept

    def _end_warmup(self, alpha):
        """End the warm-up of the exact sampler's "auto" moves, whose work budget set their
        number, after the first sweep at or past SPLIT_MERGE_WARMUP that follows a
        convergence check without progress (the chain has settled), or that reaches half of
        the fit's iterations or of its ``max_time``: from then on that sweep's number, scaled
        with alpha (``model._moves_scale``: ``defaults.split_merge_scale``), so that the
        chain's moves leave the posterior invariant (``slice_sampler.split_merge``); on short
        rows, with the word-anchored splits of ``_split_by_words``. Returns whether it ended
        the warm-up."""
        model, params = self.model, self.params
        if (self.move is None or self.kernel.split_merge != "auto"
                or model._moves_scale is not None
                or model.n_iter_ < defaults.SPLIT_MERGE_WARMUP):
            return False
        settled = model._monitor is not None and model._monitor.misses > 0
        halfway = 2 * model.n_iter_ >= model._end_iter or (
            params.max_time is not None and 2 * model.training_seconds_ >= params.max_time)
        if not (settled or halfway):
            return False
        model._moves_scale = defaults.split_merge_scale(self.move.proposed, alpha, self.n_total)
        self._split_by_words()
        return True

    def _split_by_words(self):
        """At the end of the exact chain's warm-up on short rows (``init.short_rows_on_average``),
        the word-anchored splits that raise the joint density of its allocations
        (``anchored_splits``), then its components, sticks and alpha drawn given them (the
        global step): the chain's own moves rarely split a small cluster of short rows out of
        a large one ("Word-anchored splits" in docs/benchmarks/dp.rst). A warm-up need not
        leave the posterior invariant; the chain's moves after it do. Draws from
        ``Stream.SPLITS`` 1."""
        model, X = self.model, self.move.X
        if not init.short_rows_on_average(X):
            return
        rng = np.random.default_rng(substream(model.random_state_, Stream.SPLITS, 1))
        z, state = model._z, read_state(model)
        if not anchored_splits(X, z, self.kernel.base, state.alpha, rng):
            return
        state = slice_sampler.represented(state, self.kernel, z, rng)
        write_state(model, slice_sampler.update(state, self.kernel, self.executor, X, z, 1.0,
                                                model.n_iter_, rng, kept=z))

    def _stop_reason(self, z):
        """After an iteration: "max_time" when the budget is spent, "converged" on a plateau of
        the check, else None."""
        model, params = self.model, self.params
        if params.max_time is not None and model.training_seconds_ >= params.max_time:
            return "max_time"
        if model._monitor is not None and model.n_iter_ % self.check_every == 0 \
                and self._converged(z):
            return "converged"
        return None

    def _converged(self, z):
        """The convergence check (``model._monitor``) of the current state; True on a plateau
        (``tol``)."""
        model = self.model
        self.summarise(z)
        monitor = copy.copy(model._monitor)        # rebound: an interruption keeps the old one
        done = monitor.check(model, model.n_iter_)
        model._monitor = monitor
        return done

    def _record(self, z):
        """Every ``evaluate_every`` iterations, an entry of ``history_``."""
        model, every = self.model, self.params.evaluate_every
        if not every or model.n_iter_ % every:
            return
        self.summarise(z)
        entry = dict(iteration=model.n_iter_, seconds=model.training_seconds_,
                     alpha=model.alpha_, n_components=model.n_components_,
                     score=None if self.heldout is None else model.score(self.heldout))
        model.history_ = model.history_ + [entry]   # rebound: an undone iteration restores it
        if model.verbose >= 2:
            score = "" if entry["score"] is None else f", held-out score {entry['score']:.4f}"
            print(f"iteration {entry['iteration']}: {entry['seconds']:.1f} s, alpha "
                  f"{entry['alpha']:.3g}, {entry['n_components']} components{score}")

    def _progress(self, total):
        return progress_bar(self.model.verbose, total, f"DP mixture ({self.model.sampler_})",
                            "iter")


# ---------------------------------------------------------------- the three ways to train
@contextlib.contextmanager
def undone_if_untrained(model, saved):
    """Run a fit from its start on; if it raises before an iteration completed (Ctrl-C
    included), put back the model's attributes ``saved``, those before the fit."""
    first = model.n_iter_
    try:
        yield
    except BaseException:
        if model.n_iter_ == first:            # no iteration completed: nothing to keep
            model.__dict__.clear()
            model.__dict__.update(saved)
        raise


def fit_matrix(model, X, X_heldout):
    """``fit`` on a count matrix (or, with a client, ``CorpusShards``: files the workers read):
    a new chain, or (``warm_start``) a resumed or continued one, run to its end."""
    saved = dict(model.__dict__)
    X, heldout, params, executor = _start_matrix(model, X, X_heldout)
    with undone_if_untrained(model, saved):
        n_rows = X.shape[0]
        gibbs = model.sampler_ == "gibbs"
        batch = n_rows if gibbs else min(params.batch_size, n_rows)
        move = (SplitMerge(X, params.base, params.restricted_scans)
                if gibbs and params.split_merge else None)
        trainer = Trainer(model, params, executor, n_rows, heldout=heldout, move=move,
                          check_every=defaults.check_every(model.sampler_, n_rows, batch),
                          checkpoints=True)
        trainer.run(matrix_minibatches(X, executor, batch, model.random_state_, model.n_iter_),
                    model._end_iter)


def _monitor_rows(X, seed, executor):
    """The training rows the convergence check scores without ``X_heldout``: a seeded sample
    of MONITOR_ROWS (all when fewer), read by ``executor``."""
    rng = np.random.default_rng(substream(seed, Stream.MONITOR, 0))
    return executor.read(X, init.monitor_rows(X.shape[0], rng))


def _read_matrix(model, X, reset):
    """X checked for ``model`` (``_read``), or, for ``CorpusShards``, the ``ShardedCorpus`` its
    files make on the client's workers, checked in the same way: a vocabulary size, counts
    when ``reset``, the fitted size otherwise."""
    if not isinstance(X, distributed.CorpusShards):
        return model._read(X, reset)
    if model.client is None:
        raise TypeError("CorpusShards are read by the workers of a Dask client: give "
                        "DPMixture a client, or stream the files (simplexsg.readers."
                        "UCIBowCorpus) without one")
    if not reset:
        check_is_fitted(model, "theta_")
    corpus = X.read(model.client)
    if reset:
        if corpus.total == 0:
            raise ValueError("X has no counts: every row is empty")
        model.__dict__.pop("feature_names_in_", None)
        model.n_features_in_ = corpus.shape[1]
    elif corpus.shape[1] != model.n_features_in_:
        raise ValueError(f"X has {corpus.shape[1]} features, but DPMixture is expecting "
                         f"{model.n_features_in_} features as input")
    return corpus


@restore_on_error
def _start_matrix(model, X, X_heldout):
    """Validate; start a new chain, resume an interrupted fit or continue a finished one
    (``warm_start``). Returns (X, heldout, params, executor)."""
    params = model._check_params()
    plan = fit_plan(model, params.warm_start, "_z")
    resume, extend = plan == "resume", plan == "continue"
    X = _read_matrix(model, X, reset=not (resume or extend))
    entries = None if model.sampler != "auto" else int(   # gathered from workers if sharded
        X.nnz if sp.issparse(X) else np.sum(X.row_entries()))
    params = model._check_params(X.shape[0], continuing=resume or extend, n_entries=entries)
    executor = LocalExecutor() if model.client is None else _dask_executor(model, X, params)
    heldout = None if X_heldout is None else check_counts(X_heldout)
    if heldout is not None and heldout.shape[1] != X.shape[1]:
        raise ValueError(f"X_heldout has {heldout.shape[1]} features, X has {X.shape[1]}")
    sharded = isinstance(X, distributed.ShardedCorpus)
    fingerprint = {"X": X.fingerprint if sharded else array_digest(X.indptr, X.indices, X.data),
                   "X_heldout": None if heldout is None else array_digest(
                       heldout.indptr, heldout.indices, heldout.data),
                   **result_params(model)}
    if sp.issparse(X):
        X = kernel_layout(X)                # after the fingerprint, which reads X as given
    if resume:
        check_unchanged(model._fingerprint, fingerprint, keys=list(fingerprint))
    elif extend:
        check_unchanged(model._fingerprint, fingerprint, keys=["X"],
                        what="continues the chain, which needs the same rows")
    if not resume:
        if not extend:
            start, seed = perf_counter(), seed_sequence(model.random_state)
            new_chain(model, params, seed)
            state, model._z = init.matrix_start(X, read_state(model), params, seed, executor)
            write_state(model, state)
            model.training_seconds_ = perf_counter() - start
        else:
            model.training_seconds_ = 0.0
        model.timings_ = new_timings(model.training_seconds_)
        model.total_samples_ = X.shape[0]
        model._end_iter = model.n_iter_ + params.max_iter
        model._monitor = new_monitor(params, heldout,
                                     lambda: _monitor_rows(X, model.random_state_, executor))
    model.stop_reason_ = None
    model._fingerprint, model.interrupted_ = fingerprint, True
    return X, heldout, params, executor


def _dask_executor(model, X, params):
    """The ``DaskExecutor`` of the model's client on X (a ``ShardedCorpus``, or a matrix cut
    into shards on its workers); ValueError for the exact sampler."""
    if params.sampler == "gibbs":
        chose = (f" (sampler='auto' chose it for {X.shape[0]} rows, at most "
                 f"AUTO_GIBBS_ROWS = {defaults.AUTO_GIBBS_ROWS}, and at most "
                 f"AUTO_GIBBS_ENTRIES = {defaults.AUTO_GIBBS_ENTRIES} stored counts)"
                 if model.sampler == "auto" else "")
        raise ValueError(
            f"the exact sampler 'gibbs'{chose} does not run on a Dask client: its split-merge "
            "moves change whole clusters at once, reading every row of the clusters they "
            "touch, rows that would be scattered across the workers; with a client use "
            "sampler='scir' (or 'sgrld'), whose rows are allocated one at a time")
    if not isinstance(X, distributed.ShardedCorpus):
        X = distributed.ShardedCorpus.scatter(model.client, X)
    return distributed.DaskExecutor(model.client, X)


def fit_stream(model, corpus, X_heldout):
    """``fit`` on a streamed bag-of-words corpus: with the sampler "auto" or "gibbs", one of
    at most ``STREAM_IN_MEMORY_ROWS`` rows and ``STREAM_IN_MEMORY_ENTRIES`` stored counts is
    read into memory and fitted as a count matrix (``fit_matrix``); otherwise SCIR or SGRLD on
    minibatches drawn through a seeded shuffle buffer, rows new to the chain each time, a
    pilot on the first minibatches of a pass."""
    if model.client is not None:
        raise TypeError("with a client, fit takes a count matrix (cut into shards held by "
                        "the workers) or CorpusShards (files the workers read): a streamed "
                        "corpus's rows are read by this process; fit it without a client")
    params = model._check_params()
    if params.warm_start:
        raise ValueError("warm_start does not apply to a streamed corpus: its rows keep no "
                         "allocations to resume from")
    if corpus_features(corpus) is None:
        raise ValueError("a streamed corpus must declare its number of columns as "
                         "n_features (simplexsg.datasets.UCIBowCorpus and LDACCorpus do); "
                         "a list of documents or a count matrix is read into memory")
    stream = as_corpus(corpus)
    if model.sampler in ("auto", "gibbs"):
        X = init.whole_stream(stream, defaults.STREAM_IN_MEMORY_ROWS,
                              defaults.STREAM_IN_MEMORY_ENTRIES, params.batch_size)
        if X is not None:
            fit_matrix(model, X, X_heldout)
            return
    if params.sampler == "gibbs":
        raise ValueError(
            f"sampler='gibbs' sweeps every row each iteration: a streamed corpus of more than "
            f"{defaults.STREAM_IN_MEMORY_ROWS} rows or {defaults.STREAM_IN_MEMORY_ENTRIES} "
            "stored counts takes 'scir', 'sgrld' or 'auto' (SCIR); smaller ones are read into "
            "memory")
    saved = dict(model.__dict__)
    heldout = _start_stream(model, stream, X_heldout, params)
    with undone_if_untrained(model, saved):
        n_rows = model.total_samples_
        batch = min(params.batch_size, n_rows)
        buffer = (SHUFFLE_BATCHES * batch if params.shuffle_buffer is None
                  else params.shuffle_buffer)
        trainer = Trainer(model, params, LocalExecutor(), n_rows, heldout=heldout,
                          check_every=defaults.check_every(model.sampler_, n_rows, batch))
        trainer.run(stream_minibatches(stream, batch, buffer, model.random_state_),
                    model._end_iter)


@restore_on_error
def _start_stream(model, stream, X_heldout, params):
    """Validate a streamed fit's held-out rows and start its chain (``init.stream_start``) and
    its convergence check (on the held-out rows, else on the training rows ``stream_start``
    gives). Returns the held-out rows (or None)."""
    model.__dict__.pop("_z", None)             # no allocations are kept
    model.n_features_in_ = stream.n_features
    heldout = None if X_heldout is None else check_counts(X_heldout)
    if heldout is not None and heldout.shape[1] != stream.n_features:
        raise ValueError(f"X_heldout has {heldout.shape[1]} features, the corpus "
                         f"{stream.n_features}")
    start, seed = perf_counter(), seed_sequence(model.random_state)
    new_chain(model, params, seed)
    state, X_monitor, model.total_samples_ = init.stream_start(stream, read_state(model),
                                                               params, seed)
    write_state(model, state)
    model.training_seconds_ = perf_counter() - start
    model.timings_ = new_timings(model.training_seconds_)
    model._end_iter = params.max_iter
    model._monitor = new_monitor(params, heldout, lambda: X_monitor)
    model.stop_reason_, model.interrupted_ = None, True
    return heldout


def partial_fit(model, X, params, total):
    """One iteration on the CSR rows X, new to the chain (a new one of ``total`` rows when the
    model has none); the caller restores the model if it raises."""
    if not hasattr(model, "theta_"):
        new_chain(model, params, seed_sequence(model.random_state))
        model.total_samples_, model.stop_reason_ = total, None
    model.interrupted_ = False          # the chain goes on from here: nothing to resume
    Trainer(model, params, LocalExecutor(), model.total_samples_, fit=False).run(
        [(None, X)], model.n_iter_ + 1)
