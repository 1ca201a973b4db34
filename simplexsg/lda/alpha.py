"""SGLD-CV for the documents' topic prior of LDA: the Dirichlet parameter alpha, learned.

The LDA loop (``LDA(learn_doc_topic_prior=True)``) keeps one ``DocTopicPriorSampler`` and, at
every step, hands it the minibatch's doc-topic counts after the last Gibbs sweep and asks for
one Langevin step of ``u = log alpha``::

    sampler = DocTopicPriorSampler(n_topics=K, n_documents=D, symmetric=True,
                                   prior=GammaPrior(1.0, 1.0), initial=0.1)
    sampler.update_counts(doc_indices, counts.doc_topic_last)  # (n,) global ids, (n, K) n_dk
    sampler.recentre()                                    # after the first minibatches, and at
                                                          # the end of each burn-in pass
    alpha = sampler.step(doc_indices, rng)                # one SGLD-CV step; alpha (K,)
    sampler.alpha                                         # the current alpha (K,)

``step(doc_indices, rng, counts=...)`` does the update and the step in one call, and recentres
by itself if no centre has been set yet. Documents are identified by a global index in
``0 .. D-1``; each is remembered with its latest counts.

**Model.** ``u`` has shape (1,) (symmetric: alpha_k = exp(u) for every topic) or (K,) (per
topic: alpha_k = exp(u_k)); its posterior is the prior on alpha (``simplexsg.lda.alpha_priors``;
``GammaPrior`` and ``LogNormalPrior``) times the Dirichlet-multinomial likelihood of each
document's topic counts (``simplexsg.lda.alpha_likelihood``, which also says which counts LDA
passes and the bias of averaged ones).

**Gradient estimate: SGLD-CV with a running full-data gradient.** The sampler stores, for
every document d it has been given (``update_counts``), its latest counts and its gradient
g_d(u_hat) at the centre u_hat, and the sum G = sum_d g_d(u_hat). Replacing a document's
counts updates G by subtraction and addition, so a step costs O(batch K), not O(D K). With
n_seen documents stored, the full-data gradient is estimated by scaling to D
(``full_gradient``: prior + (D / n_seen) * sum over the stored documents), and the estimate at u
on the minibatch S of n stored documents is::

    grad log p(u) + (D / n_seen) G + (D / n) sum_{d in S} [g_d(u) - g_d(u_hat)]

unbiased for ``full_gradient(u)`` over S drawn uniformly from the stored documents, and exact
(zero noise, bit for bit) at u = u_hat. (Baker et al. 2019's SGLD-CV; the stored g_d(u_hat) are
SAGA's table, but at a fixed centre.) Inside LDA the counts of S are replaced just before
the step, so G always reflects each document's latest counts. Built from the parts of
``simplexsg.sgmcmc``: the model ``alpha_likelihood.DocTopicCountsModel``, the estimator
``sgmcmc.gradients.StoredControlVariate`` and the ``SGLD`` integrator's step.

**Cost.** Memory O(D K): the latest counts of every stored document (float64) and its
gradient at the centre. A step: O(batch K) digammas. ``update_counts``: O(batch K).

**Centre.** ``recentre()`` moves the centre to the mode of the log posterior over the stored
counts (scaled to D), found by trust-region Newton from the current u
(``simplexsg.lda.alpha_posterior``, which gives its cost), and recomputes every stored g_d
(O(n_seen K)). Meant for the first minibatches and the end of each pass of burn-in. The first
centre also moves the chain to it (as SGLD-CV starts at the centre); later ones do not, unless
asked.

**Step size** follows ``simplexsg.sgmcmc``: h is the diffusion time of a step, drift
``h * grad log pi`` and noise variance ``2 h``::

    u <- u + h * grad_est(u) + sqrt(2 h) * xi,      xi ~ N(0, I)

(Welling & Teh's and Baker et al.'s epsilon is 2 h). The default is ``h = step_scale / L``
with ``step_scale = STEP_SCALE = 0.1`` (as ``simplexsg.sgmcmc.regression_defaults``) and L the
largest eigenvalue of the Hessian of -log posterior in u at the centre, recomputed at each
``recentre``; h L = 0.1 makes the Euler chain's stationary variance about 1 / (1 - h L / 2) =
1.05 times the posterior variance (Gaussian case: 2.6% on the sd).
"""
import numpy as np

