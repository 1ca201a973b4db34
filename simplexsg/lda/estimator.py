"""``LDA``, scikit-learn's face of the model: its parameters, fitted state and ``fit`` /
``partial_fit`` (``simplexsg.lda.start`` starts a fit, ``simplexsg.lda.training`` runs it).
Inference is ``simplexsg.lda.inference``'s, the topic methods ``simplexsg.lda.fitted``'s."""
import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._fitting import CountModelMixin, restore_on_error
from . import distributed, start
from .defaults import DEFAULT_SWEEPS
from .fitted import TopicMethods
from .inference import InferenceMethods
from .training import Trainer
from .validation import CONSTRAINTS, check_params


class LDA(CountModelMixin, TopicMethods, InferenceMethods, ClassNamePrefixFeaturesOutMixin,
          TransformerMixin, BaseEstimator):
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
        minibatches that grow with the chain's passes: pass p (1, 2, ...) takes the documents of
        about ``p x 20 sqrt(T)`` of the corpus's T tokens (``BATCH_ROOT_TOKENS``; a stream's
        document length from its first documents), so that the first pass has ``sqrt(T) / 20``
        steps to move the topics far and later ones fewer, quieter steps, but at most
        ``max(T / 250, 30,000)`` tokens in the first pass (``FIRST_PASS_STEPS``,
        ``FIRST_PASS_MIN_TOKENS``: topics slow to learn need that many steps for one pass
        over a large corpus to learn them); at least those of
        20,000 tokens (``MIN_BATCH_TOKENS``: smaller ones are noisier without learning
        faster) and those of ``K W / (6 n_gibbs)`` tokens (``DRAW_COST_COORDINATES``: the
        global step passes over all K W topic-word coordinates each step, so a smaller
        minibatch would spend most of a step there) unless the first pass would then have
        fewer than 40 steps (``BALANCE_MIN_STEPS``), at most ``ceil(D / 3)`` documents and those of
        10^6 tokens (``BATCH_TOKENS``, which bounds a stream's memory), at least 50.
        Measured in docs/benchmarks/lda.rst, "Minibatches that grow by pass", "Minibatches
        and the global step" and "The first pass of a large corpus".
    step_size, step_offset, step_decay : float or None, default None (per sampler)
        Schedule h_t = step_size (1 + t / step_offset)^-step_decay over the steps t = 0, 1, ...;
        h is the diffusion time of a step (``simplexsg.simplex``). step_size >= 1e-8
        (``MIN_STEP_SIZE``: below, SCIR's Poisson rate overflows), step_offset > 0, step_decay
        in [0, 1]. None: 4.0, 10 and 0.6 for SCIR (step_decay 0.33 when topic_word_prior <=
        0.01: sharp topics keep learning from the large step late in a fit, smoother ones need
        it to shrink faster or keep more noise); 0.1, 1000 and 0.6 for SGRLD. Measured in
        docs/benchmarks/lda.rst, "Step sizes".
    n_gibbs : int >= 1, default 10
        Gibbs sweeps per document and training step, after a sequential start (or a warm start,
        ``local_warm_start``): enough for a document's topics to settle given the topics of the
        step, with its draws counted in expectation (``rao_blackwell``). ``transform`` and
        ``score`` run ``FOLD_IN_SWEEPS`` = 100, 50 discarded. Measured in
        docs/benchmarks/lda.rst, "Counts in expectation".
    gibbs_burn_in : int in [0, n_gibbs) or None, default None
        Sweeps discarded before the kept sweeps' counts are averaged. None:
        ``min(1, n_gibbs // 2)``.
    max_iter : int >= 1 or None, default None
        Passes over the training documents in ``fit``, at most. None: 6 (``DEFAULT_PASSES``:
        with the default ``n_gibbs``, 60 draws a token), or more until the steps add up to 60
        (``MIN_STEPS``); with ``tol``, up to 100 (``MAX_PASSES``), the check stopping
        the fit after those 6 passes at the earliest. Measured in docs/benchmarks/lda.rst,
        "How many passes" and "Counts in expectation".
    burn_in : int >= 0 or None, default None
        Steps of this fit after which the topics are averaged into ``components_``. None: the
        growing-block rule of ``simplexsg.averaging``, an average of about the last third to
        five ninths of the chain wherever it stops. Measured in docs/benchmarks/lda.rst, "The
        averaging window".
    total_samples : int >= 1 or None, default None
        Corpus size D of the count scaling D / batch; at least the minibatch size. None: the
        number of documents ``fit`` trains on; for a first ``partial_fit``, 10^6 with a
        warning (scikit-learn's default).
    local_topics : {"mean", "sample"}, default "mean"
        Topics the local Gibbs step conditions on. "sample": the current sample, the paper's
        scheme (exact at full batch with ``gibbs_burn_in = n_gibbs - 1`` and
        ``rao_blackwell=False``). "mean": the last step's conditional mean, an approximation
        that keeps every word reachable (at a small ``topic_word_prior``, samples stick).
        docs/guide/samplers.rst, "Local step on the conditional mean".
    rao_blackwell : bool, default True
        True: the local step counts each kept draw by its conditional expectation over the
        topics, not by the topic drawn (the same expectation, less variance: the chain
        learns in fewer steps); False: the plain counts of the draws.
        docs/guide/samplers.rst and docs/benchmarks/lda.rst, "Counts in expectation".
    learn_doc_topic_prior : {False, True, "symmetric", "per_topic"}, default False
        Sample alpha too, by an SGLD-CV step of log alpha after each local step
        (``simplexsg.lda.alpha.DocTopicPriorSampler``): True or "symmetric", one alpha shared
        by the topics; "per_topic", one per topic. The estimate: ``doc_topic_prior_``. The
        likelihood, the control variate and the approximations: docs/guide/lda.rst, "Learning
        the document-topic prior"; measured in docs/benchmarks/lda.rst, "Learning alpha".
    doc_topic_prior_prior : (shape, rate), default (1.0, 1.0)
        Gamma prior on alpha (on each entry with "per_topic"), shape and rate > 0; (1, 1) is
        an exponential of mean 1. Used only with ``learn_doc_topic_prior``.
    local_warm_start : bool, default False
        With an in-memory corpus, start each document's local chain from its topic assignments
        at its last visit (4 bytes per token; the same exact kernel, so the same law) instead
        of the sequential start; not with a ``client``. No gain measured:
        docs/benchmarks/lda.rst, "Cold local starts".
    max_time : float > 0 or None, default None
        Training budget in seconds, a cap only: ``fit`` stops at the end of the first step that
        reaches it, or at ``max_iter`` if that comes first (to train for the whole budget, also
        give a large ``max_iter``). A step's time includes reading its minibatch (a streamed
        corpus is parsed as it is read), not the evaluations (``evaluate_every``, ``tol``).
    tol : float in [0, 1) or None, default None
        Convergence check (None: none): after each pass, ``components_`` is scored by document
        completion on ``X_heldout``, else on a seeded sample of training documents (in-sample:
        it says when the chain stops moving); ``fit`` stops once ``n_iter_no_change`` scores
        fail to beat the best before them by the fraction ``tol``. 1e-3 suits slowly converging
        corpora (many short documents): docs/guide/lda.rst, "Time budget and stopping";
        measured in docs/benchmarks/lda.rst, "How many passes".
    n_iter_no_change : int >= 1, default 3
        Scores without progress before the convergence check stops ``fit``.
    shuffle_buffer : int >= 0 or None, default None
        A streamed corpus only: documents in a seeded shuffle buffer each minibatch is drawn
        from, so minibatches approximate random subsets, not runs of a sorted file. None:
        ``SHUFFLE_BATCHES`` (4) minibatches; 0: file order. Memory: up to this many documents
        plus twice ``batch_size`` (60,000 by default). docs/guide/scaling.rst.
    dtype : numpy.float64 or numpy.float32, default numpy.float64
        Storage of the topic matrices (``topic_state_``, the local topics, the running average,
        ``components_``); the arithmetic is float64. float32 halves their memory (what limits
        K x W) and keeps about 7 significant digits of each topic probability:
        docs/guide/lda.rst, "Memory".
    warm_start : bool, default False
        scikit-learn's convention. After an interrupted fit (``interrupted_``: Ctrl-C, an
        error, a model loaded from a checkpoint), ``fit`` on the same data and parameters
        resumes it, equal to the uninterrupted fit bit for bit; after a finished fit (or
        ``partial_fit``), it continues the chain for another ``max_iter`` passes, with a new
        average (``burn_in`` counts this fit's steps). False: each ``fit`` starts a new chain.
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
        Run the local steps of ``fit`` on a Dask cluster (extra ``dask``), the documents kept
        on the workers (``fit(CorpusShards(paths))``: files they read); ``fit``, ``transform``
        and ``score`` equal those without a client bit for bit, a lost worker included. Not
        with ``local_warm_start`` or a stream; ``partial_fit`` runs here. docs/guide/dask.rst.
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
        ``topic_word_intervals``; 0: none): the chain's normalised theta (drawn from the
        shapes when ``topic_state_`` holds them; not the local step's conditional means),
        evenly spaced in the averaging window; between half this number and this number once
        it spans that many steps (``simplexsg.averaging.ThinnedTail``). Memory: this many
        K x W float32 arrays.

    Attributes
    ----------
    components_ : ndarray (K, W) of ``dtype``, rows summing to 1
        Posterior-mean topic-word probabilities: the average, over the steps from ``burn_in_``
        on, of the topics the local step used (with ``local_topics="mean"``, normalised
        conditional means: close to a Rao-Blackwellised average, not exactly one); with no
        such step yet, the current topics.
    topic_state_ : ndarray (K, W) of ``dtype``
        Current state of the sampler. With ``topic_state_scale_`` None: positive gamma
        variables whose normalised rows are the topics (the SCIR paper's theta; in the LDA
        literature theta names the documents' proportions, which ``transform`` returns). SCIR
        with ``local_topics="mean"`` integrates theta out: its state is the shapes of the
        independent gammas theta is (``simplexsg.lda.global_step``).
    topic_state_scale_ : float in (0, 1) or None
        The scale of those gammas, ``1 - e^-h`` of the last step; None while ``topic_state_``
        holds theta (before the first step, and for the other samplers).
    n_iter_ : int
        Complete passes over the data done by ``fit``.
    n_batch_iter_ : int
        Steps taken.
    stop_reason_ : str or None
        Why ``fit`` stopped: "max_iter", "max_time", "converged", or "interrupted" (an
        exception during training, Ctrl-C included).
    interrupted_ : bool
        True while a fit is unfinished (after an interruption, in a checkpoint): the model
        holds its last completed step, ``components_`` included; ``warm_start=True`` resumes it.
    training_seconds_ : float
        Seconds ``fit`` spent training, reading a streamed corpus included (evaluations excluded).
    timings_ : dict of str to float
        ``training_seconds_`` by phase of the steps, summing to it: "read" (minibatches read,
        a stream parsed), "local" (the Gibbs sweeps; with a ``client``, the wait for the
        workers), "alpha" (``learn_doc_topic_prior``; 0.0 without), "global" (the topics'
        moves, averages and bookkeeping); reset and continued as ``training_seconds_`` is.
    client_traffic_ : list of dict (after a ``fit`` with a ``client``)
        Per local step of the last such fit: bytes the driver ``sent`` to the workers (rows,
        topic columns, alpha), bytes ``received`` (summed counts), and the minibatch's ``words``.
    monitor_history_ : list of dict
        Each score of the convergence check: step, perplexity, ``seconds`` (training),
        ``timings`` (a copy of ``timings_``) and ``check_seconds`` (the check's own time).
    burn_in_ : int
        The first step averaged into ``components_``.
    batch_size_ : int
        Documents per minibatch in the first pass of the last ``fit`` (with ``batch_size=None``
        later passes take more, see ``batch_size``).
    total_samples_ : int
        The corpus size D of the count scaling.
    n_documents_seen_ : int
        Documents passed through the local step.
    history_ : list of dict
        (step, documents, seconds, perplexity) every ``evaluate_every`` steps of ``fit``: the
        perplexity of ``components_`` on ``X_heldout``, else in-sample on the training
        documents (none for a stream); seconds count training only, not the evaluations.
    topic_word_prior_ : float
        The beta of the fit: ``topic_word_prior``, or 0.1 for None.
    vocabulary_ : (W,) object array or None
        The words of the columns, from ``id2word`` or a reader's vocabulary file; None without
        (``top_words`` then names words by ``feature_names_in_``, else by column).
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
        posterior mean of the alpha samples from ``burn_in_`` on (before it, the current one).
    doc_topic_prior_samples_ : (n_batch_iter_, K) or None
        With ``learn_doc_topic_prior``, the alpha sample after each step (row t: the alpha
        of step t + 1's local step); None otherwise.
    doc_topic_ : (D, K) float64, rows summing to 1 (after ``fit`` on a matrix or documents)
        The training documents' topic proportions from the sampler's own counts, as tomotopy's
        ``get_topic_dist`` gives them (no second fold-in), rows following X's: row d is
        ``(alpha + n_dk) / (n_d + sum(alpha))``, n_dk document d's topic counts after the last
        Gibbs sweep of its last visit (0 before it), alpha ``doc_topic_prior_``. 2 bytes per
        document and topic. Not after ``partial_fit`` nor for a stream (``transform`` folds
        documents in). docs/guide/lda.rst, "Document topics, posterior uncertainty and plots".
    topic_samples_ : (S, K, W) float32, or None
        With ``n_topic_samples``, the kept topic samples (rows sum to 1). Their spread is the
        chain's, minibatch noise included (an exact chain: see ``local_topics``).
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
            the training documents (the history's perplexity is then in-sample), a sample.

        Returns
        -------
        self
        """
        params, executor = check_params(self), None
        if isinstance(X, distributed.CorpusShards) and self.client is not None:
            X = X.read(self.client)                 # the workers read the files
        corpus, heldout = start.start_fit(self, X, id2word, X_heldout, params)
        in_sample = heldout is corpus
        if self.client is not None:
            if not isinstance(corpus, distributed.ShardedCorpus):
                corpus = distributed.ShardedCorpus.scatter(self.client, corpus)
            executor = distributed.DaskExecutor(self.client, corpus, params["n_jobs"])
            self.client_traffic_ = executor.traffic         # a step's entry as it is sent
        Trainer(self, params, executor).run(corpus, heldout, in_sample)
        return self

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
        params = check_params(self)
        corpus = start.start_partial_fit(self, X, id2word, params)
        # documents of a stream of minibatches: running position, modulo the corpus size
        doc_indices = np.arange(self.n_documents_seen_, self.n_documents_seen_ + corpus.shape[0])
        trainer = Trainer(self, params)
        with trainer.transaction():        # an interrupted step leaves the model as it was
            trainer.step(corpus, doc_indices)
            self.interrupted_ = False      # the chain goes on from here: nothing to resume
            self._update_components()
        return self

    def _update_components(self):
        """Set the fitted attributes the chain's state and averages give (``components_``,
        ``burn_in_``, topic samples, learned alpha); the loop and the check call it too."""
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
