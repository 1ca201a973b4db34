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
topic: alpha_k = exp(u_k)). Given alpha, document d's topic counts n_d (K,), of total
N_d = sum_k n_dk, have the Dirichlet-multinomial likelihood (the proportions integrated out;
the multinomial coefficient, free of alpha, dropped)::

    log p(n_d | alpha) = lgamma(A) - lgamma(A + N_d)
                         + sum_k [lgamma(alpha_k + n_dk) - lgamma(alpha_k)]

with A = sum_k alpha_k; its gradient in alpha_k is
``psi(A) - psi(A + N_d) + psi(alpha_k + n_dk) - psi(alpha_k)`` (digamma psi), and in u the
chain rule multiplies it by alpha_k (summed over k in the symmetric case). The prior is on
alpha, independent per topic: ``GammaPrior(shape a, rate b)`` (default a = b = 1, i.e. an
exponential with mean 1: proper, and its density in alpha is within a factor 2.7 of flat over
0.01 .. 1) or ``LogNormalPrior(mean, sd)`` (u ~ N(mean, sd^2)). Densities in u include the
Jacobian d alpha / d u = alpha: the Gamma prior is ``a u - b exp(u)`` + const in u.

**Approximation: which counts.** The likelihood above is for integer counts n_dk, which the
LDA chain only has as samples of its topic assignments. ``LDA`` passes one sample: each
document's n_dk after its last Gibbs sweep (``gibbs.TopicCounts.doc_topic_last``), stored
until the document's next visit. The *average* of n_dk over the kept Gibbs sweeps
(``gibbs.TopicCounts.doc_topic``), a real-valued estimate of E[n_d | words, topics, alpha], is
also accepted (the formulas hold for real counts: lgamma and psi are smooth), but it is
biased: the gradient is non-linear in the
counts, and averaging makes a document's counts smoother (less concentrated on a few topics)
than any sample of them, which looks like a larger alpha, so the learned alpha is too large.
The bias grows with the overlap of the topics (where the assignments are uncertain) and with
the number of sweeps averaged.
``tests/lda/test_hyperparameters.py::test_gibbs_averaged_counts_bias`` measures it with the
true topics and the true alpha = 0.3 (K = 5 topics ~ Dirichlet(0.3) over
50 words, D = 1000 documents of 60 tokens): the mode of alpha is 0.308 from the true
assignments, 0.306 from one Gibbs sample after 50 sweeps, and 0.430 (+40%) from the LDA
default average (10 sweeps, 5 discarded). Exploratory runs on the same design (other seeds;
relative to the mode from the true assignments) gave +26% with sparser topics
(Dirichlet(0.1)), +39% at Dirichlet(0.3) and +62% with flatter topics (Dirichlet(1)); a
single sample after only 5 sweeps of a visit's fresh Gibbs run (sequential start) gave +6%,
+6% and +20%: short runs are biased too. Unbiased alternatives need the per-sweep counts:
pass one sample of a well-mixed Gibbs run (exact for the joint chain of assignments and
alpha), or average the per-sweep gradients instead of the counts (Fisher's identity: the mean
over p(z | words) of grad log p(n(z) | alpha) is the gradient of log p(words | alpha, topics)).

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
``simplexsg.sgmcmc``: the model ``DocTopicCountsModel``, the estimator
``sgmcmc.gradients.StoredControlVariate`` and the ``SGLD`` integrator's step.

**Cost.** Memory O(D K): the latest counts of every stored document (float64) and its
gradient at the centre. A step: O(batch K) digammas. ``update_counts``: O(batch K).

**Centre.** ``recentre()`` maximises the log posterior over the stored counts (scaled to D) by
scipy's trust-region Newton method (exact gradient and Hessian, trigamma terms), from the
current u, and recomputes every stored g_d. Its sums over documents run over the distinct
document lengths and distinct non-zero counts only (Gibbs averages over S sweeps are
multiples of 1 / S); recomputing the g_d is O(n_seen K). Measured: 0.4 to 0.7 s for D = 20,000
documents and K = 100 topics on a loaded 2-core machine. Meant for the first minibatches and
the end of each pass of burn-in. The first centre also moves the chain to it
(as SGLD-CV starts at the centre); later ones do not, unless asked.

