"""Dirichlet-process mixture of multinomials by a slice sampler: minibatched with SCIR or SGRLD
(Baker, Fearnhead, Fox & Nemeth 2018, section 4.2), or exact Gibbs on all rows (Kalli, Griffin &
Walker 2011).

Model: ``x_i | z_i ~ Multinomial(n_i, phi_{z_i})``, ``phi_j ~ Dirichlet(base_concentration)``,
stick-breaking weights ``w_j = v_j prod_{l<j} (1 - v_l)`` with ``v_j ~ Beta(1, alpha)`` and
``alpha ~ Gamma(a, b)`` (shape, rate).

Representation: ``phi_j`` is the normalised row j of positive gamma variables ``theta_`` (J, d),
and ``v_j = g_j0 / (g_j0 + g_j1)`` for a pair of gamma variables ``sticks_`` (J, 2), so that both
are simplex parameters the SCIR/SGRLD samplers of ``simplexsg.simplex`` move. Stick weights are
kept in logs, ``log v = log g0 - log(g0 + g1)``, ``log(1 - v) = log g1 - log(g0 + g1)``: v is never
rounded to 0 or 1, and no ``log(0)`` arises.

One iteration on a set S of rows (a minibatch; every row for ``sampler="gibbs"``):

1. slices ``u_i ~ U(0, w_{z_i})`` for i in S;
2. new sticks (from the prior given alpha) and components (from the base measure) while the
   leftover mass ``prod_j (1 - v_j)`` exceeds ``min_S u_i``;
3. allocations ``p(z_i = j) ∝ 1(w_j >= u_i) prod_c phi_jc^x_ic`` (Cython kernel, ``_ext/_dp.pyx``);
4. sticks and components after the last occupied one are dropped; components left without rows
   are redrawn from the base measure;
5. sticks: ``(g_j0, g_j1)`` targets ``Gamma(1 + m_j) x Gamma(alpha + M_j)``, i.e.
   ``v_j ~ Beta(1 + m_j, alpha + M_j)`` with ``m_j`` rows in j and ``M_j`` rows after j;
   components: ``theta_j`` targets ``Gamma(base + sum_{i in j} x_i)``; both with the counts of S
   scaled by N/|S|, one SCIR/SGRLD step (exact draws, an infinitely long SCIR step, for "gibbs");
6. ``alpha ~ Gamma(a + J, b - sum_{j<J} log(1 - v_j))``, its conditional given the J sticks.

For "gibbs", split-merge proposals (``split_merge.py``) follow step 3: each changes a whole
component at once and is exact, so that the number of clusters changes in a few iterations
rather than by one row at a time. A proposal costs the rows of its blocks, about 2 / J of a
row's cost in step 3 (J components), so ``split_merge="auto"`` makes proposals until their
blocks held ``SPLIT_MERGE_WORK`` (0.25) x n_rows x J rows (at least ``MIN_SPLIT_MERGE``, 10):
about half as much work as the sweep, many proposals for many small clusters. On 10^5 rows of
100 clusters it took the held-out ARI after 30 s from 0.95 (10 proposals per sweep) to 0.995.

With a Dask ``client`` (``distributed.py``), step 3 and the component counts of step 5 run on
the workers holding the rows; every draw stays here. The counts are summed unscaled (integers,
exact in any order) and scaled after, so the fit equals the in-process one bit for bit.

A new chain starts (``init="pilot"``) from a short exact chain with split-merge moves on a
random subset of the rows, whose components, sticks and alpha start the full chain: a
one-row-at-a-time sampler started from 20 components merges true clusters and keeps them merged
(SCIR has no move that splits), while the pilot's clusters are found on few rows at little cost.

This is the order of the SCIR paper's DP mixture experiment with the bugs of its authors'
code fixed: the counts that
move the sticks and components are those of the rows just allocated, not of a fresh minibatch
with stale allocations; emptied components are redrawn from the base measure, not reused; SGRLD
drives the second stick coordinate with ``1 - v``; v stays strictly inside (0, 1).
"""
import contextlib
import copy
import itertools
import numbers
import time

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, logsumexp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._estimator import (array_digest, first_partial_fit_total, restore_on_error,
                          write_checkpoint)
from .._ext._dp import slice_allocate
from .._optional import tqdm
from .._random import seed_sequence, substream
from .._validation import (check_checkpoint, check_int, check_n_jobs, check_positive_scalar,
                           check_tol)
from ..corpus import as_corpus, bow_to_csr, check_counts, corpus_features, is_bow_corpus
from ..schedules import as_schedule
from ..simplex import SCIR, SGRLD, scir_transition, to_simplex
from ..stopping import Plateau
from .split_merge import SplitMerge

#: Step sizes per sampler, components and sticks (h is the diffusion time of a step, as in
#: ``simplexsg.simplex``): the SCIR paper's tuned values for msweb.
SAMPLER_DEFAULTS = {
    "scir": dict(cls=SCIR, step_size=0.1, stick_step_size=0.1),
    "sgrld": dict(cls=SGRLD, step_size=1e-3, stick_step_size=5e-3),
    "gibbs": dict(cls=None, step_size=None, stick_step_size=None),
}

#: Iterations of ``max_iter=None`` (SCIR/SGRLD, the exact sampler); with ``tol``, this many
#: times as many at most, the convergence check deciding when to stop.
_MAX_ITER, _MAX_ITER_GIBBS, _TOL_ITER_FACTOR = 1000, 200, 5
#: ``sampler="auto"`` runs the exact sampler on data sets of at most this many rows.
AUTO_GIBBS_ROWS = 1_000_000
#: Training rows the convergence check scores when no ``X_heldout`` is given.
_MONITOR_ROWS = 1000
#: Iterations and split-merge proposals per iteration of the pilot chain of ``init="pilot"``
#: (no more proposals than pilot rows: on a handful of rows 50 would cost a second for nothing).
_PILOT_ITER, _PILOT_SPLIT_MERGE = 100, 50
#: ``split_merge="auto"``: at least MIN_SPLIT_MERGE proposals per iteration, and more until
#: their blocks held SPLIT_MERGE_WORK x rows x occupied components rows (module docstring).
MIN_SPLIT_MERGE, SPLIT_MERGE_WORK = 10, 0.25
#: Rows and stored counts of the pilot chain at most (``init_rows=None``).
_PILOT_ROWS, _PILOT_ENTRIES = 5000, 100_000
#: A streamed corpus's shuffle buffer in minibatches (``shuffle_buffer=None``).
_SHUFFLE_BATCHES = 4
#: Sticks drawn at a time when the leftover mass must shrink below the smallest slice.
_NEW_STICKS = 8
#: Rows new to the chain (``partial_fit``) are allocated ∝ w_j Mult(x | phi_j) after the sticks
#: are extended until the leftover mass is below this; the rest of the mass is ignored.
_LEFTOVER_TOLERANCE = 1e-6

