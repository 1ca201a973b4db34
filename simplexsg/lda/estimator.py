"""The LDA estimator, scikit-learn's face of the model: parameters (checked by
``simplexsg.lda.validation``, defaults from ``simplexsg.lda.defaults``), fitted state,
``fit`` / ``partial_fit`` (which run ``simplexsg.lda.training.Trainer`` on the corpus
``simplexsg.lda.inputs`` reads), and inference (``transform``, ``score``, ``perplexity``)."""
import functools
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .. import metrics
from .._fitting import (CountModelMixin, check_unchanged, first_partial_fit_total, fit_plan,
                        restore_on_error, result_params)
from .._random import seed_sequence, substream
from .._validation import check_n_jobs
from ..averaging import TailAverage, ThinnedTail
from ..corpus import BowStream, is_bow_corpus
from .gibbs import AssignmentStore, fold_in
from .alpha import DocTopicPriorSampler
from ..simplex import to_simplex
from . import distributed, inputs
from .defaults import DEFAULT_SWEEPS, FOLD_IN_BURN_IN, FOLD_IN_SWEEPS, fit_length
from .fitted import TopicMethods
from .monitor import ConvergenceMonitor, monitor_documents
from .run import FitRun, data_fingerprint
from .training import Stream, Trainer
from .validation import CONSTRAINTS, check_params