**Step size** follows ``simplexsg.sgmcmc``: h is the diffusion time of a step, drift
``h * grad log pi`` and noise variance ``2 h``::

    u <- u + h * grad_est(u) + sqrt(2 h) * xi,      xi ~ N(0, I)

(Welling & Teh's and Baker et al.'s epsilon is 2 h). The default is ``h = step_scale / L``
with ``step_scale = STEP_SCALE = 0.1`` (as ``simplexsg.sgmcmc.regression``) and L the largest
eigenvalue of the Hessian of -log posterior in u at the centre, recomputed at each
``recentre``; h L = 0.1 makes the Euler chain's stationary variance about 1 / (1 - h L / 2) =
1.05 times the posterior variance (Gaussian case: 2.6% on the sd).
"""
import dataclasses
import numbers
import warnings

import numpy as np
from scipy import optimize
from scipy.special import digamma, gammaln, polygamma

from .._random import check_generator
from .._validation import as_float_array, check_int, check_positive_scalar
from ..sgmcmc import SGLD, LangevinState, Model
from ..sgmcmc.gradients import StoredControlVariate

__all__ = ["STEP_SCALE", "GammaPrior", "LogNormalPrior", "DocTopicPriorSampler",
           "doc_log_lik", "doc_grad", "sum_hessian"]

#: Default step h = STEP_SCALE / L (module docstring), as in ``simplexsg.sgmcmc.regression``.
STEP_SCALE = 0.1

#: ``recentre`` keeps u = log alpha within these bounds (alpha in [1e-6, 1e6]).
_U_BOUNDS = (np.log(1e-6), np.log(1e6))
#: ``recentre`` warns if its result is further from the mode than this, in posterior sds
#: (the Newton decrement sqrt(g^T H^-1 g)).
_MAX_DECREMENT = 1e-2


def _trigamma(x):
    return polygamma(1, x)


# ------------------------------------------------------------------------------------------
# Priors on alpha, as densities in u = log alpha (Jacobian included), independent per entry.
# ------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class GammaPrior:
    """alpha ~ Gamma(shape, rate) per entry; in u = log alpha, ``shape * u - rate * exp(u)``."""

    shape: float = 1.0
    rate: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "shape", check_positive_scalar("prior shape", self.shape))
        object.__setattr__(self, "rate", check_positive_scalar("prior rate", self.rate))

    def log_density(self, u):
        """Sum over the entries of u of the log density in u, up to a constant."""
        return float(np.sum(self.shape * u - self.rate * np.exp(u)))

    def grad(self, u):
        return self.shape - self.rate * np.exp(u)

    def hessian_diag(self, u):
        """Diagonal of the Hessian of the log density (the entries are independent)."""
        return -self.rate * np.exp(u)


@dataclasses.dataclass(frozen=True)
class LogNormalPrior:
    """alpha log-normal per entry: u = log alpha ~ N(mean, sd^2). Defaults: median alpha 0.1
    (LDA's default), sd 2 (alpha within 0.002 .. 5.5 at 2 sd)."""

    mean: float = float(np.log(0.1))
    sd: float = 2.0

    def __post_init__(self):
        if isinstance(self.mean, bool) or not isinstance(self.mean, numbers.Real) \
                or not np.isfinite(self.mean):
            raise ValueError(f"prior mean must be a finite number, got {self.mean!r}")
        object.__setattr__(self, "mean", float(self.mean))
        object.__setattr__(self, "sd", check_positive_scalar("prior sd", self.sd))

    def log_density(self, u):
        return float(np.sum(-0.5 * ((u - self.mean) / self.sd) ** 2))

    def grad(self, u):
        return -(u - self.mean) / self.sd ** 2

    def hessian_diag(self, u):
        return np.full(np.shape(u), -1.0 / self.sd ** 2)


def _check_prior(prior):
    if isinstance(prior, (GammaPrior, LogNormalPrior)):
        return prior
    if isinstance(prior, (tuple, list)) and len(prior) == 2:
        return GammaPrior(*prior)
    raise TypeError("prior must be a GammaPrior, a LogNormalPrior or a pair (shape, rate) of a "
                    f"Gamma prior, got {prior!r}")


# ------------------------------------------------------------------------------------------
# Per-document Dirichlet-multinomial terms in u = log alpha; p = u.size is 1 (symmetric) or K.
# ------------------------------------------------------------------------------------------

def _alpha(u, K):
    return np.broadcast_to(np.exp(u), (K,))


def doc_log_lik(log_alpha, counts):
    """Per-document Dirichlet-multinomial log-likelihood (module docstring): (n,).

    ``log_alpha``: (1,) symmetric or (K,) per topic; ``counts``: (n, K) non-negative, real
    counts allowed. The multinomial coefficient (free of alpha) is left out.
    """
    counts = np.asarray(counts, dtype=np.float64)
    alpha = _alpha(np.asarray(log_alpha, dtype=np.float64), counts.shape[1])
    A = alpha.sum()
    return (gammaln(A) - gammaln(A + counts.sum(axis=1))
            + (gammaln(alpha + counts) - gammaln(alpha)).sum(axis=1))


def doc_grad(log_alpha, counts):
    """Per-document gradient of ``doc_log_lik`` in u = log alpha: (n, p)."""
    counts = np.asarray(counts, dtype=np.float64)
    return _doc_grad(np.asarray(log_alpha, dtype=np.float64), counts, counts.sum(axis=1))


def _doc_grad(u, counts, lengths):
    """``doc_grad`` given the documents' lengths N_d (n,). The sampler calls it with stored
    lengths, so a document's gradient at a point is the same bits whenever it is computed."""
    K = counts.shape[1]
    if u.shape[0] == 1:
        a = float(np.exp(u[0]))
        A = K * a
        g = K * (digamma(A) - digamma(A + lengths))
        g += digamma(a + counts).sum(axis=1)
        g -= K * digamma(a)
        g *= a
        return g[:, None]
    alpha = np.exp(u)
    A = alpha.sum()
    g = digamma(alpha + counts)
    g += (digamma(A) - digamma(A + lengths))[:, None]
    g -= digamma(alpha)
    g *= alpha
    return g


def sum_hessian(log_alpha, counts):
    """Hessian in u of ``sum_d doc_log_lik``: (p, p)."""
    u = np.asarray(log_alpha, dtype=np.float64)
    return _sum_terms(u, _Summary(np.asarray(counts, dtype=np.float64)), order=2)[2]


class _Summary:
    """Counts reduced to what the sums over documents need: the distinct document lengths and
    the distinct non-zero (topic, count) pairs, each with its multiplicity (a zero count adds
    nothing to the likelihood or its derivatives). Gibbs averages over S sweeps are multiples
    of 1 / S, so the special functions run on a few thousand values, not on n K."""

    def __init__(self, counts, lengths=None):
        self.n_topics = counts.shape[1]
        if lengths is None:
            lengths = counts.sum(axis=1)
        self.lengths, weights = np.unique(lengths, return_counts=True)
        self.weights = weights.astype(np.float64)
        _, cols = np.nonzero(counts)
        vals = counts[counts != 0]
        order = np.lexsort((vals, cols))
        cols, vals = cols[order], vals[order]
        new = np.ones(len(vals), dtype=bool)
        new[1:] = (cols[1:] != cols[:-1]) | (vals[1:] != vals[:-1])
        starts = np.flatnonzero(new)
        self.cols, self.vals = cols[starts], vals[starts]
        self.mult = np.diff(np.append(starts, len(vals))).astype(np.float64)
        self.n_nonzero = np.bincount(self.cols, self.mult, minlength=self.n_topics)
        # Symmetric case: the distinct values over all topics.
        self.sym_vals, inverse = np.unique(self.vals, return_inverse=True)
        self.sym_mult = np.bincount(inverse, self.mult, minlength=len(self.sym_vals))


def _sum_terms(u, summary, order):
    """(sum_d log-lik, its gradient (p,) if order >= 1, its Hessian (p, p) if order >= 2) in u."""
    K, N, w = summary.n_topics, summary.lengths, summary.weights
    out = []
    if u.shape[0] == 1:
        a = float(np.exp(u[0]))
        A = K * a
        vals, mult = summary.sym_vals, summary.sym_mult
        n_nz = mult.sum()
        out.append(float(w @ (gammaln(A) - gammaln(A + N)) + mult @ gammaln(a + vals))
                   - n_nz * gammaln(a))
        if order >= 1:
            f1 = K * float(w @ (digamma(A) - digamma(A + N))) \
                + float(mult @ digamma(a + vals)) - n_nz * digamma(a)
            out.append(np.array([a * f1]))
        if order >= 2:
            f2 = K * K * float(w @ (_trigamma(A) - _trigamma(A + N))) \
                + float(mult @ _trigamma(a + vals)) - n_nz * _trigamma(a)
            out.append(np.array([[a * f1 + a * a * f2]]))
        return out
    cols, vals, mult, n_nz = summary.cols, summary.vals, summary.mult, summary.n_nonzero
    alpha = np.exp(u)
    A = alpha.sum()
    a_nz = alpha[cols] + vals
    out.append(float(w @ (gammaln(A) - gammaln(A + N)) + mult @ gammaln(a_nz)
                     - n_nz @ gammaln(alpha)))
    if order >= 1:
        g_alpha = (float(w @ (digamma(A) - digamma(A + N)))
                   + np.bincount(cols, mult * digamma(a_nz), minlength=K) - n_nz * digamma(alpha))
        out.append(alpha * g_alpha)
    if order >= 2:
        h_diag = np.bincount(cols, mult * _trigamma(a_nz), minlength=K) - n_nz * _trigamma(alpha)
        H = np.outer(alpha, alpha) * float(w @ (_trigamma(A) - _trigamma(A + N)))
        H[np.diag_indices(K)] += alpha * alpha * h_diag + alpha * g_alpha
        out.append(H)
    return out


@dataclasses.dataclass(frozen=True, eq=False)
class DocTopicCountsModel(Model):
    """The documents' topic counts given u = log alpha, as an ``simplexsg.sgmcmc`` model: the
    prior ``prior`` on alpha (density in u) and the Dirichlet-multinomial terms of the module
    docstring. Data: ``(counts (n, K), lengths (n,))``, lengths the counts' row sums; ``size``
    p is the dimension of u."""

    prior: object
    size: int

    def check_data(self, data):
        return data

    def n_params(self, data):
        """p: 1 (one alpha for every topic) or K."""
        return self.size

    def grad_log_prior(self, theta):
        return self.prior.grad(theta)

    def log_prior(self, theta):
        return self.prior.log_density(theta)

    def grad_log_lik(self, theta, batch):
        counts, lengths = batch
        return _doc_grad(theta, counts, lengths)

    def log_lik(self, theta, batch):
        return doc_log_lik(theta, batch[0])


# ------------------------------------------------------------------------------------------
# The sampler
# ------------------------------------------------------------------------------------------

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
        Prior of each alpha entry; a pair is a Gamma prior.
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
        self.prior = _check_prior(prior)
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
        return _Summary(*self._stored())

    def _posterior_terms(self, u, order, summary=None):
        """log_posterior at u and, up to ``order``, its gradient and Hessian."""
        self._require_counts()
        terms = _sum_terms(u, self._summary() if summary is None else summary, order)
        scale, prior = self._scale(), self.prior
        out = [prior.log_density(u) + scale * terms[0]]
        if order >= 1:
            out.append(prior.grad(u) + scale * terms[1])
        if order >= 2:
            H = scale * terms[2]
            H[np.diag_indices(len(u))] += prior.hessian_diag(u)
            out.append(H)
        return out

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
        summary = self._summary()
        cache = {}

        def terms(u):
            key = u.tobytes()
            if key not in cache:
                cache.clear()
                cache[key] = [-t for t in self._posterior_terms(u, 2, summary)]
            return cache[key]

        lo, hi = _U_BOUNDS
        res = optimize.minimize(lambda u: terms(u)[0], np.clip(self._u, lo, hi),
                                jac=lambda u: terms(u)[1], hess=lambda u: terms(u)[2],
                                method="trust-exact", options={"maxiter": max_iter, "gtol": 1e-8})
        centre = np.clip(res.x, lo, hi)
        if not np.all(np.isfinite(centre)):
            raise FloatingPointError(f"recentre: the optimisation gave a non-finite log alpha "
                                     f"({res.x})")
        neg_grad, neg_hess = terms(centre)[1:]
        try:
            decrement = float(np.sqrt(neg_grad @ np.linalg.solve(neg_hess, neg_grad)))
        except np.linalg.LinAlgError:
            decrement = np.inf
        if not decrement <= _MAX_DECREMENT or np.linalg.eigvalsh(neg_hess).min() <= 0:
            warnings.warn(f"recentre: the optimisation stopped short of the mode ({res.message}; "
                          f"Newton decrement {decrement:.3g}); the centre is still valid, the "
                          "control variate only less effective", RuntimeWarning, stacklevel=2)
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
