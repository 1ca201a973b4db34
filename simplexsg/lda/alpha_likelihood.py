"""The Dirichlet-multinomial likelihood of documents' topic counts in u = log alpha: per
document and summed over documents, with its gradient and Hessian in u.

``u`` has shape (p,): p = 1 (symmetric: alpha_k = exp(u) for every topic) or p = K (per
topic: alpha_k = exp(u_k)). Given alpha, document d's topic counts n_d (K,), of total
N_d = sum_k n_dk, have the Dirichlet-multinomial likelihood (the proportions integrated out;
the multinomial coefficient, free of alpha, dropped)::

    log p(n_d | alpha) = lgamma(A) - lgamma(A + N_d)
                         + sum_k [lgamma(alpha_k + n_dk) - lgamma(alpha_k)]

with A = sum_k alpha_k; its gradient in alpha_k is
``psi(A) - psi(A + N_d) + psi(alpha_k + n_dk) - psi(alpha_k)`` (digamma psi), and in u the
chain rule multiplies it by alpha_k (summed over k in the symmetric case). The priors on alpha
are in ``simplexsg.lda.alpha_priors``; ``DocTopicCountsModel`` joins prior and likelihood as a
``simplexsg.sgmcmc`` model.

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
"""
import dataclasses

import numpy as np
from scipy.special import digamma, gammaln, polygamma

from ..sgmcmc import Model

__all__ = ["doc_log_lik", "doc_grad", "sum_hessian", "CountsSummary", "sum_terms",
           "DocTopicCountsModel"]


def _trigamma(x):
    return polygamma(1, x)


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
    return sum_terms(u, CountsSummary(np.asarray(counts, dtype=np.float64)), order=2)[2]


class CountsSummary:
    """Counts reduced to what the sums over documents need: the distinct document lengths and
    the distinct non-zero (topic, count) pairs, each with its multiplicity (a zero count adds
    nothing to the likelihood or its derivatives). Gibbs averages over S sweeps are multiples
    of 1 / S, so the special functions run on a few thousand values, not on n K.

    ``counts``: (n, K) float64, non-negative; ``lengths``: their row sums N_d (n,), computed
    if None (the sampler passes its stored ones)."""

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


def sum_terms(u, summary, order):
    """(sum_d log-lik, its gradient (p,) if order >= 1, its Hessian (p, p) if order >= 2) in u.

    ``u``: float64 (p,); ``summary``: the documents' ``CountsSummary``; ``order``: 0, 1 or 2.
    The sum is a float; the sums equal those of ``doc_log_lik`` and ``doc_grad`` up to rounding.
    """
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
    prior ``prior`` on alpha (a ``simplexsg.lda.alpha_priors`` prior, density in u) and the
    Dirichlet-multinomial terms of the module docstring. Data: ``(counts (n, K), lengths
    (n,))``, lengths the counts' row sums; ``size`` p is the dimension of u."""

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