from .._random import check_generator
from .._validation import as_float_array, check_int, check_positive_scalar
from ..sgmcmc import SGLD, LangevinState
from ..sgmcmc.gradients import StoredControlVariate
from .alpha_likelihood import CountsSummary, DocTopicCountsModel
from .alpha_posterior import posterior_mode, posterior_terms
from .alpha_priors import check_prior

__all__ = ["STEP_SCALE", "DocTopicPriorSampler"]

#: Default step h = STEP_SCALE / L (module docstring), as in
#: ``simplexsg.sgmcmc.regression_defaults``.
STEP_SCALE = 0.1


class DocTopicPriorSampler:
    """SGLD-CV chain of u = log alpha for LDA's doc-topic prior (module docstring).

    Parameters
    ----------
    n_topics : int >= 1
        K.
    n_documents : int >= 1
        D, the corpus size: documents are indexed 0 .. D-1 and sums are scaled to D.
    symmetric : bool, default True
        One alpha shared by the K topics (u of shape (1,)), or one per topic (u of shape (K,)).
    prior : GammaPrior, LogNormalPrior or (shape, rate), default GammaPrior(1, 1)
        Prior of each alpha entry (``simplexsg.lda.alpha_priors``); a pair is a Gamma prior.
    initial : float or (K,) array, default 0.1
        Starting alpha (> 0), used until the first ``recentre``; a per-topic sampler also
        takes a (K,) array, a symmetric one a scalar.
    step_size : float, default None
        Fixed h; None: ``step_scale / L`` at each centre.
    step_scale : float, default STEP_SCALE (0.1)

    Attributes (read-only properties)
    ---------------------------------
    alpha (K,), log_alpha (p,), centre (p,) or None, step_size_ (h, or None before a
    centre), n_seen (documents with stored counts), running_gradient (G, (p,)).

    Methods
    -------
    update_counts(doc_indices, doc_topic_counts)   store / replace documents' counts
    recentre(move=None, max_iter=100) -> centre    mode of the posterior; new g_d, G and h
    step(doc_indices, random_state, counts=None) -> alpha (K,)    one SGLD-CV step
    gradient_estimate(doc_indices, log_alpha=None) -> (p,)       the step's gradient estimate
    log_posterior / full_gradient / hessian(log_alpha=None)      exact, over the stored counts

    Plain numpy state: picklable, and a pickled copy continues the chain identically.
    """

    def __init__(self, n_topics, n_documents, *, symmetric=True, prior=(1.0, 1.0),
                 initial=0.1, step_size=None, step_scale=STEP_SCALE):
        self.n_topics = check_int("n_topics", n_topics, 1)
        self.n_documents = check_int("n_documents", n_documents, 1)
        if not isinstance(symmetric, (bool, np.bool_)):
            raise ValueError(f"symmetric must be True or False, got {symmetric!r}")
        self.symmetric = bool(symmetric)
        self.prior = check_prior(prior)
        self.step_scale = check_positive_scalar("step_scale", step_scale)
        self.fixed_step_size = (None if step_size is None
                                else check_positive_scalar("step_size", step_size))
        p = 1 if self.symmetric else self.n_topics
        init = as_float_array("initial", initial)
        if init.ndim == 0:
            init = np.full(p, float(init))
        if init.shape != (p,):
            allowed = "a scalar" if self.symmetric else f"a scalar or of shape ({p},)"
            raise ValueError(f"initial must be {allowed} for a "
                             f"{'symmetric' if self.symmetric else 'per-topic'} prior, got shape "
                             f"{init.shape}")
        if not (np.all(np.isfinite(init)) and np.all(init > 0)):
            raise ValueError(f"initial must be finite and > 0, got {init}")
        self._u = np.log(init)
        self._h = self.fixed_step_size
        self._counts = np.zeros((self.n_documents, self.n_topics))
        self._lengths = np.zeros(self.n_documents)             # N_d of the stored counts
        self._model = DocTopicCountsModel(self.prior, p)
        self._cv = StoredControlVariate(self.n_documents, p, self.n_documents)

    # ---------------------------------------------------------------- properties
    @property
    def alpha(self):
        """Current alpha, (K,)."""
        if self.symmetric:
            return np.full(self.n_topics, np.exp(self._u[0]))
        return np.exp(self._u)

    @property
    def log_alpha(self):
        """Current u = log alpha, (p,)."""
        return self._u.copy()

    @property
    def centre(self):
        return None if self._cv.centre is None else self._cv.centre.copy()

    @property
    def step_size_(self):
        return self._h

    @property
    def n_seen(self):
        return self._cv.n_seen

    @property
    def running_gradient(self):
        """G = sum over the stored documents of g_d(centre), (p,) (zeros before a centre)."""
        return self._cv.running_sum.copy()

    # ---------------------------------------------------------------- checks
    def _check_indices(self, doc_indices, *, unique=True, seen=False):
        try:
            idx = np.asarray(doc_indices)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"doc_indices must be an array of ints: {exc}") from None
        if idx.ndim != 1 or idx.size == 0:
            raise ValueError(f"doc_indices must be a non-empty 1-d array of ints, got shape "
                             f"{idx.shape}")
        if idx.dtype.kind not in "iu":
            if idx.dtype.kind == "f" and np.all(np.isfinite(idx)) and np.all(idx == np.round(idx)):
                idx = idx.astype(np.int64)
            else:
                raise ValueError(f"doc_indices must hold ints, got dtype {idx.dtype}")
        if idx.min() < 0 or idx.max() >= self.n_documents:
            bad = (idx < 0) | (idx >= self.n_documents)
            raise ValueError(f"doc_indices must lie in 0 .. n_documents-1 = "
                             f"{self.n_documents - 1}; found {idx[bad][0]}")
        idx = idx.astype(np.intp, copy=False)
        if unique and len(np.unique(idx)) != len(idx):
            raise ValueError("doc_indices has repeated documents (update_counts needs each "
                             "document once)")
        if seen and not self._cv.seen[idx].all():
            raise ValueError(f"doc_indices: document {idx[~self._cv.seen[idx]][0]} has no stored "
                             "counts (call update_counts first, or pass counts)")
        return idx

    def _check_counts(self, counts, n):
        arr = as_float_array("doc_topic_counts", counts)
        if arr.shape != (n, self.n_topics):
            raise ValueError(f"doc_topic_counts must have shape ({n}, {self.n_topics}) "
                             f"(documents, topics), got {arr.shape}")
        bad = ~np.isfinite(arr) | (arr < 0)
        if bad.any():
            i, k = (int(j) for j in np.argwhere(bad)[0])
            raise ValueError(f"doc_topic_counts must be finite and >= 0; found {arr[i, k]} at "
                             f"row {i}, topic {k}")
        return arr

    def _check_u(self, u):
        if u is None:
            return self._u
        u = as_float_array("log_alpha", u)
        if u.ndim == 0:
            u = u[None]
        if u.shape != self._u.shape or not np.all(np.isfinite(u)):
            raise ValueError(f"log_alpha must be finite with shape {self._u.shape}, got "
                             f"{u.shape}")
        return u

    # ---------------------------------------------------------------- counts and centre
    def update_counts(self, doc_indices, doc_topic_counts):
        """Store the (averaged) doc-topic counts of documents ``doc_indices`` (n,) given as
        ``doc_topic_counts`` (n, K), replacing earlier counts; updates G in O(n K)."""
        idx = self._check_indices(doc_indices)
        counts = self._check_counts(doc_topic_counts, len(idx))
        lengths = counts.sum(axis=1)
        self._cv.store(self._model, idx, (counts, lengths))
        self._counts[idx] = counts
        self._lengths[idx] = lengths

    def _stored(self):
        """(counts, lengths) of the stored documents, in index order."""
        return self._counts[self._cv.seen], self._lengths[self._cv.seen]

    def _summary(self):
        return CountsSummary(*self._stored())

    def _posterior_terms(self, u, order):
        """log_posterior at u and, up to ``order``, its gradient and Hessian."""
        self._require_counts()
        return posterior_terms(u, self.prior, self._summary(), self._scale(), order)

    def log_posterior(self, log_alpha=None):
        """log p(u) + (D / n_seen) sum over the stored documents of log p(n_d | alpha), up to
        a constant."""
        return self._posterior_terms(self._check_u(log_alpha), 0)[0]

    def full_gradient(self, log_alpha=None):
        """Gradient in u of ``log_posterior``, computed from scratch over the stored counts."""
        return self._posterior_terms(self._check_u(log_alpha), 1)[1]

    def hessian(self, log_alpha=None):
        """Hessian in u of ``log_posterior``, (p, p)."""
        return self._posterior_terms(self._check_u(log_alpha), 2)[2]

    def _scale(self):
        return self.n_documents / self._cv.n_seen

    def _require_counts(self):
        if self._cv.n_seen == 0:
            raise ValueError("no document counts stored yet: call update_counts first")

    def recentre(self, move=None, max_iter=100):
        """Move the centre to the mode of ``log_posterior`` (trust-region Newton from the
        current u), recompute every stored g_d and G, and (unless ``step_size`` was fixed) the
        step h = step_scale / L. ``move``: also set u to the centre (None: only for the first
        centre). Returns the centre (p,). Cost: O(non-zero stored counts) per Newton iteration
        (about 5 to 10), then O(n_seen K) for the g_d."""
        self._require_counts()
        max_iter = check_int("max_iter", max_iter, 1)
        if move is not None and not isinstance(move, (bool, np.bool_)):
            raise ValueError(f"move must be None, True or False, got {move!r}")
        first = self._cv.centre is None
        centre, neg_hess = posterior_mode(self.prior, self._summary(), self._scale(), self._u,
                                          max_iter)
        self._cv.set_centre(self._model, centre, self._stored())
        if self.fixed_step_size is None:
            L = float(np.max(np.abs(np.linalg.eigvalsh(neg_hess))))
            if not np.isfinite(L) or L <= 0:
                raise FloatingPointError(f"recentre: the curvature at the centre is {L}")
            self._h = self.step_scale / L
        if move or (move is None and first):
            self._u = centre.copy()
        return centre.copy()

    # ---------------------------------------------------------------- the chain
    def gradient_estimate(self, doc_indices, log_alpha=None):
        """The SGLD-CV estimate of ``full_gradient(u)`` from the stored documents
        ``doc_indices`` (module docstring); needs a centre. (p,)."""
        if self._cv.centre is None:
            raise ValueError("no centre yet: call recentre() first")
        idx = self._check_indices(doc_indices, unique=False, seen=True)
        return self._estimate(self._check_u(log_alpha), idx)

    def _estimate(self, u, idx):
        return self._cv.estimate(self._model, u, idx, (self._counts[idx], self._lengths[idx]))

    def step(self, doc_indices, random_state, counts=None):
        """One SGLD-CV step of u on the minibatch ``doc_indices``; returns alpha (K,).

        ``doc_indices`` must have stored counts and may repeat (a minibatch drawn with
        replacement). ``counts`` (n, K): store these counts for the documents first
        (``update_counts``; the indices must then be distinct).
        Without a centre yet, ``recentre()`` runs first (and moves u to the centre).
        ``random_state``: a numpy Generator (advanced), int or SeedSequence.
        """
        rng = (random_state if isinstance(random_state, np.random.Generator)
               else check_generator(random_state))
        if counts is not None:
            self.update_counts(doc_indices, counts)
        idx = self._check_indices(doc_indices, unique=False, seen=True)
        if self._cv.centre is None:
            self.recentre()
        h = self._h
        u = SGLD(h).step(LangevinState(self._u), self._estimate(self._u, idx), h, rng).theta
        if not np.all(np.isfinite(u)):
            raise FloatingPointError(f"the log alpha chain diverged ({u}); step size {h}")
        self._u = u
        return self.alpha

    def __repr__(self):
        kind = "symmetric" if self.symmetric else "per-topic"
        return (f"DocTopicPriorSampler(n_topics={self.n_topics}, n_documents={self.n_documents}, "
                f"{kind}, prior={self.prior!r}, n_seen={self.n_seen}, alpha={self.alpha})")
