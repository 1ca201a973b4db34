"""The LDA estimator, scikit-learn's face of the model: parameters, input checks, fitted state,
``fit`` / ``partial_fit`` (which run ``simplexsg.lda.training.Trainer``), and inference
(``transform``, ``score``, ``perplexity``)."""
import functools
import inspect
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import metrics
from .._estimator import first_partial_fit_total, restore_on_error
from .._random import seed_sequence, substream
from .._validation import (check_checkpoint, check_int, check_n_jobs, check_positive_scalar,
                           check_tol, physical_memory)
from ..averaging import TailAverage, ThinnedTail
from ..corpus import (BowStream, as_corpus, check_counts, check_token_memory, corpus_features,
                      is_bow_corpus)
from ..gibbs import AssignmentStore, fold_in, step_bytes_per_token
from ..hyperparameters import DocTopicPriorSampler, GammaPrior
from ..schedules import Polynomial
from ..simplex import to_simplex
from . import distributed, export, inspection, uncertainty
from .defaults import (DEFAULT_SWEEP_BURN_IN, FOLD_IN_BURN_IN, FOLD_IN_SWEEPS, MAX_PASSES,
                       MIN_STEP_SIZE, SAMPLER_DEFAULTS, default_batch_size, default_passes)
from .monitor import ConvergenceMonitor, monitor_documents
from .run import FitRun, data_fingerprint
from .training import EVAL, INIT, MONITOR, Trainer
#: Parameters that a resumed fit may change (``LDA._result_params``).
_RESUMABLE_PARAMS = {"n_jobs", "verbose", "warm_start", "checkpoint_every", "checkpoint_path",
                     "random_state", "max_time", "evaluate_every", "client"}

_LEARN_ALPHA = {False: None, True: "symmetric", "symmetric": "symmetric",
                "per_topic": "per_topic"}