# Namespaces of the random streams derived from the estimator's SeedSequence.
_INIT, _ORDER, _STEP, _MONITOR = range(4)
#: Parameters a resumed fit may change: they change neither the chain nor its length.
_RESUMABLE_PARAMS = {"warm_start", "checkpoint_every", "checkpoint_path", "n_jobs", "verbose",
                     "random_state", "max_time", "client"}


def _check_split_merge(value):
    """"auto" or an int >= 0 (True: "auto", False: 0), else ValueError."""
    if isinstance(value, (bool, np.bool_)):
        return "auto" if value else 0
    if isinstance(value, str) and value == "auto":
        return value
    if not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f'split_merge must be "auto", True, False or an int >= 0, '
                         f'got {value!r}')
    return int(value)


def _row_sums(X, values):
    """Sum of ``values`` (one per stored entry of CSR X) over each row's entries."""
    return np.bincount(np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)), values,
                       minlength=X.shape[0])


def log_multinomial_coefficient(X):
    """log(n_i! / prod_c x_ic!) per row (n_rows,) of CSR counts X."""
    return gammaln(np.asarray(X.sum(axis=1)).ravel() + 1.0) - _row_sums(X, gammaln(X.data + 1.0))


def allocate_rows(X, log_phi, log_w, log_slice, uniforms, weighted, n_jobs):
    """Step 3 of the module docstring on the CSR rows X (n, d): components z (n,) drawn by the
    kernel ``slice_allocate`` from ``log_phi`` (J, d), ``log_w`` (J,), ``log_slice`` (n,) and
    ``uniforms`` (n,); ``weighted``: rows new to the chain (``_allocate``)."""
    z = np.empty(X.shape[0], dtype=np.int64)
    missing = slice_allocate(X.indptr.astype(np.int64), X.indices.astype(np.int64),
                             X.data.astype(np.float64), np.ascontiguousarray(log_phi), log_w,
                             log_slice, uniforms, z, weighted, n_jobs)
    if missing:  # cannot happen: w_z >= u_i always holds for the row's own component
        raise RuntimeError(f"{missing} rows found no component above their slice")
    return z


def component_counts(X, z, n_components):
    """Sparse (n_components, d) sums of the CSR count rows X (n, d) by component z (n,).

    Integer-valued float64, exact: the sum over any split of the rows is the same array, so the
    shares of a Dask fit add up to the in-process counts bit for bit."""
    indicator = sp.csr_matrix((np.ones(z.size), (z, np.arange(z.size))),
                              shape=(n_components, z.size))
    return indicator @ X


class LocalExecutor:
    """Steps 3 and 5's counts in this process; ``simplexsg.dpmixture.distributed.DaskExecutor``
    has the same methods."""

    @staticmethod
    def take(X, rows):
        """The rows ``rows`` (sorted; None: all) of X as ``allocate`` and ``counts`` read them."""
        return X if rows is None else X[rows]

    @staticmethod
    def allocate(X_rows, log_phi, log_w, log_slice, uniforms, weighted, n_jobs):
        """``allocate_rows`` of ``X_rows``."""
        return allocate_rows(X_rows, log_phi, log_w, log_slice, uniforms, weighted, n_jobs)

    @staticmethod
    def counts(X_rows, z, n_components):
        """Dense ``component_counts`` of ``X_rows`` by their components z."""
        return component_counts(X_rows, z, n_components).toarray()


