"""Latent Dirichlet allocation by stochastic-gradient MCMC on the topics (SCIR or SGRLD).

Each step takes a minibatch of documents, runs the local Gibbs kernel on their topic assignments
with the topics fixed (``simplexsg.gibbs``), and moves every topic row with the simplex sampler
(``simplexsg.simplex``) using the estimated full-data counts ``(D / batch) * mean n_kw``.
"""
import copy
import inspect
import os
import warnings
from time import perf_counter

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from . import metrics
from ._estimator import restore_on_error
from ._optional import tqdm
from .averaging import TailAverage
from ._random import seed_sequence, substream
from ._validation import check_int, check_n_jobs, check_positive_scalar
from .corpus import BowStream, as_corpus, check_counts, is_bow_corpus
from .gibbs import AssignmentStore, fold_in, gibbs_topic_counts
from .hyperparameters import DocTopicPriorSampler, GammaPrior
from .schedules import Polynomial
from .simplex import SCIR, SGRLD, to_simplex
from .stopping import Plateau

#: Step-size schedule defaults per sampler, h_t = step_size (1 + t / step_offset)^-step_decay.
#: SCIR: the SCIR paper's offset and decay for LDA, with step 2.0 instead of its 0.5.
#: Bundled corpus, K = 20, alpha 0.1, 3 seeds, medians (Gibbs fold-in perplexity; tomotopy
#: 3962 / 3589): step 0.5 -> 4050 (beta 0.01) / 3616 (beta 0.1); 1.0 -> 3895 / 3540;
#: 2.0 -> 3833 / 3461; 4.0 -> 3778 / 3442. Larger steps forget the previous state faster (the
#: chain averages fewer minibatches); 2.0 takes most of the gain and keeps e^-h_t >= 0.13 at
#: t >= 0 and ~0.5 after 200 steps. SGRLD: Patterson & Teh's offset and decay; their step 0.01
#: gives 4392 on the bundled corpus, 0.1 gives 3891 (best of 0.001, 0.01, 0.05, 0.1, 0.3 at
#: alpha = beta = 0.1).
SAMPLER_DEFAULTS = {
    "scir": dict(cls=SCIR, step_size=2.0, step_offset=10.0, step_decay=0.33),
    "sgrld": dict(cls=SGRLD, step_size=0.1, step_offset=1000.0, step_decay=0.6),
}

#: Defaults of the training schedule, chosen on the tuning corpora of ``benchmarks/lda_study.py``
#: (news, fortunes, the bundled Wikipedia sample, a synthetic Zipf corpus; K 20-200, beta 0.01
#: and 0.1) and checked on the others; the README's study table has the results.
#: What the study showed:
#:
#: * passes over the corpus (local sweeps per token), not steps, set the quality: on news
#:   (K 50) 8 passes give perplexity 2438 whether in 32, 56 or 112 steps, 16 passes 2409;
#: * so minibatches are large, ``ceil(D / STEPS_PER_PASS)`` documents: few global steps,
#:   each O(K V), per pass. A whole-corpus batch mixes badly (fortunes: 2529 against 2404
#:   at D / 3), since the minibatch noise is what lets the topics move;
#: * a few sweeps per visit, more passes: 6 sweeps (2 discarded) for 20 passes beat 10 (5
#:   discarded) for 8 at equal time on every tuning corpus;
#: * warm starts of the local chain (``local_warm_start``) do not help: within seed noise and
#:   slightly worse on all three (news 2445 / 2438 cold, fortunes 2452 / 2447, Wikipedia
#:   3518 / 3465 at 8 passes), and with 3 sweeps per visit a warm chain can persist in a worse
#:   mode: the restarted chain decorrelates the counts of successive visits;
#: * 20 passes reach tomotopy's perplexity after 200 iterations on the tuning corpora, most
#:   in less time. No fixed number suits every corpus: on the held-out check, the short
#:   glosses of a dictionary (7.6 tokens a document) need about 40 (K 50, beta 0.01: 3112 after
#:   20 passes, 2783 after 40, tomotopy 2829 after 200 iterations). ``tol=1e-3`` (the
#:   convergence check after the default passes) finds that by itself (56 passes, 2709), but
#:   as a default it would add 25-100% to the time of the tuning corpora for 1-6% of
#:   perplexity, so it is an option.
#:
#: ``fit`` with ``max_iter=None`` makes ``max(DEFAULT_PASSES, ceil(MIN_STEPS / steps per
#: pass))`` passes (a corpus of one or two minibatches still takes MIN_STEPS steps), or up to
#: MAX_PASSES when ``tol`` or ``max_time`` decides when to stop.
DEFAULT_PASSES, MIN_STEPS, MAX_PASSES = 20, 60, 100
MIN_BATCH, STEPS_PER_PASS = 50, 3
#: Documents sampled from the training corpus whose completion perplexity the convergence
#: check follows (when no ``X_heldout`` is given): at least ``min(MONITOR_TOKENS,
#: MONITOR_FRACTION * tokens)`` tokens, so that a check costs a small part of a pass.
MONITOR_TOKENS, MONITOR_FRACTION = 20_000, 0.05
#: Default local sweeps per visit, and how many of them are discarded.
DEFAULT_SWEEPS, DEFAULT_SWEEP_BURN_IN = 6, 2