class LDA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Latent Dirichlet allocation fitted by SCIR or SGRLD with a local Gibbs step.

    Parameters
    ----------
    n_components : int, default 10
        Number of topics K.
    sampler : {"scir", "sgrld"}, default "scir"
        Simplex sampler for the topics.
    doc_topic_prior : float, default None (0.1)
        Symmetric Dirichlet parameter alpha of the documents' topic proportions; with
        ``learn_doc_topic_prior`` its starting value.
    topic_word_prior : float, default None (0.1)
        Symmetric Dirichlet parameter beta of the topics.
    batch_size : int, default None
        Documents per minibatch in ``fit`` (the last minibatch of a pass may be smaller).
        None: ``max(50, ceil(D / 3))``: three steps per pass (``default_batch_size``; measured
        in the LDA benchmarks, docs/benchmarks/lda.rst), at most 10,000
        (``STREAM_MAX_BATCH``) for a streamed corpus, so that streaming memory is bounded.
    step_size, step_offset, step_decay : float, default None (per sampler, ``SAMPLER_DEFAULTS``)
        Schedule h_t = step_size (1 + t / step_offset)^-step_decay over the steps t = 0, 1, ...;
        h is the diffusion time of a step (``simplexsg.simplex`` docstring). None: 2.0, 10 and
        0.33 for SCIR; 0.1, 1000 and 0.6 for SGRLD.
    n_gibbs : int, default 6
        Gibbs sweeps per document per training step, after a sequential start or a warm
        start (``transform`` and ``perplexity`` run ``FOLD_IN_SWEEPS`` = 100, 50 discarded).
    gibbs_burn_in : int, default None (min(1, n_gibbs // 2))
        Sweeps discarded before the counts are averaged.
    max_iter : int, default None
        Passes over the training documents in ``fit``, at most. None: 20 (``DEFAULT_PASSES``;
        more if that makes fewer than 60 steps, ``MIN_STEPS``), ``max_time`` or not; with
        ``tol``, up to 100 (``MAX_PASSES``), the check stopping the fit after those 20 passes
        at the earliest.
    burn_in : int, default None
        Steps after which the topic samples are averaged into ``components_``. None: the
        growing-block rule of ``simplexsg.averaging`` (``fit`` and ``partial_fit``): whenever
        the chain stops, the average covers about its last third to five ninths, so
        ``components_`` is an average at every step, not only at the end. Chosen over the
        doubling rule (the last half to three quarters; the default before) in
        ``benchmarks/lda_averaging.py``: the same final perplexity on the tuning corpora
        (median ratio 0.999, range 0.993-1.003, 24 rows) and on the held-out ones (median
        0.999, range 0.974-1.006, 40 rows), where the short documents of tweets, glosses and
        dictionary entries gain 0.6-2.6% (their chains are still moving after 20 passes).
    total_samples : int, default None
        Corpus size D for the count scaling D / batch. None: the number of documents ``fit``
        trains on; for a first ``partial_fit``, 10^6 with a warning (scikit-learn's default).
    local_topics : {"mean", "sample"}, default "mean"
        Topics the local Gibbs step conditions on. "sample": the current sample, the paper's
        SG-MCMC scheme; at full batch it is an exact Gibbs sampler of (topics, assignments)
        only when one sweep's plain counts are handed on (``gibbs_burn_in = n_gibbs - 1``,
        ``rao_blackwell=False``; tests/test_lda_exact.py): averaging several sweeps' counts,
        as the default sweeps do, biases it measurably. "mean": the normalised conditional
        mean of the last step, ``E[theta_t | theta_{t-1}, counts]`` (SCIR: ``theta e^-h +
        (beta + counts)(1 - e^-h)``).
        At small ``topic_word_prior`` the exact samples put most words near 1e-40 in most
        topics, so the local step can never move a word to a new topic and the chain sticks; the
        mean keeps every word reachable, like collapsed Gibbs' ``(n_kw + beta) / (n_k + W beta)``.
        It is an approximation: the local step no longer conditions on a sample.
    rao_blackwell : bool, default True
        How the local step's counts estimate each word's topics. A token's conditional is a
        count part ``n_dk phi[k, w]`` and an alpha part ``alpha_k phi[k, w]``; with True, a
        kept token drawn on topic k counts there with probability ``n_dk / (alpha_k + n_dk)``
        (its other tokens on k), else its word's alpha count, which the global step spreads
        over the topics by the alpha part's expected share ``alpha_k phi[k, w] / sum_j
        alpha_j phi[j, w]``: the same expectation as the token's draw, less noise (the draw
        over K topics is replaced by its mean). It matters where tokens often sit alone on
        their topic: a third of them on documents of 8-13 tokens, 1-6% on long ones. False:
        the plain counts of the draws.
    learn_doc_topic_prior : {False, True, "symmetric", "per_topic"}, default False
        Sample alpha too (True means "symmetric": one alpha shared by the topics; "per_topic":
        one per topic). Each step, after the local Gibbs step, one SGLD-CV step of log alpha
        (``simplexsg.hyperparameters.DocTopicPriorSampler``) uses the Dirichlet-multinomial
        likelihood of the documents' doc-topic counts: every document visited so far keeps its
        latest counts, those of the minibatch are replaced by their value after the LAST Gibbs
        sweep (one draw of the assignments, not the average over the kept sweeps: the digamma
        likelihood is non-linear in the counts and the average biases alpha up, ~40% in
        ``tests/test_hyperparameters.py``), and the sum over documents is scaled to
        ``total_samples`` D. The next local step uses the new alpha. The control variate's
        centre is the posterior mode over the stored counts (a Newton optimisation), recomputed
        with the chain moved to it after each of the first ``ALPHA_WARMUP_STEPS`` (5) steps and
        after each pass over D documents while ``step < burn_in_`` (a fixed burn-in); under the
        growing-block rule, recomputed after each pass without moving the chain.
        Approximations: a document's stored counts were drawn under the topics and alpha of
        its last visit (stale by up to a pass); with ``local_topics="mean"`` the topics are
        conditional means, not samples; the step's Euler discretisation is not corrected
        (h L = 0.1: ~2.6% on the posterior sd). See ``doc_topic_prior_`` for the estimate.
    doc_topic_prior_prior : (shape, rate), default (1.0, 1.0)
        Gamma prior on alpha (each entry with "per_topic"); (1, 1) is an exponential of mean 1.
        Used only with ``learn_doc_topic_prior``.
    local_warm_start : bool, default False
        With an in-memory corpus, start each document's local chain from its topic assignments
        at its last visit (4 bytes per token) instead of the sequential start. The sweeps are
        the same exact kernel, so each visit targets the same law; the study found no gain
        (docs/benchmarks/lda.rst). A streamed corpus always starts cold.
    max_time : float, default None
        Training budget in seconds, a cap only: ``fit`` stops at the end of the first step
        that reaches it (so it overruns by less than one step), or at ``max_iter`` if that
        comes first: a budget never makes a fit longer (to train for the whole budget, also
        give a large ``max_iter``); a step's time includes reading its minibatch
        (a streamed corpus is parsed as it is read); evaluations (``evaluate_every``, the
        convergence check) are not counted.
    tol : float in [0, 1) or None, default None
        Convergence check (None: none): after each pass, ``components_`` (the running posterior mean) are
        scored by document completion (``simplexsg.metrics``; a cheaper Gibbs fold-in of 20
        sweeps, with the same random streams each time, so that successive scores differ by
        the model only) on the monitor documents: ``X_heldout`` when given, else a seeded
        sample of training documents of at least ``min(MONITOR_TOKENS, MONITOR_FRACTION *
        tokens)`` (20,000, 5%) tokens (a stream: its first documents up to 20,000 tokens). That
        in-sample score (what scikit-learn's LDA follows for ``perp_tol``) says when the chain
        has stopped moving, not when the held-out perplexity has: pass ``X_heldout`` for that.
        ``fit`` stops once ``n_iter_no_change`` successive scores fail to beat the best one
        before them by the fraction ``tol`` (``simplexsg.stopping.Plateau``). 1e-3 suits
        corpora that converge slowly (many short documents: docs/benchmarks/lda.rst).
    n_iter_no_change : int, default 3
        Scores without progress before the convergence check stops ``fit``.
    shuffle_buffer : int or None, default None
        A streamed corpus only: documents held in a seeded shuffle buffer, so that its
        minibatches approximate random subsets of the corpus rather than runs of consecutive
        documents (a file sorted by date or topic would otherwise bias each step's D / batch
        estimate). Each pass reads blocks of ``batch_size`` documents into a pool and, once it
        holds ``shuffle_buffer + batch_size``, draws a minibatch from it uniformly (the rest
        leave in random order at the end of the pass). None: ``SHUFFLE_BATCHES`` (4)
        minibatches; 0: file order. Memory: up to ``shuffle_buffer + 2 batch_size``
        documents (60,000 with the defaults, whatever the corpus size).
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
    checkpoint_every : int or None, default None
        Every so many steps of ``fit``, write the model to ``checkpoint_path`` (``joblib``,
        atomically: a temporary file renamed over the previous checkpoint). ``joblib.load``
        gives an interrupted model: ``.set_params(warm_start=True).fit(X)`` resumes it.
    checkpoint_path : str or path-like, default None
    n_jobs : int or None, default 1
        Threads of the Gibbs kernel and the global step (joblib's convention: None is 1, -1 all
        cores). Results do not depend on it.
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
    random_state : None, int, or numpy SeedSequence, Generator or RandomState
        Every draw derives from it: same value and data, same result, bit for bit.
    verbose : int, default 0
        1: a progress bar (needs tqdm); 2: also a line per evaluation.
    evaluate_every : int, default 0
        Steps between held-out perplexity evaluations recorded in ``history_`` (0 or -1:
        never).
    n_topic_samples : int, default 0
        Topic samples kept for posterior uncertainty (``topic_samples_``,
        ``topic_word_intervals``; 0: none, else at least 2): normalised topic matrices
        ``topic_state_ / row sums`` (the chain's samples, not the local step's conditional
        means) from the averaging window, evenly spaced (``simplexsg.averaging.ThinnedTail``:
        between half of this number and this number in a window of that many steps). Memory:
        this many K x W float32 arrays.

    Attributes
    ----------
    components_ : (K, W) posterior-mean topic-word probabilities, rows sum to 1: the average,
        over the steps from ``burn_in_`` on, of the topics the local step used (the normalised
        samples, or with ``local_topics="mean"`` the normalised conditional means of the
        gamma variables: close to a Rao-Blackwellised average, not exactly one, as normalising
        does not commute with the expectation). With no such step yet, the current topics.
    topic_state_ : (K, W) current state of the sampler: positive gamma variables whose
        normalised rows are the topics (the SCIR paper's theta; in the LDA literature theta
        names the documents' proportions, which ``transform`` returns).
    n_iter_ : complete passes over the data done by ``fit``; n_batch_iter_ : steps taken.
    stop_reason_ : why ``fit`` stopped: "max_iter", "max_time", "converged", or
        "interrupted" (an exception during training, Ctrl-C included).
    interrupted_ : True while a fit is unfinished (after an interruption, in a checkpoint):
        the model holds the state after its last completed step, ``components_`` consistent
        with it, and ``warm_start=True`` resumes it.
    training_seconds_ : seconds ``fit`` spent training, reading a streamed corpus included
        (evaluations excluded).
    monitor_history_ : list of dicts (step, perplexity) of the convergence check.
    burn_in_ : the first step averaged into ``components_``.
    batch_size_ : documents per minibatch of ``fit``; total_samples_ : the corpus size D.
    n_documents_seen_ : documents passed through the local step.
    history_ : list of dicts (step, documents, seconds, perplexity): every ``evaluate_every``
        steps of ``fit``, the document-completion perplexity of ``components_`` so far on
        ``X_heldout``, or on the training documents themselves when none is given (then an
        in-sample figure; nothing for a stream without ``X_heldout``); seconds count training
        only, not the evaluations.
    topic_word_prior_ : float
        The beta of the fit: ``topic_word_prior``, or 0.1 for None.
    vocabulary_ : (W,) object array or None
        The words of the columns, from ``id2word`` (or a reader's vocabulary file); None when
        the fit had none (``top_words`` then names words by column, or by
        ``feature_names_in_``).
    n_features_in_ : int
        W, the vocabulary size; ``feature_names_in_`` : (W,) the column names of a pandas
        data frame X (scikit-learn's convention), absent otherwise.
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
        stopped within its first pass) gets the prior mean. Rows follow X's. Stored as counts, 2
        bytes per document and topic (4 if a document has 2^16 tokens or more); a step writes
        its documents' rows last, so an interrupted step may have written them already, and
        resuming it writes the same values. Not after ``partial_fit`` (its minibatches are not kept, so there are no
        training documents to index) nor a streamed corpus (streamed because it is too large
        to hold; its counts would grow with D): ``transform`` folds documents in.
    topic_samples_ : (S, K, W) float32, or None
        With ``n_topic_samples``, the kept topic samples (rows sum to 1); steps in
        ``topic_sample_steps_`` (S,). Their spread is the chain's, including the minibatch
        noise of the stochastic gradient: at full batch with ``local_topics="sample"``, one
        kept sweep and ``rao_blackwell=False`` the chain is exact (``tests/test_lda_exact.py``).
    """

    def __init__(self, n_components=10, *, sampler="scir", doc_topic_prior=None,
                 topic_word_prior=None, batch_size=None, step_size=None, step_offset=None,
                 step_decay=None, n_gibbs=6, gibbs_burn_in=None, max_iter=None, burn_in=None,
                 total_samples=None, local_topics="mean", rao_blackwell=True,
                 learn_doc_topic_prior=False,
                 doc_topic_prior_prior=(1.0, 1.0), local_warm_start=False, max_time=None,
                 tol=None, n_iter_no_change=3, shuffle_buffer=None, dtype=np.float64,
                 warm_start=False, checkpoint_every=None, checkpoint_path=None, n_jobs=1,
                 client=None, random_state=None, verbose=0, evaluate_every=0,
                 n_topic_samples=0):
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

    # ---------------------------------------------------------------- parameters
    def _check_params(self):
        """Validate the constructor parameters; return the resolved ones as a dict."""
        if not isinstance(self.sampler, str) or self.sampler not in SAMPLER_DEFAULTS:
            raise ValueError(f"sampler must be one of {sorted(SAMPLER_DEFAULTS)}, got {self.sampler!r}")
        fixed = getattr(type(self), "_fixed_sampler", None)
        if fixed is not None and self.sampler != fixed:
            raise ValueError(f"{type(self).__name__} samples with {fixed!r}; use "
                             f"LDA(sampler={self.sampler!r}) for another sampler")
        defaults = SAMPLER_DEFAULTS[self.sampler]
        if self.local_topics not in ("sample", "mean"):
            raise ValueError(f"local_topics must be 'sample' or 'mean', got {self.local_topics!r}")

        def resolved(name, value, default):
            return check_positive_scalar(name, default if value is None else value)

        n_gibbs = check_int("n_gibbs", self.n_gibbs)
        gibbs_burn_in = (min(DEFAULT_SWEEP_BURN_IN, n_gibbs // 2) if self.gibbs_burn_in is None
                         else self.gibbs_burn_in)
        gibbs_burn_in = check_int("gibbs_burn_in", gibbs_burn_in, 0)
        if gibbs_burn_in >= n_gibbs:
            raise ValueError(f"gibbs_burn_in ({gibbs_burn_in}) must be < n_gibbs ({n_gibbs})")
        kappa = defaults["step_decay"] if self.step_decay is None else self.step_decay
        if isinstance(kappa, bool) or not isinstance(kappa, (int, float)) or not 0 <= kappa <= 1:
            raise ValueError(f"step_decay must lie in [0, 1], got {kappa!r}")
        step_size = resolved("step_size", self.step_size, defaults["step_size"])
        if step_size < MIN_STEP_SIZE:
            raise ValueError(f"step_size must be at least {MIN_STEP_SIZE:g}, got {step_size}: "
                             "SCIR's Poisson rate theta e^-h / (1 - e^-h) would overflow")
        params = dict(
            n_components=check_int("n_components", self.n_components),
            alpha=resolved("doc_topic_prior", self.doc_topic_prior, 0.1),
            beta=resolved("topic_word_prior", self.topic_word_prior, 0.1),
            schedule=Polynomial(step_size,
                                resolved("step_offset", self.step_offset, defaults["step_offset"]),
                                float(kappa)),
            n_gibbs=n_gibbs,
            gibbs_burn_in=gibbs_burn_in,
            n_jobs=check_n_jobs(self.n_jobs),
            evaluate_every=max(0, check_int("evaluate_every", self.evaluate_every, -1)),
            max_time=(None if self.max_time is None
                      else check_positive_scalar("max_time", self.max_time)),
            n_iter_no_change=check_int("n_iter_no_change", self.n_iter_no_change),
            n_topic_samples=check_int("n_topic_samples", self.n_topic_samples, 0),
        )
        if params["n_topic_samples"] == 1:
            raise ValueError("n_topic_samples must be 0 or at least 2: a standard deviation "
                             "needs two samples")
        try:
            params["dtype"] = np.dtype(self.dtype)
        except TypeError:
            params["dtype"] = None
        if params["dtype"] not in (np.float32, np.float64):
            raise ValueError(f"dtype must be numpy.float64 or numpy.float32, got {self.dtype!r}")
        for name in ("rao_blackwell", "local_warm_start", "warm_start"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {value!r}")
            params[name] = bool(value)
        if self.client is not None and params["local_warm_start"]:
            raise ValueError("local_warm_start keeps each token's topic between visits; with a "
                             "client that state would live on the workers and be lost with "
                             "one: use local_warm_start=False (the default)")
        params["checkpoint_every"] = check_checkpoint(self.checkpoint_every,
                                                      self.checkpoint_path)
        params["checkpoint_path"] = self.checkpoint_path
        params["tol"] = check_tol(self.tol)
        learn = self.learn_doc_topic_prior
        if isinstance(learn, (bool, np.bool_)):
            learn = bool(learn)
        elif not isinstance(learn, str):
            learn = repr(learn)          # unhashable or other types: reported below
        if learn not in _LEARN_ALPHA:
            raise ValueError("learn_doc_topic_prior must be False, True, 'symmetric' or "
                             f"'per_topic', got {self.learn_doc_topic_prior!r}")
        params["learn_alpha"] = _LEARN_ALPHA[learn]
        prior = self.doc_topic_prior_prior
        if isinstance(prior, (str, bytes)) or not hasattr(prior, "__len__") or len(prior) != 2:
            raise ValueError("doc_topic_prior_prior must be a pair (shape, rate) of a Gamma "
                             f"prior on alpha, got {prior!r}")
        try:
            params["alpha_prior"] = GammaPrior(*prior)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"doc_topic_prior_prior (shape, rate): {exc}") from None
        for name in ("batch_size", "max_iter", "burn_in", "total_samples", "shuffle_buffer"):
            value = getattr(self, name)
            params[name] = None if value is None else check_int(
                name, value, 0 if name in ("burn_in", "shuffle_buffer") else 1)
        return params

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
        if isinstance(X, distributed.CorpusShards) and self.client is not None:
            X = X.read(self.client)                 # the workers read the files
        corpus, heldout = self._start_fit(X, id2word, X_heldout)
        in_sample = heldout is corpus
        params, executor = self._check_params(), None
        if self.client is not None:
            if not isinstance(corpus, distributed.ShardedCorpus):
                corpus = distributed.ShardedCorpus.scatter(self.client, corpus)
            executor = distributed.DaskExecutor(self.client, corpus, params["n_jobs"])
        Trainer(self, params, executor).run(corpus, heldout, in_sample)
        return self

    @restore_on_error
    def _start_fit(self, X, id2word, X_heldout):
        """Validate, then plan the fit in ``self._run`` (a ``FitRun``): a new chain, the
        chain continued (``warm_start`` after a finished fit), or the interrupted fit resumed
        (``warm_start`` with ``interrupted_``). Returns ``(corpus, heldout)``."""
        params = self._check_params()
        resume = params["warm_start"] and getattr(self, "interrupted_", False)
        extend = params["warm_start"] and hasattr(self, "topic_state_") and not resume
        corpus = self._read(X, id2word, reset=not (resume or extend))
        heldout = self._read(X_heldout, None, reset=False) if X_heldout is not None else None
        if isinstance(heldout, BowStream):
            raise TypeError("X_heldout must be a matrix or a list of documents, not a stream")
        if self.client is not None and isinstance(corpus, BowStream):
            raise TypeError("with a client, fit takes a matrix or CorpusShards (files the "
                            "workers read): a streamed corpus is read by this process")
        sharded = isinstance(corpus, distributed.ShardedCorpus)
        fingerprint = data_fingerprint(None if sharded else corpus, heldout,
                                       self._result_params())
        if sharded:
            fingerprint["X"] = corpus.fingerprint
        if resume:
            changed = self._run.changed(fingerprint)
            if changed:
                raise ValueError(f"warm_start resumes the interrupted fit, which needs the same "
                                 f"data and parameters: {changed} differ")
            self.stop_reason_ = None
            return corpus, self._evaluation_documents(corpus, heldout, params)
        n_docs = corpus.n_documents if isinstance(corpus, BowStream) else corpus.shape[0]
        D = params["total_samples"] or n_docs
        if sharded and params["tol"] is not None and heldout is None:
            raise ValueError("the convergence check of a corpus read by the workers needs "
                             "X_heldout")
        if isinstance(corpus, BowStream) and D is None:
            raise ValueError("a streamed corpus without len() needs total_samples")
        batch_size = params["batch_size"] or default_batch_size(
            D, streamed=isinstance(corpus, BowStream))
        steps_per_pass = -(-(n_docs or D) // batch_size)
        passes = params["max_iter"] or (MAX_PASSES if params["tol"] is not None
                                         else default_passes(steps_per_pass))
        if not isinstance(corpus, (BowStream, distributed.ShardedCorpus)):
            _check_step_memory(corpus, batch_size, params)
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
        min_passes = 0 if params["max_iter"] else default_passes(steps_per_pass)
        self.burn_in_ = (None if params["burn_in"] is None     # TailAverage's growing blocks
                         else first_step + params["burn_in"])
        self._init_averages(params["n_topic_samples"])
        self.total_samples_, self.batch_size_ = D, batch_size
        self._run = FitRun(fingerprint, batch_size, steps_per_pass, first_epoch, passes,
                           min_passes)
        self._monitor = None if params["tol"] is None else ConvergenceMonitor(
            monitor_documents(corpus, heldout, substream(seed, MONITOR, 0)), params,
            seed=substream(seed, MONITOR, 1),
            first_pass=min_passes - params["n_iter_no_change"] - 1)
        self._assignments = (AssignmentStore(corpus) if params["local_warm_start"]
                             and not isinstance(corpus, BowStream) else None)
        self._doc_topic_counts = (None if isinstance(corpus, BowStream) else np.zeros(
            (n_docs, params["n_components"]), dtype=_doc_topic_dtype(corpus)))
        self.stop_reason_, self.interrupted_, self.training_seconds_ = None, True, 0.0
        return corpus, self._evaluation_documents(corpus, heldout, params)

    @staticmethod
    def _evaluation_documents(corpus, heldout, params):
        """The documents of the ``evaluate_every`` history: X_heldout, else the training ones."""
        if heldout is None and params["evaluate_every"] and not isinstance(
                corpus, (BowStream, distributed.ShardedCorpus)):
            return corpus
        return heldout

    def _result_params(self):
        """The parameters a resumed fit must share with the interrupted one: all but those
        that change neither the chain nor where it stops (threads, output, checkpoints,
        ``warm_start``), and ``random_state`` (the resumed fit uses the stored stream)."""
        return {name: value for name, value in self.get_params().items()
                if name not in _RESUMABLE_PARAMS}

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
        corpus = self._read(X, id2word, reset=first)
        if isinstance(corpus, BowStream):
            raise TypeError("partial_fit takes one minibatch: a matrix or a list of documents")
        _check_step_memory(corpus, corpus.shape[0], params)
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

    def _read(self, X, id2word, reset):
        """Validated corpus (CSR int64 or BowStream); sets n_features_in_ when ``reset``.

        Raises on bad counts, an all-empty corpus when ``reset``, or a vocabulary size that
        differs from the fitted one.
        """
        if not reset:
            check_is_fitted(self, "n_features_in_")
        if isinstance(X, distributed.CorpusShards):
            raise TypeError("CorpusShards are read by the workers of a Dask client: "
                            "LDA(client=...) only")
        if id2word is None and reset and isinstance(X, distributed.ShardedCorpus):
            id2word = X.id2word
        if id2word is None and reset and is_bow_corpus(X):
            id2word = getattr(X, "id2word", None)   # simplexsg.readers' corpora name words
        n_features = len(id2word) if id2word is not None else (
            None if reset else self.n_features_in_)
        if id2word is not None and _empty_documents(X):       # documents, not 0 columns
            X = np.zeros((len(X), n_features), dtype=np.int64)
        if isinstance(X, distributed.ShardedCorpus):      # held by the workers, checked there
            if not reset and X.shape[1] != n_features:
                raise ValueError(f"the corpus has {X.shape[1]} words, but the model was "
                                 f"fitted on {n_features}")
            corpus = X
            if reset:
                self.n_features_in_ = X.shape[1]
        elif is_bow_corpus(X):
            declared = corpus_features(X)
            if declared is not None and n_features is not None and declared != n_features:
                raise ValueError(f"the corpus has {declared} words, but "
                                 + (f"id2word has {n_features}" if reset else
                                    f"the model was fitted on {n_features}"))
            corpus = as_corpus(X, n_features)
            if reset:
                self.n_features_in_ = (corpus.n_features if isinstance(corpus, BowStream)
                                       else corpus.shape[1])
        else:  # sklearn's checks and messages first (feature count), then the counts'
            corpus = check_counts(validate_data(self, X, accept_sparse="csr", reset=reset))
        if not isinstance(corpus, (BowStream, distributed.ShardedCorpus)):
            if reset and corpus.sum() == 0:
                raise ValueError("X has no tokens: every document is empty")
        if reset:
            if id2word is not None and len(id2word) != self.n_features_in_:
                raise ValueError(f"id2word has {len(id2word)} words but X has "
                                 f"{self.n_features_in_} columns")
            if is_bow_corpus(X) and hasattr(self, "feature_names_in_"):
                del self.feature_names_in_          # a refit without column names
            self.vocabulary_ = None if id2word is None else _vocabulary(id2word)
        return corpus

    def _init_state(self, params, corpus_features, seed, n_documents):
        K, W = params["n_components"], corpus_features
        _check_memory(K, W, params["dtype"].itemsize, params["n_topic_samples"])
        self.random_state_ = seed
        self.doc_topic_prior_, self.topic_word_prior_ = params["alpha"], params["beta"]
        init = np.random.default_rng(substream(seed, INIT))
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
        X = self._read(X, None, reset=False)
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
                    seed=substream(self.random_state_, EVAL),
                    n_jobs=check_n_jobs(self.n_jobs))

    def _read_shards(self, X):
        """``CorpusShards`` X read by the client's workers: a ``ShardedCorpus`` of the fitted
        vocabulary size."""
        return self._read(X.read(self.client), None, reset=False)

    def perplexity(self, X):
        """Held-out perplexity of X by document completion (``simplexsg.metrics``): each
        document's tokens are split in halves by a seeded shuffle, the first half is folded in
        by the Gibbs kernel, the second half scored. Lower is better.

        The split and the fold-in are seeded per document by its content, so the value does
        not depend on the order of the rows, and every model is scored on the same split. It
        is a Monte Carlo estimate: on the bundled corpus's 50 test documents (61,741 tokens),
        K = 20, the fold-in's standard deviation over seeds is 0.04% of the perplexity and the
        split's 0.8% (3518-3618 over 10 split seeds). Differences between models scored on the
        same documents share the split; the split's error of an absolute figure shrinks with
        the number of test documents, about as one over its square root.

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
        X = self._read(X, None, reset=False)
        if isinstance(X, BowStream):
            raise TypeError("score and perplexity take a matrix or a list of documents, not a "
                            "stream: pass a sample of the corpus (e.g. list(islice(corpus, n)))")
        observed, heldout = metrics.completion_split(X, random_state=0)
        result = metrics.document_completion_score(self.components_, self.doc_topic_prior_,
                                                   observed, heldout, fold_in=self._fold_in)
        return result.log_likelihood / result.n_tokens

    # ---------------------------------------------------------------- reading the topics
    def top_words(self, n=10):
        """Each topic's ``n`` most probable words with their probabilities
        (``simplexsg.lda.inspection.top_words``).

        Parameters
        ----------
        n : int, default 10

        Returns
        -------
        list of K lists of (word, probability)
            Most probable first; words from ``vocabulary_``, else ``feature_names_in_``, else
            the column ids as strings.
        """
        return inspection.top_words(self, n)

    def format_topics(self, n=10):
        """The topics as text, one line per topic in gensim's ``print_topics`` format,
        ``0: 0.025*"word" + ...``.

        Parameters
        ----------
        n : int, default 10
            Words per topic.

        Returns
        -------
        str
        """
        return inspection.format_topics(self, n)

    def coherence(self, X_or_texts, measure="u_mass", top_n=10, vocabulary=None):
        """Coherence of each topic's ``top_n`` words by gensim's ``CoherenceModel``
        (``simplexsg.lda.inspection.coherence``).

        Parameters
        ----------
        X_or_texts : counts (n_docs, n_features) or a list of token lists
            "u_mass" takes either; "c_v", "c_uci" and "c_npmi" need token lists.
        measure : {"u_mass", "c_v", "c_uci", "c_npmi"}, default "u_mass"
        top_n : int, default 10
        vocabulary : sequence of str, optional
            The words of the columns, if the model has none.

        Returns
        -------
        Coherence
            ``per_topic`` (K,) and ``mean``; higher is better.
        """
        return inspection.coherence(self, X_or_texts, measure, top_n, vocabulary)

    def topic_word_intervals(self, n=10, level=0.9):
        """Posterior mean, standard deviation and credible interval of each topic's ``n`` top
        words' probabilities over the kept topic samples (``n_topic_samples``;
        ``simplexsg.lda.uncertainty.topic_word_intervals``).

        Parameters
        ----------
        n : int, default 10
            Words per topic: the most probable under ``components_``.
        level : float in (0, 1), default 0.9
            Probability of the equal-tailed interval.

        Returns
        -------
        TopicWordIntervals
            (K, n) arrays ``word_ids``, ``words``, ``mean``, ``sd``, ``lower``, ``upper``;
            ``level``; ``n_samples``.
        """
        return uncertainty.topic_word_intervals(self, n, level)

    def to_gensim(self):
        """The topics as a gensim ``LdaModel`` (``simplexsg.lda.export.to_gensim``): its
        ``get_topics()`` equals ``components_``; ``get_document_topics``,
        ``CoherenceModel(model=...)`` and ``save`` work.

        Returns
        -------
        gensim.models.LdaModel
        """
        return export.to_gensim(self)

    def pyldavis_data(self, X):
        """The keyword arguments of ``pyLDAvis.prepare`` for the documents X
        (``simplexsg.lda.export.pyldavis_data``; pyLDAvis is not a dependency).

        Parameters
        ----------
        X : counts (n_docs, n_features) or a list of bag-of-words documents

        Returns
        -------
        dict
            ``topic_term_dists``, ``doc_topic_dists``, ``doc_lengths``, ``vocab``,
            ``term_frequency``.
        """
        return export.pyldavis_data(self, X)

    def __getstate__(self):
        """Pickles (and checkpoints) keep no client: it is a live connection."""
        return {**super().__getstate__(), "client": None}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        tags.input_tags.categorical = True  # integer counts: the checks then feed integer data
        return tags


def _empty_documents(X):
    """True if X is a non-empty list or tuple of empty documents (a bag-of-words corpus
    without tokens, which array checks would read as a matrix of no columns)."""
    return (isinstance(X, (list, tuple)) and len(X) > 0
            and all(isinstance(doc, (list, tuple)) and not doc for doc in X))


def _vocabulary(id2word):
    """The words of ``id2word`` (a gensim Dictionary, a mapping id -> word or a sequence) in
    id order, as an object array; ValueError if a word has two ids (None, a mapping that
    gives only the vocabulary size, names no word)."""
    words = np.array([id2word[i] for i in range(len(id2word))], dtype=object)
    first = {}
    for i, word in enumerate(words):
        if word is not None and first.setdefault(word, i) != i:
            raise ValueError(f"id2word names {word!r} twice (ids {first[word]} and {i}): "
                             "each word needs a single id")
    return words


def _doc_topic_dtype(corpus):
    """The dtype of ``doc_topic_``'s counts: uint16 when every document of an in-memory corpus
    has fewer than 2^16 tokens, else int32."""
    if isinstance(corpus, distributed.ShardedCorpus):
        return np.int32
    return np.uint16 if np.asarray(corpus.sum(axis=1)).max(initial=0) < 2 ** 16 else np.int32


#: K x W arrays of the topic dtype alive at once at the peak of a step: the state and the local
#: topics, old and new (the global step writes fresh arrays: a step cut half-way changes
#: nothing), the average's previous sum, its current sum old and new, and components_.
_TOPIC_MATRICES = 8
#: Bytes per (topic, word) of the local step's per-word tables (f and the alpha sums, float64),
#: built for the minibatch's words (at most W).
_TABLE_BYTES = 16


def _check_memory(n_topics, n_words, itemsize=8, n_samples=0):
    """Refuse a topic matrix whose working set exceeds the machine's memory; warn above half.
    ``itemsize``: bytes of the topic matrices' dtype; ``n_samples``: kept float32 topic
    samples (``n_topic_samples``)."""
    needed = ((_TOPIC_MATRICES * itemsize + _TABLE_BYTES + 4 * n_samples)
              * float(n_topics) * n_words)
    total = physical_memory()
    if total is None:                                  # not a POSIX system: no check
        return
    message = (f"{n_topics} topics x {n_words} words need about {needed / 2**30:.1f} GB "
               f"({_TOPIC_MATRICES} matrices of K x W at {itemsize} bytes, the local "
               f"step's tables and {n_samples} topic samples), of {total / 2**30:.1f} GB")
    if needed > total:
        raise MemoryError(message + ": fewer topics, a smaller vocabulary or dtype=float32")
    if needed > total / 2:
        warnings.warn(message, UserWarning)


def _check_step_memory(corpus, batch_size, params):
    """Refuse an in-memory corpus (CSR) whose largest possible minibatch, its ``batch_size``
    longest documents, the local step could not hold (``step_bytes_per_token``)."""
    lengths = np.asarray(corpus.sum(axis=1), dtype=np.float64).ravel()
    batch_size = min(batch_size, lengths.size)
    lengths = np.partition(lengths, lengths.size - batch_size)[-batch_size:]
    check_token_memory(lengths.sum(),
                       step_bytes_per_token(params["n_gibbs"] - params["gibbs_burn_in"]),
                       what=f"a minibatch of {batch_size} documents can hold",
                       hint=": a smaller batch_size, or long documents split in parts")


def _fixed_sampler_class(name, sampler, doc):
    """A subclass of LDA whose ``sampler`` defaults to ``sampler``.

    Its ``__init__`` carries LDA's explicit signature (only that default changes), which is what
    scikit-learn's get_params, clone and estimator checks read.
    """
    signature = inspect.signature(LDA.__init__)
    signature = signature.replace(parameters=[
        p.replace(default=sampler) if p.name == "sampler" else p
        for p in signature.parameters.values()])

    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        LDA.__init__(*bound.args, **bound.kwargs)

    __init__.__signature__ = signature
    entry = '    sampler : {"scir", "sgrld"}, default "scir"\n        Simplex sampler for the topics.'
    parameters = LDA.__doc__.split("\n\n", 1)[1]
    parameters = parameters.replace(entry, f'    sampler : "{sampler}"\n        Fixed for this '
                                           "class; ``LDA(sampler=...)`` takes the others.")
    return type(name, (LDA,), {"__init__": __init__, "__module__": __name__,
                               "__doc__": doc + "\n\n" + parameters, "_fixed_sampler": sampler})


SCIRLDA = _fixed_sampler_class(
    "SCIRLDA", "scir", "``LDA(sampler='scir')``: topics sampled by the stochastic CIR process.")
SGRLDLDA = _fixed_sampler_class(
    "SGRLDLDA", "sgrld", "``LDA(sampler='sgrld')``: topics sampled by SGRLD (Patterson & Teh 2013).")