class LDA(CountModelMixin, TopicMethods, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
          BaseEstimator):
    """Latent Dirichlet allocation fitted by SCIR or SGRLD with a local Gibbs step.

    Each step runs a Gibbs sampler on a minibatch's topic assignments with the topics fixed,
    then moves every topic by the simplex sampler with the counts scaled to the corpus
    (docs/guide/samplers.rst). A parameter left at None takes its default at the start of each
    fit (``simplexsg.lda.defaults``). The measurements behind the defaults are in
    docs/benchmarks/lda.rst, section "Why the defaults are what they are"; an entry below names
    its subsection. ``SCIRLDA`` and ``SGRLDLDA`` are this class with ``sampler`` fixed.

    Parameters
    ----------
    n_components : int >= 1, default 10
        Number of topics K.
    sampler : {"scir", "sgrld"}, default "scir"
        Simplex sampler of the topics: SCIR (the stochastic Cox-Ingersoll-Ross process) or
        SGRLD (Patterson & Teh 2013); docs/guide/samplers.rst.
    doc_topic_prior : float > 0 or None, default None (0.1)
        Symmetric Dirichlet parameter alpha of the documents' topic proportions; with
        ``learn_doc_topic_prior``, its starting value.
    topic_word_prior : float > 0 or None, default None (0.1)
        Symmetric Dirichlet parameter beta of the topics.
    batch_size : int >= 1 or None, default None
        Documents per minibatch of ``fit`` (the last one of a pass may be smaller). None:
        ``max(50, ceil(D / 3))``, three steps a pass, and at most 10,000
        (``STREAM_MAX_BATCH``) for a streamed corpus, which bounds its memory. Measured in
        docs/benchmarks/lda.rst, "Minibatches and sweeps".
    step_size, step_offset, step_decay : float or None, default None (per sampler)
        Schedule h_t = step_size (1 + t / step_offset)^-step_decay over the steps t = 0, 1, ...;
        h is the diffusion time of a step (``simplexsg.simplex``). step_size >= 1e-8
        (``MIN_STEP_SIZE``: below, SCIR's Poisson rate overflows), step_offset > 0, step_decay
        in [0, 1]. None: 2.0, 10 and 0.33 for SCIR; 0.1, 1000 and 0.6 for SGRLD. Measured in
        docs/benchmarks/lda.rst, "Step sizes".
    n_gibbs : int >= 1, default 6
        Gibbs sweeps per document and training step, after a sequential start (or a warm start,
        ``local_warm_start``). ``transform`` and ``score`` run ``FOLD_IN_SWEEPS`` = 100, 50
        discarded. Measured in docs/benchmarks/lda.rst, "Minibatches and sweeps".
    gibbs_burn_in : int in [0, n_gibbs) or None, default None
        Sweeps discarded before the kept sweeps' counts are averaged. None:
        ``min(1, n_gibbs // 2)``.
    max_iter : int >= 1 or None, default None
        Passes over the training documents in ``fit``, at most. None: 20 (``DEFAULT_PASSES``),
        or more if that makes fewer than 60 steps (``MIN_STEPS``); with ``tol``, up to 100
        (``MAX_PASSES``), the check stopping the fit after those 20 passes at the earliest.
        Measured in docs/benchmarks/lda.rst, "How many passes".
    burn_in : int >= 0 or None, default None
        Steps of this fit after which the topics are averaged into ``components_``. None: the
        growing-block rule of ``simplexsg.averaging`` (``fit`` and ``partial_fit``): wherever
        the chain stops, the average covers about its last third to five ninths, so
        ``components_`` is an average at every step, not only at the end. Measured in
        docs/benchmarks/lda.rst, "The averaging window".
    total_samples : int >= 1 or None, default None
        Corpus size D of the count scaling D / batch; at least the minibatch size. None: the
        number of documents ``fit`` trains on; for a first ``partial_fit``, 10^6 with a
        warning (scikit-learn's default).
    local_topics : {"mean", "sample"}, default "mean"
        Topics the local Gibbs step conditions on. "sample": the current sample, the paper's
        SG-MCMC scheme; at full batch an exact Gibbs sampler of (topics, assignments) only when
        one sweep's plain counts are handed on (``gibbs_burn_in = n_gibbs - 1``,
        ``rao_blackwell=False``; tests/lda/test_lda_exact.py): averaging several sweeps' counts,
        as the default sweeps do, biases it. "mean": the normalised conditional mean of the
        last step, ``E[theta_t | theta_{t-1}, counts]`` (SCIR:
        ``theta e^-h + (beta + counts)(1 - e^-h)``), an approximation (the local step no
        longer conditions on a sample) that keeps every word reachable, like collapsed Gibbs'
        ``(n_kw + beta) / (n_k + W beta)``: at small ``topic_word_prior`` the samples put most
        words near 1e-40 in most topics and the chain sticks (docs/guide/samplers.rst).
    rao_blackwell : bool, default True
        How the local step's counts estimate each word's topics. A token's conditional is a
        count part ``n_dk phi[k, w]`` and an alpha part ``alpha_k phi[k, w]``. True: a kept
        token drawn on topic k counts there with probability ``n_dk / (alpha_k + n_dk)`` (its
        other tokens on k), else in its word's alpha count, which the global step spreads over
        the topics by ``alpha_k phi[k, w] / sum_j alpha_j phi[j, w]``: the expectation of the
        draws with less noise, not a draw of the assignments. False: the plain counts of the
        draws. It matters where tokens often sit alone on their topic (short documents):
        measured in docs/benchmarks/lda.rst, "The alpha part in expectation".
    learn_doc_topic_prior : {False, True, "symmetric", "per_topic"}, default False
        Sample alpha too: True or "symmetric", one alpha shared by the topics; "per_topic", one
        per topic. Each step, after the local Gibbs step, one SGLD-CV step of log alpha
        (``simplexsg.lda.alpha.DocTopicPriorSampler``) on the Dirichlet-multinomial
        likelihood of the documents' doc-topic counts: every document visited so far keeps
        its latest counts, those of the minibatch replaced by their value after the LAST Gibbs
        sweep (one draw of the assignments: the average over the kept sweeps would bias alpha
        up, the likelihood being non-linear in the counts), the sum over documents scaled to
        ``total_samples`` D. The next local step uses the new alpha. The control variate's
        centre is the posterior mode over the stored counts (a Newton optimisation),
        recomputed with the chain moved to it after each of the first ``ALPHA_WARMUP_STEPS``
        (5) steps and after each pass over D documents while ``step < burn_in_`` (a fixed
        burn-in); under the growing-block rule, recomputed after each pass without moving the
        chain. Approximations: a document's stored counts were drawn under the topics and
        alpha of its last visit (stale by up to a pass); with ``local_topics="mean"`` the
        topics are conditional means, not samples; the step's Euler discretisation is not
        corrected. Measured in docs/benchmarks/lda.rst, "Learning alpha". The estimate:
        ``doc_topic_prior_``.
    doc_topic_prior_prior : (shape, rate), default (1.0, 1.0)
        Gamma prior on alpha (on each entry with "per_topic"), shape and rate > 0; (1, 1) is
        an exponential of mean 1. Used only with ``learn_doc_topic_prior``.
    local_warm_start : bool, default False
        With an in-memory corpus, start each document's local chain from its topic assignments
        at its last visit (4 bytes per token) instead of the sequential start. The sweeps are
        the same exact kernel, so each visit targets the same law. A streamed corpus always
        starts cold; not with a ``client``. No gain measured: docs/benchmarks/lda.rst, "Cold
        local starts".
    max_time : float > 0 or None, default None
        Training budget in seconds, a cap only: ``fit`` stops at the end of the first step
        that reaches it (so it overruns by less than one step), or at ``max_iter`` if that
        comes first: a budget never makes a fit longer (to train for the whole budget, also
        give a large ``max_iter``). A step's time includes reading its minibatch (a streamed
        corpus is parsed as it is read); evaluations (``evaluate_every``, the convergence
        check) are not counted.
    tol : float in [0, 1) or None, default None
        Convergence check (None: none): after each pass, ``components_`` (the running
        posterior mean) is scored by document completion (``simplexsg.metrics``; a cheaper
        Gibbs fold-in of 20 sweeps, with the same random streams each time, so that successive
        scores differ by the model only) on ``X_heldout`` when given, else on a seeded sample
        of training documents of at least ``min(MONITOR_TOKENS, MONITOR_FRACTION * tokens)``
        (20,000, 5%) tokens (a stream: its first documents up to 20,000 tokens). That
        in-sample score says when the chain has stopped moving, not when the held-out
        perplexity has: pass ``X_heldout`` for that. ``fit`` stops once ``n_iter_no_change``
        successive scores fail to beat the best one before them by the fraction ``tol``
        (``simplexsg.stopping.Plateau``). 1e-3 suits corpora that converge slowly (many short
        documents): measured in docs/benchmarks/lda.rst, "How many passes".
    n_iter_no_change : int >= 1, default 3
        Scores without progress before the convergence check stops ``fit``.
    shuffle_buffer : int >= 0 or None, default None
        A streamed corpus only: documents held in a seeded shuffle buffer, so that its
        minibatches approximate random subsets of the corpus rather than runs of consecutive
        documents (a file sorted by date or topic would bias each step's D / batch estimate).
        Each pass reads blocks of ``batch_size`` documents into a pool and, once it holds
        ``shuffle_buffer + batch_size``, draws a minibatch from it uniformly (the rest leave
        in random order at the end of the pass). None: ``SHUFFLE_BATCHES`` (4) minibatches; 0:
        file order. Memory: up to ``shuffle_buffer + 2 batch_size`` documents (60,000 with the
        defaults, whatever the corpus size).
    dtype : numpy.float64 or numpy.float32, default numpy.float64
        Storage of the topic matrices (the gamma variables ``topic_state_``, the local topics,
        the running average and ``components_``); the arithmetic is float64 throughout.
        float32 halves their memory (what limits K x W: see the memory check) and keeps about
        7 significant digits of each topic probability; a value below the smallest normal
        float32 (about 1.2e-38) is stored as that value, which changes no topic's simplex
        value by more than W * 1.2e-38 / its row sum. The average sums float32 values, with a
        relative error up to about 1e-7 per averaged step.
    warm_start : bool, default False
        scikit-learn's convention. When the last ``fit`` was interrupted (``interrupted_``:
        Ctrl-C, an error, or a model loaded from a checkpoint), ``fit`` on the same data and
        parameters resumes it, and the result equals the uninterrupted fit bit for bit.
        After a finished fit (or ``partial_fit``), ``fit`` continues the chain from its state
        for another ``max_iter`` passes, with a new average (``burn_in`` counts the steps of
        this fit). False: every ``fit`` starts a new chain.
    checkpoint_every : int >= 1 or None, default None
        Every so many steps of ``fit``, write the model to ``checkpoint_path`` (``joblib``,
        atomically: a temporary file renamed over the previous checkpoint). ``joblib.load``
        gives an interrupted model: ``.set_params(warm_start=True).fit(X)`` resumes it.
    checkpoint_path : str, path-like or None, default None
        The checkpoint file, which ``checkpoint_every`` needs; checked writable before training.
    n_jobs : int or None, default 1
        Threads of the Gibbs kernel and the global step (joblib's convention: None is 1, -1 all
        cores; 0 is refused). Results do not depend on it.
    client : dask.distributed.Client or None, default None
        Run the local steps of ``fit`` on a Dask cluster (``pip install simplexsg[dask]``;
        ``simplexsg.lda.distributed``): the training documents stay on the workers, in shards
        sent once (an in-memory matrix) or read by the workers themselves
        (``fit(CorpusShards(paths))``: files on a shared file system); each step sends each
        worker the topic columns of its share's words and gets back sparse counts. The fit,
        ``transform`` and ``score`` equal those without a client bit for bit; a worker lost
        mid-fit changes nothing (its tasks are recomputed). Not with ``local_warm_start``
        (per-token state would live on the workers and die with one) or a streamed corpus (it
        is read by this process); ``partial_fit`` runs here (its minibatch is here). A pickled
        model keeps no client.
    random_state : None, int >= 0, or numpy SeedSequence, Generator or RandomState, default None
        Every draw derives from it: same value and data, same result, bit for bit. None: fresh
        entropy; a Generator or RandomState gives one seed per new chain, drawn from it.
    verbose : int >= 0, default 0
        1: a progress bar (needs tqdm); 2: also a line per evaluation.
    evaluate_every : int >= -1, default 0
        Steps between held-out perplexity evaluations recorded in ``history_`` (0 or -1:
        never).
    n_topic_samples : int, 0 or >= 2, default 0
        Topic samples kept for posterior uncertainty (``topic_samples_``,
        ``topic_word_intervals``; 0: none): normalised topic matrices
        ``topic_state_ / row sums`` (the chain's samples, not the local step's conditional
        means) from the averaging window, evenly spaced (``simplexsg.averaging.ThinnedTail``:
        between half of this number and this number in a window of that many steps). Memory:
        this many K x W float32 arrays.

    Attributes
    ----------
    components_ : ndarray (K, W) of ``dtype``, rows summing to 1
        Posterior-mean topic-word probabilities: the average, over the steps from ``burn_in_``
        on, of the topics the local step used (the normalised samples, or with
        ``local_topics="mean"`` the normalised conditional means of the gamma variables: close
        to a Rao-Blackwellised average, not exactly one, as normalising does not commute with
        the expectation). With no such step yet, the current topics.
    topic_state_ : ndarray (K, W) of ``dtype``
        Current state of the sampler: positive gamma variables whose normalised rows are the
        topics (the SCIR paper's theta; in the LDA literature theta names the documents'
        proportions, which ``transform`` returns).
    n_iter_ : int
        Complete passes over the data done by ``fit``.
    n_batch_iter_ : int
        Steps taken.
    stop_reason_ : str or None
        Why ``fit`` stopped: "max_iter", "max_time", "converged", or "interrupted" (an
        exception during training, Ctrl-C included).
    interrupted_ : bool
        True while a fit is unfinished (after an interruption, in a checkpoint): the model
        holds the state after its last completed step, ``components_`` consistent with it, and
        ``warm_start=True`` resumes it.
    training_seconds_ : float
        Seconds ``fit`` spent training, reading a streamed corpus included (evaluations
        excluded).
    monitor_history_ : list of dict
        (step, perplexity) of each score of the convergence check.
    burn_in_ : int
        The first step averaged into ``components_``.
    batch_size_ : int
        Documents per minibatch of ``fit``.
    total_samples_ : int
        The corpus size D of the count scaling.
    n_documents_seen_ : int
        Documents passed through the local step.
    history_ : list of dict
        (step, documents, seconds, perplexity): every ``evaluate_every`` steps of ``fit``, the
        document-completion perplexity of ``components_`` so far on ``X_heldout``, or on the
        training documents themselves when none is given (then an in-sample figure; nothing
        for a stream without ``X_heldout``); seconds count training only, not the evaluations.
    topic_word_prior_ : float
        The beta of the fit: ``topic_word_prior``, or 0.1 for None.
    vocabulary_ : (W,) object array or None
        The words of the columns, from ``id2word`` (or a reader's vocabulary file); None when
        the fit had none (``top_words`` then names words by column, or by
        ``feature_names_in_``).
    n_features_in_ : int
        W, the vocabulary size.
    feature_names_in_ : (W,) object array
        The column names of a pandas data frame X (scikit-learn's convention); absent
        otherwise.
    random_state_ : numpy SeedSequence
        The seed every draw of the chain derives from (from ``random_state``); a continued or
        resumed fit keeps it.
    doc_topic_prior_ : float, or (K,) with ``learn_doc_topic_prior="per_topic"``
        The alpha of ``transform`` and ``perplexity``: ``doc_topic_prior``, or when learned the
        posterior mean of the alpha samples of the steps from ``burn_in_`` on (the current
        sample if there is none yet).
    doc_topic_prior_samples_ : (n_batch_iter_, K) or None
        With ``learn_doc_topic_prior``, the alpha sample after each step (row t: the alpha
        of step t + 1's local step); None otherwise.
    doc_topic_ : (D, K) float64, rows summing to 1 (after ``fit`` on a matrix or a list of
        documents)
        The training documents' topic proportions from the sampler's own counts, as tomotopy's
        ``get_topic_dist`` gives them (no second fold-in): row d is
        ``(alpha + n_dk) / (n_d + sum(alpha))`` with n_dk document d's topic counts after the
        last Gibbs sweep of its last visit (one draw of its assignments, under the topics and
        alpha of that step) and alpha ``doc_topic_prior_``; a document not visited yet (a fit
        stopped within its first pass) gets the prior mean. Rows follow X's. Stored as counts,
        2 bytes per document and topic (4 if a document has 2^16 tokens or more); a step
        writes its documents' rows last, so an interrupted step may have written them already,
        and resuming it writes the same values. Not after ``partial_fit`` (its minibatches are
        not kept, so there are no training documents to index) nor a streamed corpus
        (streamed because it is too large to hold; its counts would grow with D):
        ``transform`` folds documents in.
    topic_samples_ : (S, K, W) float32, or None
        With ``n_topic_samples``, the kept topic samples (rows sum to 1). Their spread is the
        chain's, including the minibatch noise of the stochastic gradient: at full batch with
        ``local_topics="sample"``, one kept sweep and ``rao_blackwell=False`` the chain is
        exact (``tests/lda/test_lda_exact.py``).
    topic_sample_steps_ : (S,) int array, or None
        The steps of ``topic_samples_``.
    """

    _parameter_constraints = CONSTRAINTS
    #: The sampler a subclass fixes (``SCIRLDA``, ``SGRLDLDA``); None: ``sampler`` chooses.
    _fixed_sampler = None

    #: Parameters a resumed fit may change (``simplexsg._fitting.result_params``): they
    #: change neither the chain nor where it stops.
    _resumable_params = frozenset({"n_jobs", "verbose", "warm_start", "checkpoint_every",
                                   "checkpoint_path", "random_state", "max_time",
                                   "evaluate_every", "client"})

    def __init__(self, n_components=10, *, sampler="scir", doc_topic_prior=None,
                 topic_word_prior=None, batch_size=None, step_size=None, step_offset=None,
                 step_decay=None, n_gibbs=DEFAULT_SWEEPS, gibbs_burn_in=None, max_iter=None,
                 burn_in=None, total_samples=None, local_topics="mean", rao_blackwell=True,
                 learn_doc_topic_prior=False, doc_topic_prior_prior=(1.0, 1.0),
                 local_warm_start=False, max_time=None, tol=None, n_iter_no_change=3,
                 shuffle_buffer=None, dtype=np.float64, warm_start=False,
                 checkpoint_every=None, checkpoint_path=None, n_jobs=1, client=None,
                 random_state=None, verbose=0, evaluate_every=0, n_topic_samples=0):
        self.n_components = n_components
        self.sampler = sampler
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.batch_size = batch_size
        self.step_size = step_size
        self.step_offset = step_offset
        self.step_decay = step_decay
        self.n_gibbs = n_gibbs
        self.gibbs_burn_in = gibbs_burn_in
        self.max_iter = max_iter
        self.burn_in = burn_in
        self.total_samples = total_samples
        self.local_topics = local_topics
        self.rao_blackwell = rao_blackwell
        self.learn_doc_topic_prior = learn_doc_topic_prior
        self.doc_topic_prior_prior = doc_topic_prior_prior
        self.local_warm_start = local_warm_start
        self.max_time = max_time
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.shuffle_buffer = shuffle_buffer
        self.dtype = dtype
        self.warm_start = warm_start
        self.checkpoint_every = checkpoint_every
        self.checkpoint_path = checkpoint_path
        self.n_jobs = n_jobs
        self.client = client
        self.random_state = random_state
        self.verbose = verbose
        self.evaluate_every = evaluate_every
        self.n_topic_samples = n_topic_samples

    def _check_params(self):
        """The parameters validated and resolved (``simplexsg.lda.validation.check_params``)."""
        return check_params(self)

    # ---------------------------------------------------------------- fitting
    def fit(self, X, y=None, *, id2word=None, X_heldout=None):
        """Fit the topics to X (counts, or a bag-of-words corpus, possibly streamed).

        Training stops after ``max_iter`` passes, at the end of the first step that reaches
        ``max_time`` seconds, or when the convergence check (``tol``) sees no progress,
        whichever comes first; ``stop_reason_`` says which. Bad input or parameters raise
        before training and leave the model as it was. An exception during training (Ctrl-C
        included) keeps the state after the last completed step, with ``interrupted_`` True;
        ``warm_start=True`` then resumes the fit (see ``warm_start``, ``checkpoint_every``).

        Parameters
        ----------
        X : scipy.sparse or array-like (n_docs, n_features), or a bag-of-words corpus
            Non-negative integer counts; a list of ``(word_id, count)`` documents; or a
            re-iterable corpus (e.g. gensim's), streamed in minibatches (pass ``id2word``).
        y : ignored
        id2word : gensim Dictionary or mapping id -> word, optional
            Names the words (``vocabulary_``) and fixes the vocabulary size of a stream; its
            size must match X's columns.
        X_heldout : counts or list of documents, optional
            Documents for the ``evaluate_every`` history and the convergence check. Default:
            the training documents themselves for the history (so it is then an in-sample
            perplexity), a sample of them for the check.

        Returns
        -------
        self
        """
        params, executor = self._check_params(), None
        if isinstance(X, distributed.CorpusShards) and self.client is not None:
            X = X.read(self.client)                 # the workers read the files
        corpus, heldout = self._start_fit(X, id2word, X_heldout, params)
        in_sample = heldout is corpus
        if self.client is not None:
            if not isinstance(corpus, distributed.ShardedCorpus):
                corpus = distributed.ShardedCorpus.scatter(self.client, corpus)
            executor = distributed.DaskExecutor(self.client, corpus, params["n_jobs"])
        Trainer(self, params, executor).run(corpus, heldout, in_sample)
        return self

    @restore_on_error
    def _start_fit(self, X, id2word, X_heldout, params):
        """Read the data, then plan the fit in ``self._run`` (a ``FitRun``) with the checked
        ``params``: a new chain, the chain continued (``warm_start`` after a finished fit), or
        the interrupted fit resumed (``warm_start`` with ``interrupted_``). Returns
        ``(corpus, heldout)``."""
        plan = fit_plan(self, params["warm_start"], "topic_state_")
        resume, extend = plan == "resume", plan == "continue"
        corpus = inputs.read(self, X, id2word, reset=not (resume or extend))
        heldout = None if X_heldout is None else inputs.read(self, X_heldout, None, reset=False)
        if isinstance(heldout, BowStream):
            raise TypeError("X_heldout must be a matrix or a list of documents, not a stream")
        if self.client is not None and isinstance(corpus, BowStream):
            raise TypeError("with a client, fit takes a matrix or CorpusShards (files the "
                            "workers read): a streamed corpus is read by this process")
        sharded = isinstance(corpus, distributed.ShardedCorpus)
        fingerprint = data_fingerprint(None if sharded else corpus, heldout,
                                       result_params(self))
        if sharded:
            fingerprint["X"] = corpus.fingerprint
        if resume:
            check_unchanged(self._run.fingerprint, fingerprint)
            self.stop_reason_ = None
            return corpus, self._evaluation_documents(corpus, heldout, params)
        n_docs = corpus.n_documents if isinstance(corpus, BowStream) else corpus.shape[0]
        D = params["total_samples"] or n_docs
        if sharded and params["tol"] is not None and heldout is None:
            raise ValueError("the convergence check of a corpus read by the workers needs "
                             "X_heldout")
        if isinstance(corpus, BowStream) and D is None:
            raise ValueError("a streamed corpus without len() needs total_samples")
        batch_size, steps_per_pass, passes, min_passes = fit_length(
            params["batch_size"], params["max_iter"], params["tol"], n_docs, D,
            streamed=isinstance(corpus, BowStream))
        if not isinstance(corpus, (BowStream, distributed.ShardedCorpus)):
            inputs.check_step_memory(corpus, batch_size, params)
        if D < min(batch_size, n_docs or batch_size):
            raise ValueError(f"total_samples ({D}) is below batch_size ({batch_size}): the "
                             "minibatch counts would be scaled by D / batch < 1")
        if params["burn_in"] is not None and params["burn_in"] >= passes * steps_per_pass:
            warnings.warn(f"burn_in={params['burn_in']} is not below the {passes * steps_per_pass}"
                          " steps of fit: components_ will be the last step's topics, not an "
                          "average", UserWarning)
        if extend:
            if self.topic_state_.shape[0] != params["n_components"]:
                raise ValueError(f"warm_start continues a model of {self.topic_state_.shape[0]} "
                                 f"topics: n_components={params['n_components']} differs")
            seed, first_step = self.random_state_, self.n_batch_iter_
            first_epoch = self._run.epoch if hasattr(self, "_run") else 0   # after partial_fit
        else:
            seed, first_step, first_epoch = seed_sequence(self.random_state), 0, 0
            self._init_state(params, corpus_features=self.n_features_in_, seed=seed,
                             n_documents=D)
        self.burn_in_ = (None if params["burn_in"] is None     # TailAverage's growing blocks
                         else first_step + params["burn_in"])
        self._init_averages(params["n_topic_samples"])
        self.total_samples_, self.batch_size_ = D, batch_size
        self._run = FitRun(fingerprint, batch_size, steps_per_pass, first_epoch, passes,
                           min_passes)
        self._monitor = None if params["tol"] is None else ConvergenceMonitor(
            monitor_documents(corpus, heldout, substream(seed, Stream.MONITOR, 0)), params,
            seed=substream(seed, Stream.MONITOR, 1),
            first_pass=min_passes - params["n_iter_no_change"] - 1)
        self._assignments = (AssignmentStore(corpus) if params["local_warm_start"]
                             and not isinstance(corpus, BowStream) else None)
        self._doc_topic_counts = (None if isinstance(corpus, BowStream) else np.zeros(
            (n_docs, params["n_components"]), dtype=inputs.doc_topic_dtype(corpus)))
        self.stop_reason_, self.interrupted_, self.training_seconds_ = None, True, 0.0
        return corpus, self._evaluation_documents(corpus, heldout, params)

    @staticmethod
    def _evaluation_documents(corpus, heldout, params):
        """The documents of the ``evaluate_every`` history: X_heldout, else the training ones."""
        if heldout is None and params["evaluate_every"] and not isinstance(
                corpus, (BowStream, distributed.ShardedCorpus)):
            return corpus
        return heldout

    @restore_on_error
    def partial_fit(self, X, y=None, *, id2word=None):
        """One step on the minibatch X (all its documents).

        The counts are scaled by D / batch with D the model's ``total_samples_``: after ``fit``
        or earlier calls, the one already used; on a first call, ``total_samples``, or
        scikit-learn's default of 10^6 documents with a warning. A first call with a
        bag-of-words minibatch needs ``id2word`` (it fixes the vocabulary size). A failed call
        (bad input or parameters) leaves the model as it was. With
        ``learn_doc_topic_prior``, documents are numbered by their running position modulo
        D (the alpha sampler keeps each one's latest counts), so every pass must present the
        documents in the same order.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_docs, n_features), or a list of bag-of-words documents
            Non-negative integer counts of one minibatch.
        y : ignored
        id2word : gensim Dictionary or mapping id -> word, optional (first call only)

        Returns
        -------
        self
        """
        params = self._check_params()
        first = not hasattr(self, "topic_state_")
        if first and id2word is None and is_bow_corpus(X):
            raise ValueError("a first partial_fit on bag-of-words documents needs id2word: the "
                             "vocabulary size cannot be read from one minibatch")
        corpus = inputs.read(self, X, id2word, reset=first)
        if isinstance(corpus, BowStream):
            raise TypeError("partial_fit takes one minibatch: a matrix or a list of documents")
        inputs.check_step_memory(corpus, corpus.shape[0], params)
        total = (first_partial_fit_total(params["total_samples"], "documents") if first
                 else self.total_samples_)
        if total < corpus.shape[0]:
            raise ValueError(f"total_samples ({total}) is below the minibatch's "
                             f"{corpus.shape[0]} documents: the counts would be scaled by "
                             "D / batch < 1")
        if first:
            self._init_state(params, corpus_features=self.n_features_in_,
                             seed=seed_sequence(self.random_state), n_documents=total)
            self.burn_in_ = params["burn_in"]      # None: TailAverage's growing blocks
            self._init_averages(params["n_topic_samples"])
            self.total_samples_ = total
            self.stop_reason_ = None
        self._doc_topic_counts = None      # doc_topic_: fit's training documents only
        # documents of a stream of minibatches: running position, modulo the corpus size
        doc_indices = np.arange(self.n_documents_seen_, self.n_documents_seen_ + corpus.shape[0])
        trainer = Trainer(self, params)
        with trainer.transaction():        # an interrupted step leaves the model as it was
            trainer.step(corpus, doc_indices)
            self.interrupted_ = False      # the chain goes on from here: nothing to resume
            self._update_components()
        return self

    def _init_state(self, params, corpus_features, seed, n_documents):
        K, W = params["n_components"], corpus_features
        inputs.check_memory(K, W, params["dtype"].itemsize, params["n_topic_samples"])
        self.random_state_ = seed
        self.doc_topic_prior_, self.topic_word_prior_ = params["alpha"], params["beta"]
        init = np.random.default_rng(substream(seed, Stream.INIT))
        self.topic_state_ = init.gamma(1.0, size=(K, W)).astype(params["dtype"])
        self.n_batch_iter_ = 0
        self.n_documents_seen_ = 0
        self.n_iter_ = 0
        self.history_ = []
        self._local = to_simplex(self.topic_state_).astype(params["dtype"])
        self._alpha_sampler = None
        self._alpha_history = []
        self.doc_topic_prior_samples_ = None
        if params["learn_alpha"] is not None:
            self._alpha_sampler = DocTopicPriorSampler(
                K, n_documents, symmetric=params["learn_alpha"] == "symmetric",
                prior=params["alpha_prior"], initial=params["alpha"])

    def _init_averages(self, n_samples):
        """Posterior-mean accumulators of the topics and alpha from ``burn_in_`` on (None: the
        growing-block rule of ``simplexsg.averaging``, for a chain of unknown length), and the
        store of ``n_samples`` topic samples from the same window."""
        self._topic_average = TailAverage(self.burn_in_)
        self._alpha_average = TailAverage(self.burn_in_)
        self._topic_samples = ThinnedTail(n_samples) if n_samples else None

    def _update_components(self):
        if not self._topic_average.fixed:
            self.burn_in_ = self._topic_average.start
        mean = self._topic_average.mean()
        self.components_ = self._local if mean is None else mean
        samples = self._topic_samples
        self.topic_samples_ = (None if samples is None or not samples.steps
                               else np.stack(samples.samples))
        self.topic_sample_steps_ = None if samples is None else np.array(samples.steps)
        if self._alpha_sampler is not None:
            self.doc_topic_prior_samples_ = np.array(self._alpha_history).reshape(
                -1, self.topic_state_.shape[0])
            alpha = self._alpha_average.mean()
            alpha = self._alpha_sampler.alpha if alpha is None else alpha
            self.doc_topic_prior_ = (float(alpha.mean()) if self._alpha_sampler.symmetric
                                     else alpha)

    @property
    def doc_topic_(self):
        """The training documents' topic proportions (see the class docstring)."""
        check_is_fitted(self, "components_")
        counts = getattr(self, "_doc_topic_counts", None)
        if counts is None:
            raise AttributeError("doc_topic_ is kept by fit on a matrix or a list of documents "
                                 "only (not partial_fit, not a streamed corpus): use "
                                 "transform(X)")
        alpha = np.broadcast_to(np.asarray(self.doc_topic_prior_, dtype=np.float64),
                                counts.shape[1:])
        weights = counts + alpha
        return weights / weights.sum(axis=1, keepdims=True)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    # ---------------------------------------------------------------- inference
    def transform(self, X):
        """Documents' topic proportions by Gibbs fold-in with ``components_``:
        (alpha + mean n_dk) / (n_d + K alpha). Empty documents get the prior.

        A Monte Carlo estimate (FOLD_IN_SWEEPS sweeps, FOLD_IN_BURN_IN discarded) whose random
        stream is keyed by the model's seed and the document's words and counts, not its row:
        a document gets the same proportions in any batch, and equal documents equal ones.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_docs, n_features), or a list of bag-of-words documents
            Non-negative integer counts (not a stream); with a ``client``, also
            ``CorpusShards`` (files the workers read and fold in).

        Returns
        -------
        ndarray (n_docs, n_components), rows summing to 1
        """
        check_is_fitted(self, "components_")
        if isinstance(X, distributed.CorpusShards) and self.client is not None:
            return distributed.transform_shards(self.client, self._read_shards(X),
                                                self.components_, self.doc_topic_prior_,
                                                **self._fold_in_options())
        X = inputs.read(self, X, None, reset=False)
        if isinstance(X, BowStream):
            raise TypeError("transform takes a matrix or a list of documents, not a stream")
        return self._fold_in(self.components_, self.doc_topic_prior_, X)

    def _fold_in(self, topics, alpha, X):
        """Documents' topic proportions given ``topics`` by the Gibbs kernel (FOLD_IN_SWEEPS),
        on the client's workers when there is one."""
        gibbs = fold_in if self.client is None else functools.partial(distributed.fold_in,
                                                                       self.client)
        return gibbs(topics, alpha, X, **self._fold_in_options())

    def _fold_in_options(self):
        return dict(n_sweeps=FOLD_IN_SWEEPS, burn_in=FOLD_IN_BURN_IN,
                    seed=substream(self.random_state_, Stream.EVAL),
                    n_jobs=check_n_jobs(self.n_jobs))

    def _read_shards(self, X):
        """``CorpusShards`` X read by the client's workers: a ``ShardedCorpus`` of the fitted
        vocabulary size."""
        return inputs.read(self, X.read(self.client), None, reset=False)

    def perplexity(self, X):
        """Held-out perplexity of X by document completion (``simplexsg.metrics``): each
        document's tokens are split in halves by a seeded shuffle, the first half is folded in
        by the Gibbs kernel, the second half scored. Lower is better.

        The split and the fold-in are seeded per document by its content, so the value does
        not depend on the order of the rows, and every model is scored on the same split. It
        is a Monte Carlo estimate (its spread over seeds is measured in
        docs/benchmarks/lda.rst, "Fold-in and perplexity"). Differences between models scored
        on the same documents share the split; the split's error of an absolute figure
        shrinks with the number of test documents, about as one over its square root.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_docs, n_features), or a list of bag-of-words documents
            Non-negative integer counts of the test documents (not a stream: score a sample).

        Returns
        -------
        float
            ``exp(-score(X))``.
        """
        return float(np.exp(-self.score(X)))

    def score(self, X, y=None):
        """Mean held-out log-likelihood per token by document completion (= -log perplexity);
        higher is better.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_docs, n_features), or a list of bag-of-words documents
            Non-negative integer counts of the test documents (not a stream); with a
            ``client``, also ``CorpusShards`` (each file scored on a worker; the documents'
            terms are those of the in-process score, summed in another order).
        y : ignored

        Returns
        -------
        float
        """
        check_is_fitted(self, "components_")
        if isinstance(X, distributed.CorpusShards) and self.client is not None:
            log_likelihood, n_tokens = distributed.completion_score(
                self.client, self._read_shards(X), self.components_, self.doc_topic_prior_,
                **self._fold_in_options())
            return log_likelihood / n_tokens
        X = inputs.read(self, X, None, reset=False)
        if isinstance(X, BowStream):
            raise TypeError("score and perplexity take a matrix or a list of documents, not a "
                            "stream: pass a sample of the corpus (e.g. list(islice(corpus, n)))")
        observed, heldout = metrics.completion_split(X, random_state=0)
        result = metrics.document_completion_score(self.components_, self.doc_topic_prior_,
                                                   observed, heldout, fold_in=self._fold_in)
        return result.log_likelihood / result.n_tokens


