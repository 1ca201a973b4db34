"""The exact Gibbs slice sampler against the exact posterior of a tiny data set.

The posterior of the partition of 6 rows is computed by enumerating all 203 set partitions:
``p(partition | X) ∝ ∫ Gamma(alpha; a, b) EPPF(partition | alpha) dalpha x prod_blocks
DirMult(block)``, with the DP's exchangeable partition probability function
``alpha^K Gamma(alpha) / Gamma(alpha + n) prod_k Gamma(n_k)`` and the Dirichlet-multinomial
marginal of each block (multinomial coefficients are the same for every partition). The number of
occupied clusters K and alpha (a mixture over K of ``p(alpha | K)``) follow by quadrature.
"""
import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import gammaln

from simplexsg import DPMixture

X = np.array([[3, 0, 0], [2, 1, 0], [0, 3, 0], [0, 2, 1], [0, 0, 3], [1, 0, 2]])
BASE, A, B = 0.5, 1.0, 1.0


def set_partitions(items):
    """Every partition of the list ``items`` into non-empty blocks."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in set_partitions(rest):
        yield [[first]] + partition
        for i in range(len(partition)):
            yield partition[:i] + [[first] + partition[i]] + partition[i + 1:]


def log_dirichlet_multinomial(counts, base):
    """log of ∫ prod_c phi_c^counts_c Dirichlet(phi | base) dphi."""
    d = counts.size
    return (gammaln(d * base) - gammaln(d * base + counts.sum())
            + np.sum(gammaln(base + counts) - gammaln(base)))


def log_alpha_weight(alpha, k, n):
    """log of Gamma(alpha; A, B) alpha^k Gamma(alpha) / Gamma(alpha + n), up to a constant."""
    return (A - 1) * np.log(alpha) - B * alpha + k * np.log(alpha) + gammaln(alpha) - gammaln(alpha + n)


def alpha_moment(k, n, power):
    """∫ alpha^power exp(log_alpha_weight) dalpha, by quadrature over log alpha."""
    return quad(lambda u: np.exp((power + 1) * u + log_alpha_weight(np.exp(u), k, n)),
                -50.0, 10.0, points=[-5.0, 0.0, 3.0], limit=200)[0]


def exact_posterior(X):
    """P(K = k | X) for k = 1..n, and E[alpha | X], E[alpha^2 | X]."""
    n = X.shape[0]
    per_k = np.zeros(n + 1)
    for partition in set_partitions(list(range(n))):
        k = len(partition)
        per_k[k] += np.exp(sum(gammaln(len(b)) + log_dirichlet_multinomial(X[b].sum(axis=0), BASE)
                               for b in partition))
    masses = np.array([per_k[k] * alpha_moment(k, n, 0) for k in range(n + 1)])
    p_k = masses / masses.sum()
    moments = [sum(p_k[k] * alpha_moment(k, n, power) / alpha_moment(k, n, 0)
                   for k in range(1, n + 1)) for power in (1, 2)]
    return p_k, moments[0], moments[1]


def test_enumeration_counts_the_bell_number():
    assert sum(1 for _ in set_partitions(list(range(6)))) == 203


def batch_means_se(x, n_batches=50):
    """Standard error of the mean of an autocorrelated series by batch means."""
    batches = np.asarray(x[: len(x) // n_batches * n_batches]).reshape(n_batches, -1).mean(axis=1)
    return batches.std(ddof=1) / np.sqrt(n_batches)


def test_gibbs_matches_the_exact_posterior(seed=0):
    """P(K = k) for every k, E[alpha] and E[alpha^2] within 4.5 batch-means standard errors
    (50 batches of 280 iterations, after 2000 burn-in): a false alarm has probability ~1e-5
    per comparison. Checked to fail when the sampler's alpha prior rate is 2 instead of 1."""
    p_k, alpha_mean, alpha_second = exact_posterior(X)
    dp = DPMixture("gibbs", base_concentration=BASE, alpha_prior=(A, B), initial_components=2,
                   max_iter=16_000, evaluate_every=1, random_state=seed).fit(X)
    kept = dp.history_[2000:]
    clusters = np.array([h["n_components"] for h in kept])
    alpha = np.array([h["alpha"] for h in kept])
    for k in range(1, X.shape[0] + 1):
        hits = (clusters == k).astype(float)
        assert abs(hits.mean() - p_k[k]) <= 4.5 * batch_means_se(hits) + 2e-3, (k, hits.mean(), p_k[k])
    assert abs(alpha.mean() - alpha_mean) <= 4.5 * batch_means_se(alpha)
    assert abs(np.mean(alpha ** 2) - alpha_second) <= 4.5 * batch_means_se(alpha ** 2)