class DPMixture(ClusterMixin, BaseEstimator):
    """Dirichlet-process mixture of multinomials (rows = instances, columns = categories).

    Parameters
    ----------
    sampler : {"auto", "scir", "sgrld", "gibbs"}, default "auto"
        "scir"/"sgrld": minibatched slice sampler, sticks and components moved by one SCIR/SGRLD
        step per iteration. "gibbs": the exact slice sampler on every row, with split-merge
        moves. "auto": "gibbs" for at most ``AUTO_GIBBS_ROWS`` (10^6) rows in memory, else
        "scir" (a streamed corpus and ``partial_fit``: "scir"); ``sampler_`` says which. Reason:
        at equal time the exact sampler scored better than SCIR (once tied, within 0.03%) on
        every data set of ``benchmarks/dp_study.py`` (up to 10^6 rows); above, a sweep takes
        seconds, and SCIR's step does not grow with the rows.
    base_concentration : float, default 0.5
        Symmetric Dirichlet parameter of the base measure (the components' prior).
    alpha_prior : (float, float), default (1.0, 1.0)
        Shape and rate of the Gamma prior of the DP concentration alpha.
    initial_components : int, default 20
        Components at the start of the chain (``init="random"``) or of the pilot chain; rows
        are allocated uniformly among them.
    init : {"pilot", "random"}, default "pilot"
        How a new chain starts. "pilot": the exact sampler with split-merge moves
        (``_PILOT_ITER`` (100) iterations, ``_PILOT_SPLIT_MERGE`` (50) proposals each, at most
        one per row) on ``init_rows`` random rows (all rows if fewer) finds the clusters; its
        components, sticks and alpha start the chain, and every row is allocated to them
        ``∝ w_j Mult(x | phi_j)``; for "scir", when the pilot saw a subset and found fewer than
        ``initial_components`` clusters, each is first copied (independent draws given its
        rows, equal shares of its weight) up to that many components, which the chain empties
        or pulls apart (``_over_provision``). "random": ``initial_components`` components from
        the base measure, rows allocated uniformly. Either way the chain targets the same
        posterior; the pilot saves the iterations a one-row-at-a-time sampler needs to create
        or split components.
    init_rows : int or None, default None
        Rows of the pilot chain; None: random rows up to ``_PILOT_ROWS`` (5000) rows and
        ``_PILOT_ENTRIES`` (100,000) stored counts, so that the pilot's cost is bounded
        whatever the row length (news articles: 560 rows; msweb: 5000).
    client : dask.distributed.Client or None, default None
        Allocate each minibatch's rows (``sampler="scir"``/``"sgrld"``) on the workers of a Dask
        cluster (``pip install simplexsg[dask]``; ``simplexsg.dpmixture.distributed``): ``fit``
        cuts X into row shards held by the workers, and each iteration sends a worker the
        ``log phi`` columns of its share's features, its rows' slices and uniforms, and gets
        back their labels and summed component-feature counts. The fit equals the one without
        a client bit for bit, for any number of workers; a worker lost mid-fit changes nothing.
        Refused: ``sampler="gibbs"`` (and "auto" when it resolves to it: split-merge moves act
        on whole clusters across all rows) and a streamed corpus. ``partial_fit``,
        ``predict``, ``predict_proba`` and ``score`` run in this process. A pickled model
        keeps no client.
    shuffle_buffer : int or None, default None
        A streamed corpus only: documents held in the seeded shuffle buffer from which each
        minibatch is drawn uniformly (``simplexsg.corpus.BowStream.minibatches``), so that a
        file sorted by cluster still gives minibatches close to random subsets; None:
        ``_SHUFFLE_BATCHES`` (4) minibatches; 0: file order.
    batch_size : int, default 1000
        Rows per iteration (S), visited in passes of a fresh permutation; counts are scaled by
        N / |S|. Ignored by "gibbs".
    step_size, stick_step_size : float or schedule, default None (``SAMPLER_DEFAULTS``)
        Diffusion time h of the components' and the sticks' steps (``simplexsg.simplex``);
        ``stick_step_size`` None is the sampler default. Ignored by "gibbs".
    max_iter : int, default None
        Iterations of ``fit``, at most; None: ``_MAX_ITER`` (1000), or ``_MAX_ITER_GIBBS`` (200)
        sweeps of "gibbs", ``max_time`` or not; with ``tol``, ``_TOL_ITER_FACTOR`` (5) times
        that, the convergence check deciding when to stop within it.
    max_time : float, default None
        Training budget in seconds, a cap only: it never makes a fit longer than ``max_iter``
        (to train for the whole budget, also give a large ``max_iter``). The pilot of ``init``
        and, for a streamed corpus, reading it count; evaluations do not. ``fit`` stops after
        the first iteration that reaches it, so it overruns by less than one iteration.
    tol : float in [0, 1) or None, default None
        Convergence check (None: none): after each pass over the rows (each iteration of
        "gibbs"), ``score`` of the monitor rows, ``X_heldout`` when given, else a seeded sample
        of ``_MONITOR_ROWS`` (1000) training rows; ``fit`` stops once ``n_iter_no_change``
        successive scores fail to improve the best one before them by the fraction ``tol`` of
        its magnitude (``simplexsg.stopping.Plateau`` on minus the score). The state is one
        posterior sample, so the score fluctuates by the chain's own spread: ``tol`` below that
        spread (1e-3 is about it on msweb) waits for ``n_iter_no_change`` fluctuations.
    n_iter_no_change : int, default 3
        Scores without progress before the convergence check stops ``fit``.
    total_samples : int, default None
        N for ``partial_fit``'s scaling N / batch: after ``fit``, its N; on a first call
        without it, scikit-learn's default of 10^6 rows, with a warning.
    warm_start : bool, default False
        When the last ``fit`` was interrupted (``interrupted_``: Ctrl-C, an error, or a model
        loaded from a checkpoint), ``fit`` on the same data and parameters resumes it, equal
        to the uninterrupted fit bit for bit; after a finished fit, ``fit`` on the same rows
        continues the chain for another ``max_iter`` iterations. False: a new chain.
    checkpoint_every : int or None, default None
        Every so many iterations of ``fit``, write the model to ``checkpoint_path``
        (``joblib``, atomically); ``joblib.load`` gives an interrupted model that
        ``.set_params(warm_start=True).fit(X)`` resumes.
    checkpoint_path : str or path-like, default None
    n_jobs : int or None, default 1
        Threads of the allocation kernel and the SCIR draws; results do not depend on it.
    random_state : None, int, or numpy SeedSequence, Generator or RandomState
    verbose : int, default 0
        1: a progress bar (needs tqdm); 2: also a line per evaluation.
    evaluate_every : int, default 0
        Iterations between the entries of ``history_`` (0: never).
    split_merge : "auto", int or bool, default "auto"
        Split-merge proposals per iteration of the exact sampler (``split_merge.SplitMerge``;
        each exact), after the rows' allocations; 0 or False: none; "auto" or True: at least
        ``MIN_SPLIT_MERGE`` (10), and more until their blocks held ``SPLIT_MERGE_WORK`` (0.25)
        x rows x occupied components rows, about half a sweep's work (module docstring).
        Ignored by "scir" and "sgrld".

    Attributes
    ----------
    sampler_ : str, the sampler of the chain ("auto" resolved).
    n_components_ : int, occupied components (with at least one row of ``labels_``).
    weights_ : (n_components_,) their stick weights, renormalised to sum to 1.
    components_ : (n_components_, n_features) their category probabilities, rows sum to 1.
    labels_ : (n_rows,) int, the rows' components (indices into ``components_``): the training
        rows' for ``fit`` on a count matrix, the last minibatch's for a streamed corpus and
        ``partial_fit``.
    alpha_ : float, current DP concentration.
    base_concentration_ : float, the symmetric Dirichlet parameter of the base measure the
        chain was started with (``base_concentration``), which ``score_samples`` uses.
    theta_, sticks_ : (J, d) and (J, 2) gamma variables of the represented components, occupied
        or not (the sampler state).
    n_iter_ : int, iterations of the chain so far (minibatches; sweeps of "gibbs"), summed
        over the ``fit`` calls that continue it and the ``partial_fit`` calls; the pilot's
        are not counted.
    total_samples_ : int, N, the rows the minibatch counts are scaled to (N / |S|): those of
        ``fit``'s X or streamed corpus, or ``partial_fit``'s ``total_samples`` (first call).
    interrupted_ : bool, True while a fit is unfinished (after an exception during its
        iterations, in a checkpoint): the state is that after the last completed iteration.
    training_seconds_ : float, seconds the last ``fit`` trained (its pilot, its iterations and
        reading a streamed corpus; evaluations excluded), which ``max_time`` caps; a resumed
        fit adds to the interrupted one's, a continued chain (``warm_start``) starts at 0.
    stop_reason_ : str, why ``fit`` stopped: "max_iter", "max_time", "converged", or
        "interrupted" (an exception during its iterations, Ctrl-C included, after at least one
        completed iteration; before any, the model is left as it was); None in a checkpoint
        (a fit still running) and after ``partial_fit`` alone.
    history_ : list of dicts (iteration, seconds, alpha, n_components, score): every
        ``evaluate_every`` iterations; ``score`` is ``score(X_heldout)`` (None without it);
        seconds count training only.
    random_state_ : numpy SeedSequence, the seed every draw of the chain derives from (from
        ``random_state``); a continued or resumed fit keeps it.
    n_features_in_ : int, d, the number of columns; ``feature_names_in_`` : (d,) the column
        names of a pandas data frame X (scikit-learn's convention), absent otherwise.

    All of these describe the current state of the chain, one posterior sample: averaging over
    iterations would mix up the component labels.
    """

    def __init__(self, sampler="auto", *, base_concentration=0.5, alpha_prior=(1.0, 1.0),
                 initial_components=20, batch_size=1000, step_size=None, stick_step_size=None,
                 max_iter=None, max_time=None, tol=None, n_iter_no_change=3, total_samples=None,
                 warm_start=False, checkpoint_every=None, checkpoint_path=None, n_jobs=1,
                 random_state=None, verbose=0, evaluate_every=0, split_merge="auto", init="pilot",
                 init_rows=None, shuffle_buffer=None, client=None):
        self.sampler = sampler
        self.base_concentration = base_concentration
        self.alpha_prior = alpha_prior
        self.initial_components = initial_components
        self.batch_size = batch_size
        self.step_size = step_size
        self.stick_step_size = stick_step_size
        self.max_iter = max_iter
        self.max_time = max_time
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.total_samples = total_samples
        self.warm_start = warm_start
        self.checkpoint_every = checkpoint_every
        self.checkpoint_path = checkpoint_path
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.evaluate_every = evaluate_every
        self.split_merge = split_merge
        self.init = init
        self.init_rows = init_rows
        self.shuffle_buffer = shuffle_buffer
        self.client = client

    # ---------------------------------------------------------------- parameters
    def _check_params(self, n_rows=None, continuing=False):
        """Validate the constructor parameters; return the resolved ones as a dict, with the
        sampler of "auto" resolved for a data set of ``n_rows`` rows (None: a stream of
        minibatches, ``partial_fit``), or the chain's own (``sampler_``) when ``continuing``."""
        if not isinstance(self.sampler, str) or self.sampler not in ("auto", *SAMPLER_DEFAULTS):
            raise ValueError(f"sampler must be one of {['auto', *sorted(SAMPLER_DEFAULTS)]}, "
                             f"got {self.sampler!r}")
        sampler = self.sampler
        if sampler == "auto":
            sampler = (getattr(self, "sampler_", None) if continuing else None) or (
                "gibbs" if n_rows is not None and n_rows <= AUTO_GIBBS_ROWS else "scir")
        defaults = SAMPLER_DEFAULTS[sampler]
        try:
            a, b = self.alpha_prior
        except (TypeError, ValueError):
            raise ValueError("alpha_prior must be a pair (shape, rate), "
                             f"got {self.alpha_prior!r}") from None
        params = dict(
            base=check_positive_scalar("base_concentration", self.base_concentration),
            alpha_shape=check_positive_scalar("alpha_prior shape", a),
            alpha_rate=check_positive_scalar("alpha_prior rate", b),
            initial_components=check_int("initial_components", self.initial_components, 1),
            batch_size=check_int("batch_size", self.batch_size, 1),
            max_iter=(None if self.max_iter is None else check_int("max_iter", self.max_iter, 1)),
            max_time=(None if self.max_time is None
                      else check_positive_scalar("max_time", self.max_time)),
            tol=check_tol(self.tol),
            n_iter_no_change=check_int("n_iter_no_change", self.n_iter_no_change, 1),
            n_jobs=check_n_jobs(self.n_jobs),
            evaluate_every=check_int("evaluate_every", self.evaluate_every, 0),
            split_merge=_check_split_merge(self.split_merge),
            shuffle_buffer=(None if self.shuffle_buffer is None
                            else check_int("shuffle_buffer", self.shuffle_buffer, 0)),
            init_rows=None if self.init_rows is None else check_int("init_rows", self.init_rows, 1),
            total_samples=(None if self.total_samples is None
                           else check_int("total_samples", self.total_samples, 1)),
            checkpoint_every=check_checkpoint(self.checkpoint_every, self.checkpoint_path),
        )
        if self.init not in ("pilot", "random"):
            raise ValueError(f"init must be 'pilot' or 'random', got {self.init!r}")
        params["init"], params["sampler"] = self.init, sampler
        params["executor"] = LocalExecutor()
        if params["max_iter"] is None:
            params["max_iter"] = ((_MAX_ITER_GIBBS if sampler == "gibbs" else _MAX_ITER)
                                  * (_TOL_ITER_FACTOR if params["tol"] is not None else 1))
        if not isinstance(self.warm_start, (bool, np.bool_)):
            raise ValueError(f"warm_start must be True or False, got {self.warm_start!r}")
        params["warm_start"] = bool(self.warm_start)
        if defaults["cls"] is not None:
            step = defaults["step_size"] if self.step_size is None else self.step_size
            stick = (defaults["stick_step_size"] if self.stick_step_size is None
                     else self.stick_step_size)
            params["component_sampler"] = defaults["cls"](as_schedule(step, "step_size"),
                                                          n_jobs=params["n_jobs"])
            params["stick_sampler"] = defaults["cls"](as_schedule(stick, "stick_step_size"),
                                                      n_jobs=params["n_jobs"])
        return params

    def _read(self, X, reset):
        if not reset:
            check_is_fitted(self, "theta_")
        X = check_counts(validate_data(self, X, accept_sparse="csr", reset=reset))
        if reset and X.sum() == 0:
            raise ValueError("X has no counts: every row is empty")
        return sp.csr_matrix(X)

    # ---------------------------------------------------------------- fitting
    def fit(self, X, y=None, *, X_heldout=None):
        """Run ``max_iter`` iterations on the rows of X (n_rows, n_features) from a fresh state
        (with ``warm_start``: resume an interrupted fit, or continue the chain).

        ``X_heldout``: rows scored by ``score`` in ``history_`` every ``evaluate_every``
        iterations. Bad input raises before the model changes. An exception during the
        iterations (Ctrl-C included) keeps the state after the last completed one
        (``interrupted_`` True, ``stop_reason_`` "interrupted"), or, before any, the model as
        it was.

        A streamed corpus (a re-iterable of bag-of-words documents declaring ``n_features``,
        e.g. ``simplexsg.datasets.UCIBowCorpus``) is read in minibatches of ``batch_size``
        drawn through a seeded shuffle buffer (``shuffle_buffer``), never held in full: "auto"
        is SCIR there, the pilot runs on the first minibatches of a shuffled pass, each
        minibatch's rows are new to the chain (as in ``partial_fit``), and ``labels_`` are the
        last minibatch's. Such a fit cannot be resumed (``warm_start``).

        Parameters
        ----------
        X : scipy.sparse or array-like (n_rows, n_features), or a streamed corpus
            Non-negative integer counts, one row per observation.
        y : ignored
        X_heldout : counts (n_heldout, n_features), optional

        Returns
        -------
        self
        """
        if is_bow_corpus(X) and not isinstance(X, (list, tuple)):
            return self._fit_stream(X, X_heldout)
        if isinstance(X, (list, tuple)) and is_bow_corpus(X):
            X = bow_to_csr(X)
        saved = dict(self.__dict__)
        X, heldout, params = self._start_fit(X, X_heldout)
        first = self.n_iter_
        try:
            self._train(X, heldout, params)
        except BaseException:
            if self.n_iter_ == first:             # no iteration completed: nothing to keep
                self.__dict__.clear()
                self.__dict__.update(saved)
            else:
                self.stop_reason_ = "interrupted"
                self._summarise(self._z)
            raise
        self.interrupted_ = False
        self._summarise(self._z)
        return self

    def _fit_stream(self, corpus, X_heldout):
        """``fit`` on a streamed bag-of-words corpus (``simplexsg.corpus.BowStream``): SCIR or
        SGRLD on minibatches drawn through a seeded shuffle buffer, rows new to the chain each
        time (as ``partial_fit``), a pilot on the first minibatches of a pass."""
        if self.client is not None:
            raise TypeError("with a client, fit takes a count matrix (cut into shards held by "
                            "the workers): a streamed corpus's rows are read by this process; "
                            "fit it without a client")
        params = self._check_params()
        if params["sampler"] == "gibbs":
            raise ValueError("sampler='gibbs' sweeps every row each iteration: a streamed corpus "
                             "takes 'scir', 'sgrld' or 'auto' (SCIR)")
        if params["warm_start"]:
            raise ValueError("warm_start does not apply to a streamed corpus: its rows keep no "
                             "allocations to resume from")
        if corpus_features(corpus) is None:
            raise ValueError("a streamed corpus must declare its number of columns as "
                             "n_features (simplexsg.datasets.UCIBowCorpus and LDACCorpus do); "
                             "a list of documents or a count matrix is read into memory")
        stream = as_corpus(corpus)
        saved = dict(self.__dict__)
        heldout, pilot_rows = self._start_stream(stream, X_heldout, params)
        n_rows, batch = self.total_samples_, min(params["batch_size"], self.total_samples_)
        buffer = _SHUFFLE_BATCHES * batch if params["shuffle_buffer"] is None \
            else params["shuffle_buffer"]
        check_every = -(-n_rows // batch)
        monitor = ((heldout if heldout is not None else pilot_rows)
                   if self._plateau is not None else None)
        minibatches = itertools.chain.from_iterable(
            stream.minibatches(batch, buffer, np.random.default_rng(
                substream(self.random_state_, _ORDER, epoch))) for epoch in itertools.count())
        reason, z = "max_iter", None
        progress = self._progress(params["max_iter"])
        try:
            tick = time.perf_counter()             # reading the minibatch counts as training
            for _, X_rows in minibatches:
                t = self.n_iter_
                with self._iteration():
                    X_rows, rng = sp.csr_matrix(check_counts(X_rows)), self._step_rng(t)
                    z_rows = self._allocate(X_rows, None, params, rng)
                    self._move(X_rows, z_rows, n_rows / X_rows.shape[0], params, t, z_rows, rng)
                    self.training_seconds_ += time.perf_counter() - tick
                    self._record(params, heldout, self.training_seconds_, z_rows)
                z = z_rows
                if progress is not None:
                    progress.update(1)
                stop = self._stop_reason(params, monitor, check_every, z)
                if stop is not None or self.n_iter_ >= self._end_iter:
                    reason = stop or reason
                    break
                tick = time.perf_counter()
        except BaseException:
            if z is None:                   # no iteration completed: the model as it was
                self.__dict__.clear()
                self.__dict__.update(saved)
            else:
                self.stop_reason_ = "interrupted"
                self._summarise(z)
            raise
        finally:
            if progress is not None:
                progress.close()
        self.stop_reason_, self.interrupted_ = reason, False
        self._summarise(z)
        return self

    @restore_on_error
    def _start_stream(self, stream, X_heldout, params):
        """Validate a streamed fit's inputs and start its chain (the pilot on the first rows of
        a shuffled pass, up to the pilot's rows and counts). Returns the held-out rows (or None)
        and the first ``_MONITOR_ROWS`` pilot rows (the convergence check's without them)."""
        self.__dict__.pop("_z", None)             # no allocations are kept
        self.n_features_in_ = stream.n_features
        heldout = None if X_heldout is None else check_counts(X_heldout)
        if heldout is not None and heldout.shape[1] != stream.n_features:
            raise ValueError(f"X_heldout has {heldout.shape[1]} features, the corpus "
                             f"{stream.n_features}")
        self._init_state(params, seed_sequence(self.random_state))
        rng = np.random.default_rng(substream(self.random_state_, _INIT, 2))
        batch = min(params["batch_size"], _PILOT_ROWS)
        pilot, rows, entries, start = [], 0, 0, time.perf_counter()
        for _, X_rows in stream.minibatches(batch, _SHUFFLE_BATCHES * batch, rng):
            X_rows = sp.csr_matrix(check_counts(X_rows))
            pilot.append(X_rows)
            rows, entries = rows + X_rows.shape[0], entries + X_rows.nnz
            if rows >= (params["init_rows"] or _PILOT_ROWS) or (
                    params["init_rows"] is None and entries >= _PILOT_ENTRIES):
                break
        n_rows = stream.n_documents if stream.n_documents is not None else sum(
            1 for _ in stream.corpus)
        if not pilot or n_rows == 0:
            raise ValueError("the corpus has no documents")
        X_pilot = sp.vstack(pilot, format="csr")
        if X_pilot.sum() == 0:
            raise ValueError("the corpus's first documents have no counts")
        if params["init"] == "pilot":
            self._start_from_pilot(X_pilot, X_pilot.shape[0] < n_rows, params, rng)
        self.training_seconds_ = time.perf_counter() - start
        self.total_samples_, self._end_iter = n_rows, params["max_iter"]
        self._plateau = self._new_plateau(params)
        self.stop_reason_, self.interrupted_ = None, True
        return heldout, X_pilot[:_MONITOR_ROWS]

    @restore_on_error
    def _start_fit(self, X, X_heldout):
        """Validate; start a new chain, resume an interrupted fit or continue a finished one
        (``warm_start``). Returns (X, heldout, params)."""
        params = self._check_params()
        resume = params["warm_start"] and getattr(self, "interrupted_", False)
        extend = params["warm_start"] and hasattr(self, "_z") and not resume
        X = self._read(X, reset=not (resume or extend))
        params = self._check_params(X.shape[0], continuing=resume or extend)
        if self.client is not None:
            params["executor"] = self._dask_executor(X, params)
        heldout = None if X_heldout is None else check_counts(X_heldout)
        if heldout is not None and heldout.shape[1] != X.shape[1]:
            raise ValueError(f"X_heldout has {heldout.shape[1]} features, X has {X.shape[1]}")
        fingerprint = {"X": array_digest(X.indptr, X.indices, X.data),
                       "X_heldout": None if heldout is None else array_digest(
                           heldout.indptr, heldout.indices, heldout.data),
                       **{k: v for k, v in self.get_params().items()
                          if k not in _RESUMABLE_PARAMS}}
        if resume or extend:
            changed = [k for k in (fingerprint if resume else ["X"])
                       if fingerprint[k] != self._fingerprint.get(k)]
            if changed:
                what = ("resumes the interrupted fit, which needs the same data and parameters"
                        if resume else "continues the chain, which needs the same rows")
                raise ValueError(f"warm_start {what}: {', '.join(changed)} differ")
        if not resume:
            if not extend:
                start = time.perf_counter()
                self._init_state(params, seed_sequence(self.random_state))
                self._z = self._initial_allocations(X, params)
                self.training_seconds_ = time.perf_counter() - start
            else:
                self.training_seconds_ = 0.0
            self.total_samples_ = X.shape[0]
            self._end_iter = self.n_iter_ + params["max_iter"]
            self._plateau = self._new_plateau(params)
        self.stop_reason_ = None
        self._fingerprint, self.interrupted_ = fingerprint, True
        return X, heldout, params

    def _dask_executor(self, X, params):
        """The ``DaskExecutor`` of ``client``, X (n_rows, d) cut into shards on its workers;
        ValueError for the exact sampler."""
        if params["sampler"] == "gibbs":
            chose = (f" (sampler='auto' chose it for {X.shape[0]} rows, at most "
                     f"AUTO_GIBBS_ROWS = {AUTO_GIBBS_ROWS})" if self.sampler == "auto" else "")
            raise ValueError(
                f"the exact sampler 'gibbs'{chose} does not run on a Dask client: its split-merge "
                "moves change whole clusters at once, reading every row of the clusters they "
                "touch, rows that would be scattered across the workers; with a client use "
                "sampler='scir' (or 'sgrld'), whose rows are allocated one at a time")
        from .distributed import DaskExecutor, ShardedCorpus
        return DaskExecutor(self.client, ShardedCorpus.scatter(self.client, X))

    def _train(self, X, heldout, params):
        """The iterations ``n_iter_ .. _end_iter - 1``, each undone if it raises."""
        n_rows = X.shape[0]
        batch = n_rows if self.sampler_ == "gibbs" else min(params["batch_size"], n_rows)
        split_merge = (SplitMerge(X, params["base"])
                       if self.sampler_ == "gibbs" and params["split_merge"] else None)
        monitor = self._monitor_rows(X, heldout) if self._plateau is not None else None
        check_every = -(-n_rows // batch)           # iterations per pass
        progress = self._progress(self._end_iter - self.n_iter_)
        reason, order = "max_iter", (None, None)   # (pass, its permutation), drawn once a pass
        try:
            for t in range(self.n_iter_, self._end_iter):
                start = time.perf_counter()
                epoch, offset = divmod(t * batch, n_rows)
                if batch < n_rows and order[0] != epoch:
                    order = (epoch, self._order(epoch, n_rows))
                rows = (np.sort(order[1][offset:offset + batch]) if batch < n_rows
                        else np.arange(n_rows))
                with self._iteration(rows):
                    X_rows, rng = params["executor"].take(X, rows), self._step_rng(t)
                    z_rows = self._allocate(X_rows, self._z[rows], params, rng)
                    if split_merge is not None:
                        self._split_merge(split_merge, z_rows, params, rng)
                    self._z[rows] = z_rows          # in place: the one array of this chain
                    self._move(X_rows, z_rows, n_rows / rows.size, params, t, self._z, rng)
                    self.training_seconds_ += time.perf_counter() - start
                    self._record(params, heldout, self.training_seconds_, self._z)
                if progress is not None:
                    progress.update(1)
                if params["checkpoint_every"] and self.n_iter_ % params["checkpoint_every"] == 0:
                    self._summarise(self._z)
                    write_checkpoint(self, self.checkpoint_path)
                stop = self._stop_reason(params, monitor, check_every, self._z)
                if stop is not None:
                    reason = stop
                    break
            self.stop_reason_ = reason
        finally:
            if progress is not None:
                progress.close()

    @contextlib.contextmanager
    def _iteration(self, rows=None):
        """Run one iteration of ``fit``; if it raises (Ctrl-C included), put the model back as
        it was before it: its attributes (rebound by the iteration, never written in place)
        and the allocations ``_z[rows]`` of a count matrix's rows (written in place)."""
        saved = dict(self.__dict__)
        z_before = None if rows is None else self._z[rows]
        try:
            yield
        except BaseException:
            if rows is not None:
                self._z[rows] = z_before
            self.__dict__.update(saved)
            raise

    @restore_on_error
    def partial_fit(self, X, y=None):
        """One iteration on the rows of X, a minibatch of a data set of ``total_samples`` rows.

        The rows are new to the chain, with no allocation to slice from: each is drawn
        ``∝ w_j Mult(x | phi_j)`` over the sticks, extended until the leftover mass is below
        ``_LEFTOVER_TOLERANCE`` (1e-6). No allocations are kept between calls, so
        ``n_components_`` and ``labels_`` refer to this minibatch, and components it leaves empty
        are dropped only past the last one it uses. A minibatch larger than the data set (its N,
        ``total_samples_``: fit's or the first call's) raises ValueError. A failed call leaves
        the model as it was.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_rows, n_features)
            Non-negative integer counts, one row per observation.
        y : ignored

        Returns
        -------
        self
        """
        first = not hasattr(self, "theta_")
        params = self._check_params(continuing=not first)
        X = self._read(X, reset=first)
        total = first_partial_fit_total(params["total_samples"], "rows") if first \
            else self.total_samples_
        if total < X.shape[0]:
            name = "total_samples" if first else "total_samples_ (the model's data-set size)"
            raise ValueError(f"{name} ({total}) is below the batch size ({X.shape[0]} rows): "
                             "the minibatch counts would be scaled by N / batch < 1")
        if first:
            self._init_state(params, seed_sequence(self.random_state))
            self.total_samples_, self.stop_reason_ = total, None
        t, rng = self.n_iter_, self._step_rng(self.n_iter_)
        self.interrupted_ = False          # the chain goes on from here: nothing to resume
        z_rows = self._allocate(X, None, params, rng)
        self._move(X, z_rows, self.total_samples_ / X.shape[0], params, t, z_rows, rng)
        self._summarise(z_rows)
        return self

    def _initial_allocations(self, X, params):
        """Allocations of every row at the start of a new chain (``init``)."""
        if params["init"] == "random":
            return np.random.default_rng(substream(self.random_state_, _INIT, 1)) \
                .integers(params["initial_components"], size=X.shape[0])
        rng = np.random.default_rng(substream(self.random_state_, _INIT, 2))
        order = rng.permutation(X.shape[0])
        if params["init_rows"] is None:        # up to _PILOT_ROWS rows and _PILOT_ENTRIES entries
            entries = np.cumsum(np.diff(X.indptr)[order])
            n = min(_PILOT_ROWS, max(1, int(np.searchsorted(entries, _PILOT_ENTRIES, "right"))))
        else:
            n = params["init_rows"]
        rows = np.sort(order[:n])
        self._start_from_pilot(X[rows], rows.size < X.shape[0], params, rng)
        return self._allocate(params["executor"].take(X, None), None, params, rng)

    def _start_from_pilot(self, X_pilot, subset, params, rng):
        """Components, sticks and alpha from the pilot chain on the rows ``X_pilot`` (``init``);
        ``subset``: they are a subset of the data (SCIR then over-provisions)."""
        pilot = DPMixture("gibbs", base_concentration=params["base"],
                          alpha_prior=(params["alpha_shape"], params["alpha_rate"]),
                          initial_components=params["initial_components"], init="random",
                          max_iter=_PILOT_ITER,
                          split_merge=min(_PILOT_SPLIT_MERGE, X_pilot.shape[0]),
                          n_jobs=params["n_jobs"],
                          random_state=substream(self.random_state_, _INIT, 3)).fit(X_pilot)
        self.theta_, self.sticks_, self.alpha_ = pilot.theta_, pilot.sticks_, pilot.alpha_
        copies = -(-params["initial_components"] // pilot.n_components_)
        if self.sampler_ == "scir" and copies > 1 and subset:
            self._over_provision(pilot, X_pilot, copies, params, rng)

    def _over_provision(self, pilot, X_pilot, copies, params, rng):
        """Start from ``copies`` copies of each of the pilot's clusters: each copy an
        independent draw of the cluster's components given its pilot rows, with an equal share
        of its weight. Rows then split among the copies at random, as in a random start, and
        the chain can empty copies or pull them apart; a stochastic-gradient chain cannot
        create clusters that the pilot's subset of the rows did not support (msweb: 4 clusters
        of >= 1% from a 5000-row pilot, 8 to 12 from a random start; 20 s of SCIR: -8.97 and
        -8.86, -8.87 with the copies). A pilot on every row needs no copies."""
        counts = component_counts(X_pilot, pilot.labels_, pilot.n_components_).toarray()
        shape = params["base"] + np.repeat(counts, copies, axis=0)
        self.theta_ = scir_transition(np.ones_like(shape), shape, np.inf, rng)
        weights = np.repeat(pilot.weights_ / copies, copies) * (1.0 - _LEFTOVER_TOLERANCE)
        before = 1.0 - np.concatenate([[0.0], np.cumsum(weights)[:-1]])
        v = weights / before
        self.sticks_ = np.column_stack([v, 1.0 - v]) * (1.0 + self.alpha_)

    def _init_state(self, params, seed):
        rng = np.random.default_rng(substream(seed, _INIT, 0))
        self.sampler_ = params["sampler"]
        K, d = params["initial_components"], self.n_features_in_
        self.random_state_ = seed
        self.base_concentration_ = params["base"]
        self.alpha_ = params["alpha_shape"] / params["alpha_rate"]
        self.theta_ = scir_transition(np.ones((K, d)), np.full((K, d), params["base"]), np.inf, rng)
        self.sticks_ = self._prior_sticks(K, rng)
        self.n_iter_ = 0
        self.history_ = []

    def _prior_sticks(self, n, rng):
        """``n`` stick pairs drawn from the prior: Gamma(1) x Gamma(alpha_)."""
        return scir_transition(np.ones((n, 2)), np.tile([1.0, self.alpha_], (n, 1)), np.inf, rng)

    def _order(self, epoch, n_rows):
        rng = np.random.default_rng(substream(self.random_state_, _ORDER, epoch))
        return rng.permutation(n_rows)

    @staticmethod
    def _log_weights(sticks):
        """log w_j (J,) of the stick pairs (J, 2), and the log leftover mass log prod (1 - v_j)."""
        log_sticks = np.log(sticks)
        log_total = np.logaddexp(log_sticks[:, 0], log_sticks[:, 1])
        log_v, log_1mv = log_sticks[:, 0] - log_total, log_sticks[:, 1] - log_total
        before = np.concatenate([[0.0], np.cumsum(log_1mv)])
        return log_v + before[:-1], before[-1]

    def _step_rng(self, t):
        """The generator of iteration t: every draw of an iteration comes from it."""
        return np.random.default_rng(substream(self.random_state_, _STEP, t))

    def _allocate(self, X, z, params, rng):
        """Steps 1-3 of the module docstring on rows X (as ``params["executor"].take`` names
        them) with current components z: returns the new components of the rows (sticks and
        components are extended as needed). ``z`` None: rows new to the chain, drawn
        ∝ w_j Mult(x | phi_j) (see ``partial_fit``). Every draw is made here, from ``rng``, in
        the same order whichever executor runs the kernel."""
        log_w, log_rest = self._log_weights(self.sticks_)
        if z is None:
            log_slice = np.full(X.shape[0], -np.inf)
            lowest = np.log(_LEFTOVER_TOLERANCE)
        else:
            log_slice = log_w[z] + np.log1p(-rng.random(z.size))    # u ~ U(0, w_z], log
            lowest = log_slice.min()
        while log_rest > lowest:
            self._extend(_NEW_STICKS, params, rng)
            log_w, log_rest = self._log_weights(self.sticks_)
        log_phi = np.log(to_simplex(self.theta_))
        return params["executor"].allocate(X, log_phi, log_w, log_slice, rng.random(X.shape[0]),
                                           z is None, params["n_jobs"])

    def _monitor_rows(self, X, heldout):
        """The rows the convergence check scores (``tol``)."""
        if heldout is not None:
            return heldout
        rng = np.random.default_rng(substream(self.random_state_, _MONITOR, 0))
        n = X.shape[0]
        return X[np.sort(rng.choice(n, _MONITOR_ROWS, replace=False))] if n > _MONITOR_ROWS else X

    @staticmethod
    def _new_plateau(params):
        """The convergence check's state for a new fit (None without ``tol``)."""
        if params["tol"] is None:
            return None
        return Plateau(params["tol"], params["n_iter_no_change"])

    def _stop_reason(self, params, monitor, check_every, z):
        """After an iteration: "max_time" when the budget is spent, "converged" on a plateau of
        the check (every ``check_every`` iterations; ``monitor``: its rows, None without
        ``tol``), else None. ``z``: the allocations the state's summary uses."""
        if params["max_time"] is not None and self.training_seconds_ >= params["max_time"]:
            return "max_time"
        if monitor is not None and self.n_iter_ % check_every == 0 \
                and self._converged(monitor, z):
            return "converged"
        return None

    def _converged(self, monitor, z):
        """Score the current state on the monitor rows; True on a plateau (``tol``)."""
        self._summarise(z)
        plateau = copy.copy(self._plateau)          # rebound: an interruption keeps the old one
        done = plateau.update(-self.score(monitor))
        self._plateau = plateau
        return done

    def _split_merge(self, move, z, params, rng):
        """``params["split_merge"]`` split-merge proposals on the allocations z of every row
        (``split_merge.SplitMerge``; in place; "auto": a budget in work), then as many
        represented sticks and components as the labels need (drawn from the prior: the exact
        sampler redraws them given z)."""
        if params["split_merge"] == "auto":
            occupied = np.count_nonzero(np.bincount(z))
            move.run(z, self.alpha_, rng, MIN_SPLIT_MERGE,
                     row_budget=SPLIT_MERGE_WORK * z.size * occupied)
        else:
            move.run(z, self.alpha_, rng, params["split_merge"])
        missing = int(z.max()) + 1 - self.sticks_.shape[0]
        if missing > 0:
            self._extend(missing, params, rng)

    def _extend(self, n, params, rng):
        """Append n sticks from the prior and n components from the base measure."""
        self.sticks_ = np.vstack([self.sticks_, self._prior_sticks(n, rng)])
        self.theta_ = np.vstack([self.theta_, scir_transition(
            np.ones((n, self.n_features_in_)), np.full((n, self.n_features_in_), params["base"]),
            np.inf, rng)])

    def _move(self, X, z, scale, params, t, z_all, rng):
        """Steps 4-6: truncate, redraw empty components, move sticks and components by the
        counts of rows X (allocations z) scaled by ``scale``, then alpha. ``z_all``: every row
        whose allocation the chain keeps (decides truncation and emptiness)."""
        J = int(z_all.max()) + 1
        occupancy = np.bincount(z_all, minlength=J)
        sticks, theta = self.sticks_[:J], self.theta_[:J]
        empty = np.flatnonzero(occupancy == 0)
        if empty.size and z_all is not z:   # fit: rows absent from S still count as members
            theta = theta.copy()
            theta[empty] = scir_transition(np.ones((empty.size, theta.shape[1])),
                                           np.full((empty.size, theta.shape[1]), params["base"]),
                                           np.inf, rng)
        members = np.bincount(z, minlength=J) * scale
        after = np.concatenate([np.cumsum(members[::-1])[::-1][1:], [0.0]])
        stick_counts = np.column_stack([members, after])
        stick_prior = np.tile([1.0, self.alpha_], (J, 1))
        counts = scale * params["executor"].counts(X, z, J)
        if self.sampler_ == "gibbs":
            self.sticks_ = scir_transition(sticks, stick_prior + stick_counts, np.inf, rng,
                                           params["n_jobs"])
            self.theta_ = scir_transition(theta, params["base"] + counts, np.inf, rng,
                                          params["n_jobs"])
        else:
            for name in ("stick_sampler", "component_sampler"):
                params[name].t = t
            try:
                sticks = params["stick_sampler"].step(sticks, stick_prior, stick_counts, rng)
            except ValueError as exc:          # e.g. a step too small for the counts
                raise ValueError(f"stick_step_size: {exc}") from None
            try:
                theta = params["component_sampler"].step(theta, params["base"], counts, rng)
            except ValueError as exc:
                raise ValueError(f"step_size: {exc}") from None
            self.sticks_, self.theta_ = sticks, theta
        log_sticks = np.log(self.sticks_)
        log_1mv = log_sticks[:, 1] - np.logaddexp(log_sticks[:, 0], log_sticks[:, 1])
        self.alpha_ = float(rng.gamma(params["alpha_shape"] + J,
                                      1.0 / (params["alpha_rate"] - log_1mv.sum())))
        if self.sampler_ != "gibbs":     # gibbs redraws whole sticks next time: v is its state
            self.sticks_ = self._redraw_stick_totals(self.sticks_, stick_counts, rng)
        self.n_iter_ = t + 1

    def _redraw_stick_totals(self, sticks, stick_counts, rng):
        """Each stick pair's total g0 + g1 redrawn given its proportion v and the new alpha_.

        The sticks are pairs of gamma variables whose target, given alpha, is
        Gamma(1 + m_j) x Gamma(alpha + M_j) for SCIR (total Gamma(1 + alpha + m_j + M_j),
        independent of v) and whose total SGRLD's expanded mean leaves at its prior,
        Gamma(1 + alpha). alpha | v integrates the totals out, so (alpha, totals) | v is one
        exact block update; keeping the totals drawn for the previous alpha biases alpha and
        the number of clusters (tests/test_dpmixture_exact.py)."""
        shape = 1.0 + self.alpha_ + (stick_counts.sum(axis=1) if self.sampler_ == "scir"
                                     else np.zeros(len(sticks)))
        proportions = sticks / sticks.sum(axis=1, keepdims=True)
        return np.maximum(proportions * rng.gamma(shape)[:, None], np.finfo(np.float64).tiny)

    def _summarise(self, z):
        """Fitted attributes of the occupied components, given the kept allocations z."""
        J = self.sticks_.shape[0]
        occupied = np.flatnonzero(np.bincount(z, minlength=J))
        log_w, _ = self._log_weights(self.sticks_)
        self._occupied = occupied
        self.n_components_ = occupied.size
        self.weights_ = np.exp(log_w[occupied] - logsumexp(log_w[occupied]))
        self.components_ = to_simplex(self.theta_[occupied])
        relabel = np.full(J, -1)
        relabel[occupied] = np.arange(occupied.size)
        self.labels_ = relabel[z]

    def _record(self, params, heldout, seconds, z):
        every = params["evaluate_every"]
        if not every or self.n_iter_ % every:
            return
        self._summarise(z)
        entry = dict(iteration=self.n_iter_, seconds=seconds, alpha=self.alpha_,
                     n_components=self.n_components_,
                     score=None if heldout is None else self.score(heldout))
        self.history_ = self.history_ + [entry]   # rebound: an undone iteration restores it
        if self.verbose >= 2:
            score = "" if entry["score"] is None else f", held-out score {entry['score']:.4f}"
            print(f"iteration {entry['iteration']}: {entry['seconds']:.1f} s, alpha "
                  f"{entry['alpha']:.3g}, {entry['n_components']} components{score}")

    def _progress(self, total):
        if not self.verbose:
            return None
        return tqdm()(total=total, desc=f"DP mixture ({self.sampler_})", unit="iter")

    # ---------------------------------------------------------------- inference
    def score_samples(self, X):
        """Log predictive density of each row (n_rows,) under the current state, with the
        multinomial coefficient: ``log [sum_j w_j Mult(x | phi_j) + w_rest DirMult(x | base)]``
        over the represented sticks j, the leftover mass ``w_rest`` scored by the base measure's
        Dirichlet-multinomial (the mixture of the unrepresented components). Runs in this
        process, with or without a ``client``.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_rows, n_features)
            Non-negative integer counts, one row per observation.

        Returns
        -------
        ndarray (n_rows,)
        """
        X = self._read(X, reset=False)
        log_w, log_rest = self._log_weights(self.sticks_)
        log_joint = np.asarray(X @ np.log(to_simplex(self.theta_)).T) + log_w
        base, d = self.base_concentration_, X.shape[1]
        totals = np.asarray(X.sum(axis=1)).ravel()
        log_base = (gammaln(d * base) - gammaln(d * base + totals)
                    + _row_sums(X, gammaln(base + X.data) - gammaln(base)))
        log_joint = np.column_stack([log_joint, log_rest + log_base])
        return logsumexp(log_joint, axis=1) + log_multinomial_coefficient(X)

    def score(self, X, y=None):
        """Mean log predictive density per row (``score_samples``, with the multinomial
        coefficient) under the current state; higher is better.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_rows, n_features)
            Non-negative integer counts, one row per observation.
        y : ignored

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))

    def predict_proba(self, X):
        """Probabilities of the occupied components, ``∝ weights_ * Mult(x | components_)``,
        computed in this process (with or without a ``client``).

        Parameters
        ----------
        X : scipy.sparse or array-like (n_rows, n_features)
            Non-negative integer counts, one row per observation.

        Returns
        -------
        ndarray (n_rows, n_components_), rows summing to 1
        """
        check_is_fitted(self, "components_")
        X = self._read(X, reset=False)
        log_joint = np.asarray(X @ np.log(self.components_).T) + np.log(self.weights_)
        return np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))

    def predict(self, X):
        """The most probable occupied component of each row.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_rows, n_features)
            Non-negative integer counts, one row per observation.

        Returns
        -------
        ndarray (n_rows,) of int, indices into ``components_``
        """
        return np.argmax(self.predict_proba(X), axis=1)

    def fit_predict(self, X, y=None, **kwargs):
        """``fit(X)``, then the training rows' ``labels_`` (their sampled components)."""
        return self.fit(X, **kwargs).labels_

    def __getstate__(self):
        """Pickles (and checkpoints) keep no client: it is a live connection."""
        return {**super().__getstate__(), "client": None}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        tags.input_tags.categorical = True  # integer counts
        return tags
