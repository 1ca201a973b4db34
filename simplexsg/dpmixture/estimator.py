"""The DP mixture estimator, scikit-learn's face of the model: parameters (checked by
``simplexsg.dpmixture.validation``, defaults from ``simplexsg.dpmixture.defaults``), ``fit`` /
``partial_fit`` (which run ``simplexsg.dpmixture.training``), fitted state, and inference
(``predict``, ``predict_proba``, ``score``, ``score_samples``)."""
import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._dask import CorpusShards
from .._fitting import CountModelMixin, first_partial_fit_total, restore_on_error
from .._validation import check_n_jobs
from ..corpus import bow_to_csr, check_counts, is_bow_corpus
from . import training
from .slice_sampler import log_predictive, row_blocks
from .validation import CONSTRAINTS, check_params


class DPMixture(CountModelMixin, ClusterMixin, BaseEstimator):
    """Dirichlet-process mixture of multinomials (rows = instances, columns = categories), fitted
    by a slice sampler: minibatched with SCIR or SGRLD (Baker, Fearnhead, Fox & Nemeth 2018), or
    exact Gibbs on all rows (Kalli, Griffin & Walker 2011); ``slice_sampler`` has the steps.

    Parameters
    ----------
    sampler : {"auto", "scir", "sgrld", "gibbs"}, default "auto"
        "scir"/"sgrld": minibatched slice sampler, sticks and components moved by one SCIR/SGRLD
        step per iteration. "gibbs": the exact slice sampler on every row, with split-merge
        moves and label shifts. "auto": "gibbs" for at most ``AUTO_GIBBS_ROWS`` (10^6) rows and
        ``AUTO_GIBBS_ENTRIES`` (10^8) stored counts in memory, else "scir"; "scir" on a
        streamed corpus (but one small enough to read into memory: ``fit``) and in
        ``partial_fit``; ``sampler_`` says which. A sweep of the exact sampler costs the
        stored counts; the crossover is measured on docs/benchmarks/dp.rst.
    base_concentration : float, default 0.5
        Symmetric Dirichlet parameter of the base measure (the components' prior), > 0: the
        pseudo-count each category adds to a cluster's profile. Smaller values give sharper
        profiles and more clusters, larger ones smoother profiles and fewer. 0.5 predicted
        held-out rows best of 0.05, 0.5 and 1.5 on most data sets measured
        (docs/benchmarks/dp.rst, "The base measure's concentration").
    alpha_prior : (float, float), default (1.0, 1.0)
        Shape and rate of the Gamma prior of the DP concentration alpha.
    initial_components : int, default 20
        Components at the start of the chain (``init="random"``) or of the pilot chain; rows
        are allocated uniformly among them.
    init : {"pilot", "random"}, default "pilot"
        How a new chain starts (``simplexsg.dpmixture.init``). "pilot": the exact sampler with
        split-merge moves on ``init_rows`` random rows finds the clusters whose components,
        sticks and alpha start the chain: for "gibbs" ``PILOT_ITER`` (100) iterations of
        ``PILOT_SPLIT_MERGE`` (50) proposals, at most one per row, fewer once its own check,
        whatever ``tol``, finds its score settled (``PILOT_TOL``, 5e-4, the rule "gibbs" stops
        by); for "scir" and "sgrld", whose chains add no cluster, ``MINIBATCH_PILOT_ITER``
        (400) iterations of ``split_merge="auto"`` proposals, fewer once that check finds
        its score settled and its occupied components too (by at most 5% over its last 6
        checks), or once their work reaches ``MINIBATCH_PILOT_WORK`` (6e10 visits of a
        stored count to a component: a measure of its time that the seed alone decides, not
        the machine).
        Every row is then allocated to them ``∝ w_j Mult(x | phi_j)``; for "scir", a pilot on
        a subset starts SCIR from its clusters alone (not its empty components, which would
        only cost every row's draw), or from copies of each, at least ``initial_components``
        in all, if it found fewer, at the scale of the whole data (its counts and rows
        scaled as SCIR scales a minibatch's, so that the first steps do not replace what it
        learnt by one minibatch's counts). A "scir" or "sgrld" pilot on a subset ends with
        word-anchored splits: in each component of at least ``ANCHOR_MIN_ROWS`` (50) rows, the
        rows that hold one of its ``ANCHOR_WORDS`` (30) commonest words (held by 2% to half
        of its rows) split from the rest, refined by ``ANCHOR_SCANS`` (3) restricted Gibbs
        scans, the best such split made while it raises the joint density of the rows and
        their allocations: the small clusters of short rows that the pilot's chain leaves
        merged (docs/benchmarks/dp.rst, "Word-anchored splits"). For "gibbs", a pilot on a
        subset whose rows hold fewer than ``RESIDUAL_BELOW_ENTRIES`` (50,000) stored counts
        (short rows) is followed by a second one on the ``RESIDUAL_SHARE`` (0.5) of the rows
        that its
        clusters explain worst (lowest log likelihood per count against the data's unigram
        profile), from ``RESIDUAL_COMPONENTS`` (100) random components, with the moves and
        stopping rule of the "scir" pilot and at most ``RESIDUAL_PILOT_WORK`` (5e9) visits;
        the chain starts from both pilots' clusters: the small clusters of short rows need
        more rows than the first pilot holds (docs/benchmarks/dp.rst, "The exact sampler's
        start").
        "random": ``initial_components`` components from the base measure, rows allocated
        uniformly. Either way the chain targets the same posterior.
    init_rows : int or None, default None
        Rows of the pilot chain; None: random rows up to ``PILOT_ROWS`` (5000) rows and
        ``PILOT_ENTRIES`` (100,000) stored counts for "gibbs", ``MINIBATCH_PILOT_ROWS``
        (200,000) and ``MINIBATCH_PILOT_ENTRIES`` (5,000,000) for "scir" and "sgrld", whose
        chains keep the pilot's clusters and add few, so that the pilot's cost is bounded
        whatever the row length. Their pilot then grows to twice its rows, and again, within
        that bound on counts, while it settles with at least ``PILOT_GROWTH`` (2) times the
        work it spent to spare of ``MINIBATCH_PILOT_WORK`` (6e10): on short rows of few clusters
        the bound on rows, not the work, left small clusters merged (docs/benchmarks/dp.rst,
        "The pilot that grows"). An int: that many rows, no growth.
    client : dask.distributed.Client or None, default None
        Allocate each minibatch's rows (``sampler="scir"``/``"sgrld"``) on the workers of a Dask
        cluster (``pip install simplexsg[dask]``; ``simplexsg.dpmixture.distributed``): ``fit``
        cuts X into row shards held by the workers, or has them read ``CorpusShards`` (files,
        one shard each, never held in this process), and each iteration sends a worker the
        ``log phi`` columns of its share's features, its rows' slices and uniforms, and gets
        back their labels and summed component-feature counts. The fit equals the one without
        a client bit for bit, for any number of workers and if a worker is lost. Refused:
        ``sampler="gibbs"`` (and "auto" when it resolves to it) and a streamed corpus (use
        ``CorpusShards``). The other methods run in this process. A pickled model keeps no
        client.
    shuffle_buffer : int or None, default None
        A streamed corpus only: documents held in the seeded shuffle buffer from which each
        minibatch is drawn uniformly (``simplexsg.corpus.BowStream.minibatches``); None:
        ``SHUFFLE_BATCHES`` (4) minibatches; 0: file order.
    batch_size : int, default 4000
        Rows per iteration (S), visited in passes of a fresh permutation; counts are scaled by
        N / |S|, but those of a component born in the iteration, which holds no other row, are
        not. Ignored by "gibbs". 4000 gives a cluster of 0.1% of the rows 4 rows a minibatch on
        average, so that its scaled counts are steady enough for the chain to keep the small
        clusters its pilot found ("Minibatches of 4,000 rows" in docs/benchmarks/dp.rst).
    step_size, stick_step_size : float or schedule, default None (``SAMPLER_DEFAULTS``)
        Diffusion time h of the components' and the sticks' steps (``simplexsg.simplex``);
        None is the sampler default. Ignored by "gibbs".
    max_iter : int, default None
        Iterations of ``fit``, at most; None: ``MAX_ITER`` (1000), or ``MAX_ITER_GIBBS`` (200)
        sweeps of "gibbs", ``max_time`` or not; with a number ``tol``, ``TOL_ITER_FACTOR`` (5)
        times that, the convergence check deciding when to stop within it.
    max_time : float, default None
        Training budget in seconds, a cap only: it never makes a fit longer than ``max_iter``.
        The pilot of ``init`` and, for a streamed corpus, reading it count; evaluations do not.
        ``fit`` stops after the first iteration that reaches it; the pilot chain stops after
        the sweep that spends ``PILOT_TIME_SHARE`` (0.5) of it.
    tol : float in [0, 1), "auto" or None, default "auto"
        Convergence check (None: none): after each pass over the rows or every
        ``MINIBATCH_CHECK_ITER`` (50) iterations, whichever comes first (every
        ``GIBBS_CHECK_SWEEPS`` (5) sweeps of "gibbs"), ``score`` of the monitor rows,
        ``X_heldout`` when given, else a seeded sample of ``MONITOR_ROWS`` (1000) training rows;
        ``fit`` stops once ``n_iter_no_change`` successive scores fail to improve the best one
        before them by the fraction ``tol`` of its magnitude (``simplexsg.stopping.Plateau`` on
        minus the score; the score of one posterior sample fluctuates: a ``tol`` below that
        spread waits for fluctuations). "auto": ``AUTO_TOL`` of the sampler, 5e-4 for "gibbs"
        (whose chain settles in tens of sweeps), 1e-3 for "scir" (whose score settles within
        a few hundred iterations), ``max_iter`` staying the cap; None for "sgrld".
    n_iter_no_change : int, default 3
        Scores without progress before the convergence check stops ``fit``.
    total_samples : int, default None
        N for ``partial_fit``'s scaling N / batch: after ``fit``, its N; on a first call
        without it, scikit-learn's default of 10^6 rows, with a warning.
    warm_start : bool, default False
        When the last ``fit`` was interrupted (``interrupted_``), ``fit`` on the same data and
        parameters resumes it, equal to the uninterrupted fit bit for bit; after a finished
        fit, ``fit`` on the same rows continues the chain for another ``max_iter``
        iterations. False: a new chain.
    checkpoint_every : int or None, default None
        Every so many iterations of ``fit``, write the model to ``checkpoint_path``
        (``joblib``, atomically); ``joblib.load`` gives an interrupted model that
        ``.set_params(warm_start=True).fit(X)`` resumes.
    checkpoint_path : str or path-like, default None
    n_jobs : int or None, default 1
        Threads of the allocation kernel, the SCIR draws and the split-merge passes;
        results do not depend on it.
    random_state : None, int, or numpy SeedSequence, Generator or RandomState
    verbose : int, default 0
        1: a progress bar (needs tqdm); 2: also a line per evaluation.
    evaluate_every : int, default 0
        Iterations between the entries of ``history_`` (0: never).
    split_merge : "auto", int or bool, default "auto"
        Split-merge proposals per iteration of the exact sampler (``split_merge.SplitMerge``;
        each exact), after the rows' allocations; 0 or False: none; "auto" or True: during
        a warm-up, at least ``MIN_SPLIT_MERGE`` (10), and more until their blocks held
        ``SPLIT_MERGE_WORK`` (0.25) x rows x occupied components rows (at most half a sweep's
        work; less, since a merge sums its components' counts); the warm-up lasts at least
        ``SPLIT_MERGE_WARMUP`` (5) sweeps and ends after the first one that follows a
        convergence check without progress, or that reaches half of ``max_iter`` or of
        ``max_time``; on rows of fewer than 10 stored counts on average it ends with the
        word-anchored splits of the pilot of "scir" (``init``, above) on every row, then the
        components, sticks and alpha drawn given them (docs/benchmarks/dp.rst,
        "Word-anchored splits"). From then on, that sweep's count, scaled by the square root
        of the clusters the DP prior expects given each sweep's alpha against its own
        (``defaults.split_merge_count``): a budget that stops on what the proposals met
        would bias the chain, a count that alpha sets does not. Ignored by the chains of
        "scir" and "sgrld" (their pilot uses the budget of "auto" in every sweep).
    restricted_scans : int, default 0
        Restricted Gibbs scans in half of the split-merge proposals, the exact sampler's and
        the pilot's (Jain & Neal 2004): the split proposed by the sequential allocation is
        refined by this many scans over its rows, each row drawn given every other row of the
        two sides, so that clusters the first rows cannot tell apart still split. 0: the
        sequential allocation alone (Dahl 2003). About 4 where the profiles are dense and
        overlap and the rows are short (tens of counts over hundreds of categories), whose
        clusters the allocation alone leaves merged; elsewhere the scans cost moves without
        finding more (docs/benchmarks/dp.rst, "Restricted Gibbs scans").

    Attributes
    ----------
    sampler_ : str, the sampler of the chain ("auto" resolved).
    n_components_ : int, occupied components: with at least one row of ``labels_``; for a
        streamed corpus and ``partial_fit``, whose ``labels_`` are one minibatch's, also those
        whose weight is at least 1 / ``total_samples_`` (expected to hold a row of the data).
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
    timings_ : dict of str to float, ``training_seconds_`` by phase, summing to it: "init"
        (the chain's start, the pilot included), "read" (minibatches read, a stream parsed),
        "local" (the allocations), "moves" (split-merge), "global" (components, sticks,
        alpha); reset and continued as ``training_seconds_`` is.
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

    #: Parameters a resumed fit may change (``simplexsg._fitting.result_params``): they
    #: change neither the chain nor its length.
    _resumable_params = frozenset({"warm_start", "checkpoint_every", "checkpoint_path",
                                   "n_jobs", "verbose", "random_state", "max_time", "client"})

    def __init__(self, sampler="auto", *, base_concentration=0.5, alpha_prior=(1.0, 1.0),
                 initial_components=20, batch_size=4000, step_size=None, stick_step_size=None,
                 max_iter=None, max_time=None, tol="auto", n_iter_no_change=3, total_samples=None,
                 warm_start=False, checkpoint_every=None, checkpoint_path=None, n_jobs=1,
                 random_state=None, verbose=0, evaluate_every=0, split_merge="auto",
                 restricted_scans=0, init="pilot", init_rows=None, shuffle_buffer=None,
                 client=None):
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
        self.restricted_scans = restricted_scans
        self.init = init
        self.init_rows = init_rows
        self.shuffle_buffer = shuffle_buffer
        self.client = client

    # ---------------------------------------------------------------- parameters
    _parameter_constraints = CONSTRAINTS

    def _check_params(self, n_rows=None, continuing=False, n_entries=None):
        """The parameters validated and resolved, "auto" for ``n_rows`` rows of ``n_entries``
        stored counts or, ``continuing``, the chain's sampler
        (``simplexsg.dpmixture.validation.check_params``)."""
        return check_params(self, n_rows, continuing, n_entries)

    def _read(self, X, reset):
        if isinstance(X, CorpusShards):
            raise TypeError("CorpusShards are read by the workers of a Dask client in fit "
                            "only; partial_fit, predict, predict_proba and score take a count "
                            "matrix")
        if not reset:
            check_is_fitted(self, "theta_")
        X = check_counts(validate_data(self, X, accept_sparse="csr", reset=reset))
        if reset and X.sum() == 0:
            raise ValueError("X has no counts: every row is empty")
        return sp.csr_matrix(X)

    # ---------------------------------------------------------------- fitting
    def fit(self, X, y=None, *, X_heldout=None):
        """Run ``max_iter`` iterations on the rows of X (n_rows, n_features) from a fresh state
        (with ``warm_start``: resume an interrupted fit, or continue the chain). Bad input
        raises before the model changes. An exception during the iterations (Ctrl-C included)
        keeps the state after the last completed one (``interrupted_`` True, ``stop_reason_``
        "interrupted"), or, before any, the model as it was.

        A streamed corpus (a re-iterable of bag-of-words documents declaring ``n_features``, e.g.
        ``simplexsg.datasets.UCIBowCorpus``) of more than ``STREAM_IN_MEMORY_ROWS`` (200,000)
        rows or ``STREAM_IN_MEMORY_ENTRIES`` (10,000,000) stored counts is read in minibatches
        of ``batch_size`` drawn through a seeded shuffle buffer (``shuffle_buffer``), never held
        in full: "auto" is SCIR there, the pilot runs on the first minibatches of a shuffled
        pass, each minibatch's rows are new to the chain (as in ``partial_fit``), ``labels_``
        are the last minibatch's, and it cannot be resumed (``warm_start``); "gibbs" raises. A
        smaller one, in memory about what SCIR's pilot would hold, is read whole in its
        order and, with ``sampler`` "auto" or "gibbs", fitted as that count matrix would be
        (the exact sampler, ``labels_`` of every row): faster and better than SCIR there;
        "scir" and "sgrld" stream it too.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_rows, n_features), a streamed corpus, or (with a
            ``client``) ``simplexsg.dpmixture.distributed.CorpusShards``
            Non-negative integer counts, one row per observation; ``CorpusShards``: files the
            workers read, fitted as the matrix of their rows stacked in order.
        y : ignored
        X_heldout : counts (n_heldout, n_features), optional
            Rows scored in ``history_`` and by the ``tol`` check.

        Returns
        -------
        self
        """
        if is_bow_corpus(X) and not isinstance(X, (list, tuple)):
            training.fit_stream(self, X, X_heldout)
            return self
        if isinstance(X, (list, tuple)) and is_bow_corpus(X):
            X = bow_to_csr(X)
        training.fit_matrix(self, X, X_heldout)
        return self

    @restore_on_error
    def partial_fit(self, X, y=None):
        """One iteration on the rows of X, a minibatch of a data set of ``total_samples`` rows.

        The rows are new to the chain, with no allocation to slice from: each is drawn
        ``∝ w_j Mult(x | phi_j)`` over the sticks, extended until the leftover mass is below
        ``slice_sampler.LEFTOVER_TOLERANCE`` (1e-6). No allocations are kept between calls, so
        ``labels_`` refer to this minibatch, and ``n_components_`` counts the components it
        uses and those whose weight is at least 1 / ``total_samples_`` (expected to hold a row
        of the data); the components past the last of these are dropped, the others kept even
        when the minibatch leaves them empty: a small cluster is not lost because one
        minibatch missed it. A minibatch larger than the data set (its N,
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
        total = first_partial_fit_total(params.total_samples, "rows") if first \
            else self.total_samples_
        if total < X.shape[0]:
            name = "total_samples" if first else "total_samples_ (the model's data-set size)"
            raise ValueError(f"{name} ({total}) is below the batch size ({X.shape[0]} rows): "
                             "the minibatch counts would be scaled by N / batch < 1")
        training.partial_fit(self, X, params, total)
        return self

    # ---------------------------------------------------------------- inference
    def score_samples(self, X):
        """Log predictive density of each row (n_rows,) under the current state, with the
        multinomial coefficient: ``log [sum_j w_j Mult(x | phi_j) + w_rest DirMult(x | base)]``
        over the represented sticks j, the leftover mass ``w_rest`` scored by the base measure's
        Dirichlet-multinomial (the mixture of the unrepresented components). ``phi_j`` is the
        state's draw of each profile, not its posterior mean: with a small
        ``base_concentration`` the draws are sparse and give a component's unseen categories
        little probability, and the score falls below that of the posterior-mean profiles
        (docs/benchmarks/dp.rst, "The pilot that grows"). Runs in this process on ``n_jobs``
        threads, with or without a ``client``; the values do not depend on ``n_jobs``.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_rows, n_features)
            Non-negative integer counts, one row per observation.

        Returns
        -------
        ndarray (n_rows,)
        """
        X = self._read(X, reset=False)
        return log_predictive(self.theta_, self.sticks_, self.base_concentration_, X,
                              check_n_jobs(self.n_jobs))

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
        return self._probabilities(self._read(X, reset=False))

    def _probabilities(self, X):
        """``predict_proba`` of the validated CSR rows X."""
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
        check_is_fitted(self, "components_")
        X = self._read(X, reset=False)
        return np.concatenate([np.zeros(0, dtype=np.intp)] + [
            np.argmax(self._probabilities(X[rows]), axis=1)
            for rows in row_blocks(X.shape[0], self.components_.shape[0])])
