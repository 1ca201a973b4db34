"""The SCIR paper's running experiment (Baker et al. 2018, sections 1.3 and 2.2).

N = 1000 categorical observations in d = 10 categories, Dirichlet(0.1) prior, so the posterior is
Dirichlet(0.1 + counts). Sparse variant: counts (800, 100, 100, 0, ..., 0); dense variant: 100 in
every category. A chain sees a minibatch of ``batch_size`` observations drawn with replacement
each step, scaled by N / batch_size. Chains are compared with the exact posterior by the mean
Kolmogorov-Smirnov distance of their Rosenblatt transforms (``dirichlet_ks_distance``).
"""
import numpy as np
from scipy import special

from ._random import check_generator
from .simplex import to_simplex

SPARSE_COUNTS = np.array([800, 100, 100, 0, 0, 0, 0, 0, 0, 0])
DENSE_COUNTS = np.full(10, 100)
PRIOR = 0.1
#: Step-size grids of the SCIR paper's running experiment (Figures 1 and 2).
SCIR_GRID = (1.0, 0.5, 0.1, 0.05, 0.01, 0.005, 0.001)
SGRLD_GRID = (1e-3, 1e-4, 1e-5, 1e-6)


def run_chains(sampler, counts, *, prior=PRIOR, batch_size=10, n_burn=1000, n_keep=1000,
               n_chains=1, random_state=None):
    """Run ``n_chains`` independent chains of ``sampler`` on the data with category ``counts`` (d,).

    Each step every chain draws its own minibatch of ``batch_size`` observations with replacement
    and passes ``N / batch_size`` times its category counts to ``sampler.step``. Chains start
    from Gamma(1, 1) draws. Returns the kept simplex samples, shape (n_keep, n_chains, d).
    """
    rng = check_generator(random_state)
    counts = np.asarray(counts)
    n_obs, d = counts.sum(), counts.size
    probabilities = counts / n_obs
    theta = rng.gamma(1.0, size=(n_chains, d))
    kept = np.empty((n_keep, n_chains, d))
    for t in range(n_burn + n_keep):
        batch = rng.multinomial(batch_size, probabilities, size=n_chains)
        theta = sampler.step(theta, prior, batch * (n_obs / batch_size), random_state=rng)
        if t >= n_burn:
            kept[t - n_burn] = to_simplex(theta)
    return kept


def rosenblatt(samples, alpha):
    """Map Dirichlet(alpha) samples (..., d) to d - 1 coordinates that are iid U(0, 1) under it.

    Coordinate j is the Beta(alpha_j, sum_{l>j} alpha_l) CDF of omega_j / sum_{l>=j} omega_l; the
    remaining mass is taken from tail sums, not ``1 - sum_{l<j}``, so tiny components keep their
    precision.
    """
    samples = np.asarray(samples, dtype=np.float64)
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), samples.shape[-1:])
    tail_mass = np.cumsum(samples[..., ::-1], axis=-1)[..., ::-1]
    tail_alpha = np.cumsum(alpha[::-1])[::-1]
    ratio = np.clip(samples[..., :-1] / tail_mass[..., :-1], 0.0, 1.0)
    return special.betainc(alpha[:-1], tail_alpha[1:], ratio)


def ks_uniform(u):
    """Kolmogorov-Smirnov distance to U(0, 1) of the samples along axis 0 of ``u``, for every other
    index at once: ``max_i max(i/n - u_(i), u_(i) - (i-1)/n)``, the statistic of
    ``scipy.stats.kstest(u, "uniform")``."""
    u = np.sort(np.asarray(u, dtype=np.float64), axis=0)
    n = u.shape[0]
    i = np.arange(1, n + 1, dtype=np.float64).reshape((n,) + (1,) * (u.ndim - 1))
    return np.maximum((i / n - u).max(axis=0), (u - (i - 1) / n).max(axis=0))


def dirichlet_ks_distance(samples, alpha):
    """Mean over the d - 1 Rosenblatt coordinates of the KS distance to U(0, 1); samples (n, d)."""
    return float(np.mean(ks_uniform(rosenblatt(samples, alpha))))


def chain_ks_distances(kept, alpha):
    """``dirichlet_ks_distance`` of every chain of ``kept`` (n_keep, n_chains, d): (n_chains,)."""
    return ks_uniform(rosenblatt(kept, alpha)).mean(axis=-1)


def ks_per_chain(sampler, counts, *, n_chains=5, random_state=None, **kw):
    """Run ``n_chains`` chains of ``sampler`` (``run_chains``; ``kw`` passes on) and return each
    chain's KS distance to the exact posterior Dirichlet(PRIOR + counts), shape (n_chains,).
    The chains are independent, so their spread gives the Monte Carlo error of the mean."""
    prior = kw.get("prior", PRIOR)
    kept = run_chains(sampler, counts, n_chains=n_chains, random_state=random_state, **kw)
    return chain_ks_distances(kept, prior + np.asarray(counts))


def tuned_ks(make_sampler, grid, counts, *, batch_size=10, n_chains=5, random_state=None, **kw):
    """KS distance per step size of ``grid``, and the best one.

    ``make_sampler(h)`` builds a sampler; each h runs ``n_chains`` chains (the paper's seeds) and
    scores the mean of their KS distances. Returns ``(best_h, best_ks, {h: ks})``. ``best_ks`` is
    the minimum of noisy means, biased low: score the chosen h again on fresh chains
    (``ks_per_chain``) for an unbiased value with a standard error.
    """
    rng = check_generator(random_state)
    scores = {}
    for h in grid:
        scores[h] = float(np.mean(ks_per_chain(make_sampler(h), counts, batch_size=batch_size,
                                               n_chains=n_chains, random_state=rng, **kw)))
    best = min(scores, key=scores.get)
    return best, scores[best], scores