class SCIRLDA(LDA):
    """``LDA(sampler="scir")``: LDA with the topics sampled by the stochastic CIR process.

    The parameters, their defaults, the fitted attributes and the methods are those of
    ``LDA``, documented there; this class fixes ``sampler``.

    Parameters
    ----------
    sampler : {"scir"}, default "scir"
        Fixed: another value raises ValueError in ``fit`` (``LDA(sampler="sgrld")`` samples
        with SGRLD). The other parameters are ``LDA``'s.

    See Also
    --------
    LDA : The parameters, fitted attributes and methods.
    SGRLDLDA : The same model sampled by SGRLD.
    """

    _fixed_sampler = "scir"     # LDA.__init__ already defaults to it


class SGRLDLDA(LDA):
    """``LDA(sampler="sgrld")``: LDA with the topics sampled by SGRLD (Patterson & Teh 2013).

    The parameters, their defaults, the fitted attributes and the methods are those of
    ``LDA``, documented there; this class fixes ``sampler``.

    Parameters
    ----------
    sampler : {"sgrld"}, default "sgrld"
        Fixed: another value raises ValueError in ``fit`` (``LDA(sampler="scir")`` samples
        with SCIR). The other parameters are ``LDA``'s.

    See Also
    --------
    LDA : The parameters, fitted attributes and methods.
    SCIRLDA : The same model sampled by SCIR.
    """

    _fixed_sampler = "sgrld"

    # LDA's signature with sampler="sgrld": scikit-learn reads the parameters and their
    # defaults from it (tests/lda/test_lda.py checks the two agree).
    def __init__(self, n_components=10, *, sampler="sgrld", doc_topic_prior=None,
                 topic_word_prior=None, batch_size=None, step_size=None, step_offset=None,
                 step_decay=None, n_gibbs=DEFAULT_SWEEPS, gibbs_burn_in=None, max_iter=None,
                 burn_in=None, total_samples=None, local_topics="mean", rao_blackwell=True,
                 learn_doc_topic_prior=False, doc_topic_prior_prior=(1.0, 1.0),
                 local_warm_start=False, max_time=None, tol=None, n_iter_no_change=3,
                 shuffle_buffer=None, dtype=np.float64, warm_start=False,
                 checkpoint_every=None, checkpoint_path=None, n_jobs=1, client=None,
                 random_state=None, verbose=0, evaluate_every=0, n_topic_samples=0):
        super().__init__(
            n_components, sampler=sampler, doc_topic_prior=doc_topic_prior,
            topic_word_prior=topic_word_prior, batch_size=batch_size, step_size=step_size,
            step_offset=step_offset, step_decay=step_decay, n_gibbs=n_gibbs,
            gibbs_burn_in=gibbs_burn_in, max_iter=max_iter, burn_in=burn_in,
            total_samples=total_samples, local_topics=local_topics, rao_blackwell=rao_blackwell,
            learn_doc_topic_prior=learn_doc_topic_prior,
            doc_topic_prior_prior=doc_topic_prior_prior, local_warm_start=local_warm_start,
            max_time=max_time, tol=tol, n_iter_no_change=n_iter_no_change,
            shuffle_buffer=shuffle_buffer, dtype=dtype, warm_start=warm_start,
            checkpoint_every=checkpoint_every, checkpoint_path=checkpoint_path, n_jobs=n_jobs,
            client=client, random_state=random_state, verbose=verbose,
            evaluate_every=evaluate_every, n_topic_samples=n_topic_samples)