#: ``partial_fit``'s corpus size D when neither ``total_samples`` nor a fit gives it: the
#: default ``total_samples`` of scikit-learn's LatentDirichletAllocation.
DEFAULT_TOTAL_SAMPLES = 1_000_000

#: Gibbs sweeps (and how many are discarded) of the fold-in behind ``transform``, ``score``
#: and ``perplexity``: more than a training step needs, since a test document has one chance.
FOLD_IN_SWEEPS, FOLD_IN_BURN_IN = 100, 50

# Namespaces of the random streams derived from the estimator's SeedSequence.
_GIBBS, _GLOBAL, _ORDER, _INIT, _EVAL, _ALPHA, _MONITOR = range(7)

#: Gibbs sweeps (discarded) of the cheaper fold-in behind the convergence check.
MONITOR_SWEEPS, MONITOR_BURN_IN = 20, 10


def default_passes(steps_per_pass):
    """``max_iter=None``: ``max(DEFAULT_PASSES, ceil(MIN_STEPS / steps_per_pass))`` passes."""
    return max(DEFAULT_PASSES, -(-MIN_STEPS // steps_per_pass))


def default_batch_size(n_documents):
    """``batch_size=None``: ``max(MIN_BATCH, ceil(D / STEPS_PER_PASS))`` documents."""
    return max(MIN_BATCH, -(-n_documents // STEPS_PER_PASS))


#: ``learn_doc_topic_prior``: the alpha sampler's centre is re-optimised (and the chain moved
#: to it) after each of the first ALPHA_WARMUP_STEPS steps, from the counts stored so far.
ALPHA_WARMUP_STEPS = 5

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
        None: ``max(50, ceil(D / 3))``: three steps per pass (``default_batch_size``; the
        reasoning is at ``DEFAULT_PASSES`` in this module).
    step_size, step_offset, step_decay : float, default None (per sampler, ``SAMPLER_DEFAULTS``)
        Schedule h_t = step_size (1 + t / step_offset)^-step_decay over the steps t = 0, 1, ...;
        h is the diffusion time of a step (``simplexsg.simplex`` docstring).
    n_gibbs : int, default 6
        Gibbs sweeps per document per training step, after a sequential start or a warm
        start (``transform`` and ``perplexity`` run ``FOLD_IN_SWEEPS`` = 100, 50 discarded).
    gibbs_burn_in : int, default None (min(2, n_gibbs // 2))
        Sweeps discarded before the counts are averaged.
    max_iter : int, default None
        Passes over the training documents in ``fit``, at most. None: 20 (``DEFAULT_PASSES``;
        more if that makes fewer than 60 steps); with ``tol`` or ``max_time``, up to 100
        (``MAX_PASSES``), and ``tol`` then lets the fit stop only after those 20 passes.
    burn_in : int, default None
        Steps after which the topic samples are averaged into ``components_``. None: half of the
        steps when ``fit`` knows how many it will take (no ``tol``, no ``max_time``, a corpus
        of known size); otherwise, and for ``partial_fit``, the doubling rule of
        ``simplexsg.averaging``: whenever the chain stops, the average covers more than its
        last half and at most its last three quarters.
    total_samples : int, default None
        Corpus size D for the count scaling D / batch. None: the number of documents ``fit``
        trains on; for a first ``partial_fit``, 10^6 with a warning (scikit-learn's default).
    local_topics : {"mean", "sample"}, default "mean"
        Topics the local Gibbs step conditions on. "sample": the current sample, the exact
        SG-MCMC scheme of the paper. "mean": the normalised conditional mean of the last step,
        ``E[theta_t | theta_{t-1}, counts]`` (SCIR: ``theta e^-h + (beta + counts)(1 - e^-h)``).
        At small ``topic_word_prior`` the exact samples put most words near 1e-40 in most
        topics, so the local step can never move a word to a new topic and the chain sticks; the
        mean keeps every word reachable, like collapsed Gibbs' ``(n_kw + beta) / (n_k + W beta)``.
        It is an approximation: the local step no longer conditions on a sample.
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
        doubling rule, recomputed after each pass without moving the chain.
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
        (the reasoning at ``DEFAULT_PASSES``). A streamed corpus always starts cold.
    max_time : float, default None
        Training budget in seconds: ``fit`` stops at the end of the first step that reaches it
        (so it overruns by less than one step); evaluations (``evaluate_every``, the
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
        corpora that converge slowly (many short documents: ``DEFAULT_PASSES``).
    n_iter_no_change : int, default 3
        Scores without progress before the convergence check stops ``fit``.
    n_jobs : int or None, default 1
        Threads of the Gibbs kernel and the global step (joblib's convention: None is 1, -1 all
        cores). Results do not depend on it.
    random_state : None, int, or numpy SeedSequence, Generator or RandomState
        Every draw derives from it: same value and data, same result, bit for bit.
    verbose : int, default 0
        1: a progress bar (needs tqdm); 2: also a line per evaluation.
    evaluate_every : int, default 0
        Steps between held-out perplexity evaluations recorded in ``history_`` (0 or -1:
        never).

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
    stop_reason_ : why ``fit`` stopped: "max_iter", "max_time" or "converged".
    training_seconds_ : seconds ``fit`` spent training (evaluations excluded).
    monitor_history_ : list of dicts (step, perplexity) of the convergence check.
    burn_in_ : the first step averaged into ``components_``.
    batch_size_ : documents per minibatch of ``fit``; total_samples_ : the corpus size D.
    n_documents_seen_ : documents passed through the local step.
    history_ : list of dicts (step, documents, seconds, perplexity): every ``evaluate_every``
        steps of ``fit``, the document-completion perplexity of ``components_`` so far on
        ``X_heldout``, or on the training documents themselves when none is given (then an
        in-sample figure; nothing for a stream without ``X_heldout``); seconds count training
        only, not the evaluations.
    doc_topic_prior_ : float, or (K,) with ``learn_doc_topic_prior="per_topic"``
        The alpha of ``transform`` and ``perplexity``: ``doc_topic_prior``, or when learned the
        posterior mean of the alpha samples of the steps from ``burn_in_`` on (the current
        sample if there is none yet).
    doc_topic_prior_samples_ : (n_batch_iter_, K) or None
        With ``learn_doc_topic_prior``, the alpha sample after each step (row t: the alpha
        of step t + 1's local step); None otherwise.
    """

    def __init__(self, n_components=10, *, sampler="scir", doc_topic_prior=None,
                 topic_word_prior=None, batch_size=None, step_size=None, step_offset=None,
                 step_decay=None, n_gibbs=6, gibbs_burn_in=None, max_iter=None, burn_in=None,
                 total_samples=None, local_topics="mean", learn_doc_topic_prior=False,
                 doc_topic_prior_prior=(1.0, 1.0), local_warm_start=False, max_time=None,
                 tol=None, n_iter_no_change=3,
                 n_jobs=1, random_state=None, verbose=0, evaluate_every=0):
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
        self.learn_doc_topic_prior = learn_doc_topic_prior
        self.doc_topic_prior_prior = doc_topic_prior_prior
        self.local_warm_start = local_warm_start
        self.max_time = max_time
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.evaluate_every = evaluate_every

    # ---------------------------------------------------------------- parameters
    def _check_params(self):
        """Validate the constructor parameters; return the resolved ones as a dict."""
        if self.sampler not in SAMPLER_DEFAULTS:
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
        params = dict(
            n_components=check_int("n_components", self.n_components),
            alpha=resolved("doc_topic_prior", self.doc_topic_prior, 0.1),
            beta=resolved("topic_word_prior", self.topic_word_prior, 0.1),
            schedule=Polynomial(resolved("step_size", self.step_size, defaults["step_size"]),
                                resolved("step_offset", self.step_offset, defaults["step_offset"]),
                                float(kappa)),
            n_gibbs=n_gibbs,
            gibbs_burn_in=gibbs_burn_in,
            n_jobs=check_n_jobs(self.n_jobs),
            evaluate_every=max(0, check_int("evaluate_every", self.evaluate_every, -1)),
            max_time=(None if self.max_time is None
                      else check_positive_scalar("max_time", self.max_time)),
            n_iter_no_change=check_int("n_iter_no_change", self.n_iter_no_change),
        )
        if not isinstance(self.local_warm_start, (bool, np.bool_)):
            raise ValueError(f"local_warm_start must be True or False, got "
                             f"{self.local_warm_start!r}")
        params["local_warm_start"] = bool(self.local_warm_start)
        tol = self.tol
        if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float))
                                or not 0 <= tol < 1):
            raise ValueError(f"tol must be None or lie in [0, 1), got {tol!r}")
        params["tol"] = None if tol is None else float(tol)
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
        for name in ("batch_size", "max_iter", "burn_in", "total_samples"):
            value = getattr(self, name)
            params[name] = None if value is None else check_int(name, value, 0 if name == "burn_in" else 1)
        return params

    # ---------------------------------------------------------------- fitting
    @restore_on_error
    def fit(self, X, y=None, *, id2word=None, X_heldout=None):
        """Fit the topics to X (counts, or a bag-of-words corpus, possibly streamed).

        Training stops after ``max_iter`` passes, at the end of the first step that reaches
        ``max_time`` seconds, or when the convergence check (``tol``) sees no progress,
        whichever comes first; ``stop_reason_`` says which. A failed call leaves the model as
        it was.

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
        params = self._check_params()
        corpus = self._read(X, id2word, reset=True)
        seed = seed_sequence(self.random_state)
        heldout = self._read(X_heldout, None, reset=False) if X_heldout is not None else None
        if isinstance(heldout, BowStream):
            raise TypeError("X_heldout must be a matrix or a list of documents, not a stream")
        n_docs = corpus.n_documents if isinstance(corpus, BowStream) else corpus.shape[0]
        D = params["total_samples"] or n_docs
        if isinstance(corpus, BowStream) and D is None:
            raise ValueError("a streamed corpus without len() needs total_samples")
        self._init_state(params, corpus_features=self.n_features_in_, seed=seed, n_documents=D)
        batch_size = params["batch_size"] or default_batch_size(D)
        steps_per_pass = -(-(n_docs or D) // batch_size)
        open_ended = params["tol"] is not None or params["max_time"] is not None
        passes = params["max_iter"] or (MAX_PASSES if open_ended
                                         else default_passes(steps_per_pass))
        if D < min(batch_size, n_docs or batch_size):
            raise ValueError(f"total_samples ({D}) is below batch_size ({batch_size}): the "
                             "minibatch counts would be scaled by D / batch < 1")
        if params["burn_in"] is not None and params["burn_in"] >= passes * steps_per_pass:
            warnings.warn(f"burn_in={params['burn_in']} is not below the {passes * steps_per_pass}"
                          " steps of fit: components_ will be the last step's topics, not an "
                          "average", UserWarning)
        min_passes = 0 if params["max_iter"] else default_passes(steps_per_pass)
        if params["burn_in"] is not None:
            self.burn_in_ = params["burn_in"]
        elif not open_ended and n_docs is not None:
            self.burn_in_ = passes * steps_per_pass // 2
        else:
            self.burn_in_ = None                    # the doubling-block rule of TailAverage
        self._init_averages()
        self.total_samples_, self.batch_size_ = D, batch_size
        monitor = None if params["tol"] is None else ConvergenceMonitor(
            self, _monitor_documents(corpus, heldout, seed), params,
            first_pass=min_passes - params["n_iter_no_change"] - 1)
        if heldout is None and params["evaluate_every"] and not isinstance(corpus, BowStream):
            heldout = corpus
        store = (AssignmentStore(corpus) if params["local_warm_start"]
                 and not isinstance(corpus, BowStream) else None)
        progress = self._progress(None if open_ended else passes * steps_per_pass)
        self.stop_reason_ = "max_iter"
        self.training_seconds_ = 0.0
        for epoch in range(passes):
            if not self._train_pass(corpus, batch_size, epoch, params, store, heldout, progress):
                self.stop_reason_ = "max_time"
                break
            if monitor is not None and monitor.converged(epoch) and epoch + 1 >= min_passes:
                self.stop_reason_ = "converged"
                break
        n_docs = corpus.n_documents if isinstance(corpus, BowStream) else n_docs
        self.n_iter_ = self.n_documents_seen_ // n_docs if n_docs else 0   # complete passes
        if progress is not None:
            progress.close()
        self.monitor_history_ = [] if monitor is None else monitor.history
        self._update_components()
        return self

    @restore_on_error
    def partial_fit(self, X, y=None, *, id2word=None):
        """One step on the minibatch X (all its documents).

        The counts are scaled by D / batch with D the model's ``total_samples_``: after ``fit``
        or earlier calls, the one already used; on a first call, ``total_samples``, or
        scikit-learn's default of 10^6 documents with a warning. A first call with a
        bag-of-words minibatch needs ``id2word`` (it fixes the vocabulary size). A failed call
        (bad input or parameters) leaves the model as it was.

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
        if first:
            total = params["total_samples"]
            if total is None:
                warnings.warn(f"partial_fit without total_samples: the minibatch counts are "
                              f"scaled to a corpus of {DEFAULT_TOTAL_SAMPLES} documents "
                              "(scikit-learn's default); pass total_samples=D", UserWarning)
                total = DEFAULT_TOTAL_SAMPLES
            self._init_state(params, corpus_features=self.n_features_in_,
                             seed=seed_sequence(self.random_state), n_documents=total)
            self.burn_in_ = params["burn_in"]      # None: TailAverage's doubling rule
            self._init_averages()
            self.total_samples_ = total
            self.stop_reason_ = None
        else:
            # the step updates these in place: work on copies, so that a failed call leaves
            # the model as it was (restore_on_error puts the old objects back)
            self._topic_average = copy.copy(self._topic_average)
            self._alpha_average = copy.copy(self._alpha_average)
            if self._alpha_sampler is not None:
                self._alpha_sampler = copy.deepcopy(self._alpha_sampler)
                self._alpha_history = list(self._alpha_history)
        # documents of a stream of minibatches: running position, modulo the corpus size
        doc_indices = np.arange(self.n_documents_seen_, self.n_documents_seen_ + corpus.shape[0])
        self._step(corpus, params, doc_indices)
        self._update_components()
        return self

    def _read(self, X, id2word, reset):
        """Validated corpus (CSR int64 or BowStream); sets n_features_in_ when ``reset``.

        Raises on bad counts, an all-empty corpus when ``reset``, or a vocabulary size that
        differs from the fitted one.
        """
        if not reset:
            check_is_fitted(self, "n_features_in_")
        n_features = len(id2word) if id2word is not None else (
            None if reset else self.n_features_in_)
        if is_bow_corpus(X):
            corpus = as_corpus(X, n_features)
            if reset:
                self.n_features_in_ = (corpus.n_features if isinstance(corpus, BowStream)
                                       else corpus.shape[1])
        else:  # sklearn's checks and messages first (feature count), then the counts'
            corpus = check_counts(validate_data(self, X, accept_sparse="csr", reset=reset))
        if not isinstance(corpus, BowStream):
            if reset and corpus.sum() == 0:
                raise ValueError("X has no tokens: every document is empty")
        if reset:
            if id2word is not None and len(id2word) != self.n_features_in_:
                raise ValueError(f"id2word has {len(id2word)} words but X has "
                                 f"{self.n_features_in_} columns")
            if is_bow_corpus(X) and hasattr(self, "feature_names_in_"):
                del self.feature_names_in_          # a refit without column names
            self.vocabulary_ = (None if id2word is None else
                                np.array([id2word[i] for i in range(len(id2word))], dtype=object))
        return corpus

    def _init_state(self, params, corpus_features, seed, n_documents):
        K, W = params["n_components"], corpus_features
        _check_memory(K, W)
        self.random_state_ = seed
        self.doc_topic_prior_, self.topic_word_prior_ = params["alpha"], params["beta"]
        init = np.random.default_rng(substream(seed, _INIT))
        self.topic_state_ = init.gamma(1.0, size=(K, W))
        self.n_batch_iter_ = 0
        self.n_documents_seen_ = 0
        self.n_iter_ = 0
        self.history_ = []
        self._local = to_simplex(self.topic_state_)
        self._alpha_sampler = None
        self._alpha_history = []
        self.doc_topic_prior_samples_ = None
        if params["learn_alpha"] is not None:
            self._alpha_sampler = DocTopicPriorSampler(
                K, n_documents, symmetric=params["learn_alpha"] == "symmetric",
                prior=params["alpha_prior"], initial=params["alpha"])

    def _train_pass(self, corpus, batch_size, epoch, params, store, heldout, progress):
        """One pass of steps over the corpus; False if it stopped early at ``max_time``."""
        for doc_indices, batch in self._minibatches(corpus, batch_size, epoch):
            start = perf_counter()
            z = self._step(batch, params, doc_indices,
                           None if store is None else store.gather(doc_indices))
            if store is not None:
                store.scatter(doc_indices, z)
            self.training_seconds_ += perf_counter() - start
            self._maybe_evaluate(params, heldout, self.training_seconds_)
            if progress is not None:
                progress.update(1)
            if params["max_time"] is not None and self.training_seconds_ >= params["max_time"]:
                return False
        return True

    def _init_averages(self):
        """Posterior-mean accumulators of the topics and alpha from ``burn_in_`` on (None: the
        doubling-block rule of ``simplexsg.averaging``, for a chain of unknown length)."""
        self._topic_average = TailAverage(self.burn_in_)
        self._alpha_average = TailAverage(self.burn_in_)

    def _minibatches(self, corpus, batch_size, epoch):
        """Yield (global document indices, CSR minibatch)."""
        if isinstance(corpus, BowStream):
            for start, batch in corpus.minibatches(batch_size):
                yield np.arange(start, start + batch.shape[0]), batch
            return
        order = np.random.default_rng(substream(self.random_state_, _ORDER, epoch)) \
            .permutation(corpus.shape[0])
        for start in range(0, len(order), batch_size):
            indices = np.sort(order[start:start + batch_size])
            yield indices, corpus[indices]

    def _step(self, X_batch, params, doc_indices, assignments=None):
        """Local Gibbs step on X_batch, then one simplex-sampler step of every topic (and, when
        learning alpha, one step of the alpha sampler). ``doc_indices``: the documents' global
        indices (taken modulo the corpus size D)."""
        K, W = self.topic_state_.shape
        t = self.n_batch_iter_
        learning = self._alpha_sampler is not None
        alpha = self._alpha_sampler.alpha if learning else self.doc_topic_prior_
        counts = gibbs_topic_counts(
            X_batch, self._local, alpha, n_sweeps=params["n_gibbs"],
            burn_in=params["gibbs_burn_in"], seed=substream(self.random_state_, _GIBBS),
            iteration=t, n_jobs=params["n_jobs"], last_sweep=learning, assignments=assignments)
        if learning:
            self._alpha_step(counts.doc_topic_last, doc_indices, t)
        estimate = np.zeros((K, W))
        estimate[:, counts.word_ids] = (self.total_samples_ / X_batch.shape[0]) * counts.topic_word
        sampler = SAMPLER_DEFAULTS[self.sampler]["cls"](params["schedule"], n_jobs=params["n_jobs"])
        sampler.t = t
        previous = self.topic_state_
        self.topic_state_ = sampler.step(previous, self.topic_word_prior_, estimate,
                                   random_state=np.random.default_rng(
                                       substream(self.random_state_, _GLOBAL, t)))
        self._local = to_simplex(self.topic_state_ if self.local_topics == "sample" else
                                 sampler.conditional_mean(previous, self.topic_word_prior_,
                                                          estimate, sampler.step_size_at(t)))
        self._topic_average.add(t, self._local)
        self.n_batch_iter_ = t + 1
        self.n_documents_seen_ += X_batch.shape[0]
        return counts.assignments

    def _alpha_step(self, last_counts, doc_indices, t):
        """Store the minibatch's last-sweep counts in the alpha sampler, recentre when due
        (``learn_doc_topic_prior`` in the class docstring), take one SGLD-CV step."""
        sampler = self._alpha_sampler
        D = sampler.n_documents
        # a document met twice in one minibatch (indices taken modulo D) keeps its last counts
        reversed_idx = (np.asarray(doc_indices, dtype=np.int64) % D)[::-1]
        idx, first = np.unique(reversed_idx, return_index=True)
        sampler.update_counts(idx, last_counts[::-1][first])
        seen = self.n_documents_seen_
        end_of_pass = (seen + len(doc_indices)) // D > seen // D
        if t < ALPHA_WARMUP_STEPS or (end_of_pass and t < self._alpha_average.start):
            sampler.recentre(move=True)
        elif end_of_pass and not self._alpha_average.fixed:
            sampler.recentre(move=False)       # the chain keeps its state: no jump in the average
        alpha = sampler.step(idx, np.random.default_rng(substream(self.random_state_, _ALPHA, t)))
        self._alpha_history.append(alpha)
        self._alpha_average.add(t, alpha)

    def _update_components(self):
        if not self._topic_average.fixed:
            self.burn_in_ = self._topic_average.start
        mean = self._topic_average.mean()
        self.components_ = self._local if mean is None else mean
        if self._alpha_sampler is not None:
            self.doc_topic_prior_samples_ = np.array(self._alpha_history).reshape(
                -1, self.topic_state_.shape[0])
            alpha = self._alpha_average.mean()
            alpha = self._alpha_sampler.alpha if alpha is None else alpha
            self.doc_topic_prior_ = (float(alpha.mean()) if self._alpha_sampler.symmetric
                                     else alpha)

    def _maybe_evaluate(self, params, heldout, training_seconds):
        """Append (step, documents, training seconds, held-out perplexity) to ``history_``."""
        every = params["evaluate_every"]
        if not every or heldout is None or self.n_batch_iter_ % every:
            return
        self._update_components()
        entry = dict(step=self.n_batch_iter_, documents=self.n_documents_seen_,
                     seconds=training_seconds, perplexity=self.perplexity(heldout))
        self.history_.append(entry)
        if self.verbose >= 2:
            print(f"step {entry['step']}: {entry['documents']} documents, "
                  f"{entry['seconds']:.1f} s, held-out perplexity {entry['perplexity']:.1f}")

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def _progress(self, total):
        if not self.verbose:
            return None
        return tqdm()(total=total, desc=f"{self.sampler.upper()}-LDA", unit="step")

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
            Non-negative integer counts (not a stream).

        Returns
        -------
        ndarray (n_docs, n_components), rows summing to 1
        """
        check_is_fitted(self, "components_")
        X = self._read(X, None, reset=False)
        if isinstance(X, BowStream):
            raise TypeError("transform takes a matrix or a list of documents, not a stream")
        return self._fold_in(self.components_, self.doc_topic_prior_, X)

    def _fold_in(self, topics, alpha, X):
        """Documents' topic proportions given ``topics`` by the Gibbs kernel (FOLD_IN_SWEEPS)."""
        return fold_in(topics, alpha, X, n_sweeps=FOLD_IN_SWEEPS, burn_in=FOLD_IN_BURN_IN,
                       seed=substream(self.random_state_, _EVAL),
                       n_jobs=self._check_params()["n_jobs"])

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
            Non-negative integer counts of the test documents (not a stream).
        y : ignored

        Returns
        -------
        float
        """
        check_is_fitted(self, "components_")
        X = self._read(X, None, reset=False)
        if isinstance(X, BowStream):
            raise TypeError("score and perplexity take a matrix or a list of documents, not a "
                            "stream: pass a sample of the corpus (e.g. list(islice(corpus, n)))")
        observed, heldout = metrics.completion_split(X, random_state=0)
        result = metrics.document_completion_score(self.components_, self.doc_topic_prior_,
                                                   observed, heldout, fold_in=self._fold_in)
        return result.log_likelihood / result.n_tokens

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        tags.input_tags.categorical = True  # integer counts: the checks then feed integer data
        return tags


#: K x W float64 arrays alive at once at the peak of a step (the previous and the new state,
#: the local topics and components_, the two sums of the average, the step's estimate, its
#: conditional mean and their temporaries): the memory check counts these.
_TOPIC_MATRICES = 10


def _check_memory(n_topics, n_words):
    """Refuse a topic matrix whose working set exceeds the machine's memory; warn above half."""
    needed = _TOPIC_MATRICES * 8.0 * n_topics * n_words
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):     # not a POSIX system: no check
        return
    message = (f"{n_topics} topics x {n_words} words need about {needed / 2**30:.1f} GB "
               f"({_TOPIC_MATRICES} float64 matrices of K x W), of {total / 2**30:.1f} GB")
    if needed > total:
        raise MemoryError(message + ": fewer topics or a smaller vocabulary")
    if needed > total / 2:
        warnings.warn(message, UserWarning)


def _monitor_documents(corpus, heldout, seed):
    """The convergence check's documents: ``heldout`` if given, else documents of the corpus
    in a seeded random order up to ``min(MONITOR_TOKENS, MONITOR_FRACTION * tokens)`` tokens
    (a stream: its first documents up to MONITOR_TOKENS tokens)."""
    if heldout is not None:
        return heldout
    if isinstance(corpus, BowStream):
        return corpus.head(MONITOR_TOKENS)
    order = np.random.default_rng(substream(seed, _MONITOR, 0)).permutation(corpus.shape[0])
    lengths = np.asarray(corpus.sum(axis=1)).ravel()[order]
    n_tokens = min(MONITOR_TOKENS, MONITOR_FRACTION * lengths.sum())
    n = int(np.searchsorted(np.cumsum(lengths), n_tokens)) + 1
    return corpus[np.sort(order[:n])]


class ConvergenceMonitor:
    """The convergence check of ``LDA.fit`` (``tol``, ``n_iter_no_change``).

    ``converged(epoch)`` scores the current ``components_`` (the running posterior mean) on the
    monitor documents by document completion, folded in by a cheaper Gibbs fold-in
    (``MONITOR_SWEEPS``, ``MONITOR_BURN_IN``) with the same random streams each time, so that
    successive scores differ by the model only, and says whether ``n_iter_no_change`` successive
    scores failed to beat the best one before them by the fraction ``tol``
    (``simplexsg.stopping.Plateau``). ``history``: (step, perplexity) of each score.
    """

    def __init__(self, model, documents, params, first_pass=0):
        self.model, self.n_jobs, self.first_pass = model, params["n_jobs"], first_pass
        self.plateau = Plateau(params["tol"], params["n_iter_no_change"])
        self.observed, self.heldout = metrics.completion_split(documents, random_state=0)
        self.history = []

    def converged(self, epoch):
        """Score the model after pass ``epoch`` (from ``first_pass`` on); True on a plateau."""
        if epoch < self.first_pass:
            return False
        model = self.model
        model._update_components()
        seed = substream(model.random_state_, _MONITOR, 1)

        def gibbs(topics, alpha, X):
            return fold_in(topics, alpha, X, n_sweeps=MONITOR_SWEEPS, burn_in=MONITOR_BURN_IN,
                           seed=seed, n_jobs=self.n_jobs)
        perplexity = metrics.document_completion_score(
            model.components_, model.doc_topic_prior_, self.observed, self.heldout,
            fold_in=gibbs).perplexity
        self.history.append(dict(step=model.n_batch_iter_, perplexity=perplexity))
        if model.verbose >= 2:
            print(f"step {model.n_batch_iter_}: monitor perplexity {perplexity:.1f}")
        return self.plateau.update(perplexity)


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
