"""Exact reference for a Dirichlet-process mixture of multinomials on tiny data sets.

Model::

    x_i | z_i, theta ~ Multinomial(n_i, theta_{z_i})
    theta_j          ~ Dirichlet(beta * 1_d)          (beta = ``base_concentration``)
    z                ~ DP(alpha) partition (CRP / stick-breaking v_j ~ Beta(1, alpha))
    alpha            ~ Gamma(a, b)                    (shape a, RATE b)

``exact_dp_posterior`` enumerates every set partition of the n rows (Bell(n) of them, n <= 10)
and integrates alpha out by adaptive quadrature over log alpha; ``collapsed_gibbs_dp`` is an
independent plain collapsed Gibbs sampler (Neal 2000, algorithm 3, with the
Dirichlet-multinomial predictive; Escobar & West 1995 auxiliary-variable update of alpha).
Multinomial coefficients are the same for every partition and are dropped everywhere.

Helper module for the tests only (no test functions here).
"""
from dataclasses import dataclass, field
import functools
import math
from typing import Callable

import numpy as np
from scipy.integrate import cumulative_simpson, quad
from scipy.interpolate import CubicHermiteSpline
from scipy.special import gammaln, logsumexp

from .stats import batch_means_se

__all__ = [
    "X6", "BETA6", "PRIOR6", "DPExactPosterior", "GibbsTrace", "set_partitions", "bell_number",
    "stirling1_unsigned", "log_dirichlet_multinomial", "exact_dp_posterior", "exact_x6",
    "collapsed_gibbs_dp", "effective_sample_size", "mc_se", "alpha_thresholds", "n_cluster_events",
    "mc_deviations",
]

MAX_ROWS = 10  # Bell(10) = 115975 partitions; Bell(8) = 4140 is instant

#: The tiny data set of the tests: 6 rows over 3 categories in three loose groups (Bell(6) = 203
#: partitions), with the base concentration and the Gamma(shape, rate) prior of alpha.
X6 = np.array([[3, 0, 0], [2, 1, 0], [0, 3, 0], [0, 2, 1], [0, 0, 3], [1, 0, 2]])
BETA6, PRIOR6 = 0.5, (1.0, 1.0)


# --------------------------------------------------------------------------- combinatorics
def set_partitions(n):
    """Yield every partition of ``range(n)`` as a list of blocks, each block a sorted list."""
    def rec(items):
        if not items:
            yield []
            return
        first, rest = items[0], items[1:]
        for part in rec(rest):
            yield [[first]] + part
            for i in range(len(part)):
                yield part[:i] + [[first] + part[i]] + part[i + 1:]
    yield from rec(list(range(n)))


def bell_number(n):
    """Number of set partitions of n items."""
    row = [1]
    for _ in range(n):
        new = [row[-1]]
        for v in row:
            new.append(new[-1] + v)
        row = new
    return row[0]


def stirling1_unsigned(n, k):
    """Unsigned Stirling number of the first kind |s(n, k)| (permutations of n with k cycles)."""
    table = [[0] * (n + 1) for _ in range(n + 1)]
    table[0][0] = 1
    for m in range(1, n + 1):
        for j in range(1, m + 1):
            table[m][j] = table[m - 1][j - 1] + (m - 1) * table[m - 1][j]
    return table[n][k] if 0 <= k <= n else 0


def log_dirichlet_multinomial(counts, base_concentration):
    """log B(beta + counts) - log B(beta) for a symmetric Dirichlet(beta) over len(counts) cats
    (the Dirichlet-multinomial marginal without the multinomial coefficient)."""
    counts = np.asarray(counts, dtype=float)
    beta = float(base_concentration)
    d = counts.size
    return float(gammaln(d * beta) - gammaln(d * beta + counts.sum())
                 + np.sum(gammaln(beta + counts)) - d * gammaln(beta))


# --------------------------------------------------------------------------- exact posterior
@dataclass
class DPExactPosterior:
    """Exact posterior summaries. Index k-1 of ``p_n_clusters`` is P(K = k | X), k = 1..n."""
    p_n_clusters: np.ndarray
    alpha_mean: float
    alpha_var: float
    coclustering: np.ndarray          # (n, n), P(z_i = z_j | X)
    alpha_grid: np.ndarray            # grid on which alpha_cdf_values is given
    alpha_cdf_values: np.ndarray      # P(alpha <= alpha_grid | X)
    alpha_cdf: Callable               # vectorised P(alpha <= t | X) (Hermite interp., ~1e-12)
    alpha_pdf: Callable               # vectorised posterior density of alpha (exact)
    alpha_mean_given_k: np.ndarray    # E[alpha | K = k, X] (= E[alpha | K = k]), k = 1..n
    log_marginal_likelihood: float    # log p(X) without multinomial coefficients
    partitions: list = field(repr=False)          # all partitions (lists of blocks)
    partition_probs: np.ndarray = field(repr=False)  # P(partition | X), same order
    alpha_fixed: bool = False


def _check_X(X):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError("X must be 2-D (rows x categories)")
    if np.any(X < 0):
        raise ValueError("counts must be non-negative")
    return X


def _parse_alpha_prior(alpha_prior):
    """Return (a, b) for a Gamma prior, or (None, alpha) for a fixed alpha."""
    if np.ndim(alpha_prior) == 0:
        alpha = float(alpha_prior)
        if alpha <= 0:
            raise ValueError("fixed alpha must be > 0")
        return None, alpha
    a, b = map(float, alpha_prior)
    if a <= 0 or b <= 0:
        raise ValueError("alpha_prior=(shape, rate) must be positive")
    return a, b


def _log_alpha_kernel(u, k, n, a, b):
    """log of Gamma(e^u; a, b) * EPPF_alpha(k) * e^u (Jacobian of alpha = e^u), where
    EPPF_alpha(k) = alpha^k Gamma(alpha) / Gamma(alpha + n)
                  = alpha^(k-1) / prod_{m=1}^{n-1}(alpha + m)."""
    u = np.asarray(u, dtype=float)
    alpha = np.exp(u)
    out = (k + a - 1.0) * u - b * alpha + a * math.log(b) - gammaln(a)
    for m in range(1, n):
        out = out - np.log(alpha + m)
    return out


def exact_dp_posterior(X, base_concentration, alpha_prior=(1.0, 1.0), alpha_grid=None,
                       n_fine=200_001):
    """Exact posterior of the DP multinomial mixture by enumerating all set partitions.

    Parameters
    ----------
    X : (n, d) array of counts, n <= 10 (n <= 8 recommended).
    base_concentration : symmetric Dirichlet parameter beta (scalar).
    alpha_prior : (a, b) shape and RATE of the Gamma prior on alpha, or a scalar for a fixed alpha.
    alpha_grid : points at which to report ``alpha_cdf_values``; default 1001 log-spaced points
        spanning the 1e-6..1-1e-6 posterior quantiles (ignored shape-wise for fixed alpha).
    n_fine : size of the internal log-alpha grid used for the cumulative CDF.

    P(K), E[alpha], Var[alpha] and the co-clustering matrix use adaptive quadrature
    (relative accuracy ~1e-10); ``alpha_cdf`` is a cubic-Hermite interpolant of a cumulative
    Simpson rule on a fine log-alpha grid (absolute accuracy ~1e-12).
    """
    X = _check_X(X)
    n, d = X.shape
    if n < 1 or n > MAX_ROWS:
        raise ValueError(f"need 1 <= n <= {MAX_ROWS} rows, got {n}")
    beta = float(base_concentration)
    if beta <= 0:
        raise ValueError("base_concentration must be > 0")
    a, b = _parse_alpha_prior(alpha_prior)

    # log marginal of every subset (bitmask) of rows
    block_ll = np.zeros(1 << n)
    for mask in range(1, 1 << n):
        rows = [i for i in range(n) if mask >> i & 1]
        block_ll[mask] = log_dirichlet_multinomial(X[rows].sum(axis=0), beta)

    partitions = list(set_partitions(n))
    ks = np.empty(len(partitions), dtype=int)
    log_w = np.empty(len(partitions))  # sum of block log-marginals + sum log Gamma(n_k)
    for p, part in enumerate(partitions):
        ks[p] = len(part)
        log_w[p] = sum(block_ll[sum(1 << i for i in blk)] + gammaln(len(blk)) for blk in part)
    log_c = np.full(n + 1, -np.inf)  # log c_k = log sum_{partitions with k blocks} exp(log_w)
    for k in range(1, n + 1):
        log_c[k] = logsumexp(log_w[ks == k])

    k_range = np.arange(1, n + 1)
    if a is None:  # ----------------------------------------------------------- fixed alpha
        alpha = b
        log_I = np.full(n + 1, -np.inf)
        log_I[1:] = k_range * math.log(alpha) - np.sum(np.log(alpha + np.arange(n)))
        log_mass = log_c + log_I
        log_Z = logsumexp(log_mass[1:])
        p_k = np.exp(log_mass[1:] - log_Z)
        grid = np.atleast_1d(np.asarray(alpha_grid if alpha_grid is not None
                                        else [alpha / 2, alpha, 2 * alpha], dtype=float))

        def alpha_cdf(t):
            return (np.asarray(t, dtype=float) >= alpha).astype(float)

        def alpha_pdf(t):
            raise ValueError("alpha is fixed: no density")

        probs = np.exp(log_w + log_I[ks] - log_Z)
        return DPExactPosterior(
            p_n_clusters=p_k, alpha_mean=alpha, alpha_var=0.0,
            coclustering=_coclustering(partitions, probs, n), alpha_grid=grid,
            alpha_cdf_values=alpha_cdf(grid), alpha_cdf=alpha_cdf, alpha_pdf=alpha_pdf,
            alpha_mean_given_k=np.full(n, alpha), log_marginal_likelihood=float(log_Z),
            partitions=partitions, partition_probs=probs, alpha_fixed=True)

    # ------------------------------------------------------------------ alpha ~ Gamma(a, b)
    # integration range in u = log alpha: where any kernel (also times alpha^2) is non-negligible
    coarse = np.linspace(-700.0, 60.0, 76_001)
    coarse_k = np.array([_log_alpha_kernel(coarse, k, n, a, b) for k in k_range])
    env = np.maximum(coarse_k.max(axis=0), (coarse_k + 2 * coarse).max(axis=0))
    keep = np.nonzero(env > env.max() - 60.0)[0]
    lo, hi = coarse[max(keep[0] - 1, 0)], coarse[min(keep[-1] + 1, coarse.size - 1)]

    def log_integral(k, power, center=0.0):
        """log of ∫ (alpha - center)^power * kernel_k over alpha (power in 0,1,2)."""
        lk = _log_alpha_kernel(coarse, k, n, a, b)
        shift = np.max(lk + power * np.log(np.abs(np.exp(coarse) - center) + 1e-300))
        pts = [coarse[np.argmax(lk)]] + ([math.log(center)] if center > 0 else [])
        pts = sorted(p for p in set(pts) if lo < p < hi)
        val, _ = quad(lambda u: (np.exp(u) - center) ** power
                      * np.exp(_log_alpha_kernel(u, k, n, a, b) - shift),
                      lo, hi, points=pts or None, epsabs=0.0, epsrel=1e-12, limit=500)
        return shift + math.log(val)

    log_I = np.full(n + 1, -np.inf)
    log_M1 = np.full(n + 1, -np.inf)
    for k in k_range:
        log_I[k] = log_integral(k, 0)
        log_M1[k] = log_integral(k, 1)
    log_mass = log_c + log_I
    log_Z = logsumexp(log_mass[1:])
    p_k = np.exp(log_mass[1:] - log_Z)
    mean_given_k = np.exp(log_M1[1:] - log_I[1:])
    alpha_mean = float(np.dot(p_k, mean_given_k))
    # central second moment directly (no cancellation)
    alpha_var = float(sum(p_k[k - 1] * np.exp(log_integral(k, 2, alpha_mean) - log_I[k])
                          for k in k_range))

    probs = np.exp(log_w + log_I[ks] - log_Z)

    # fine grid: posterior density of u = log alpha, cumulative Simpson -> CDF
    u_fine = np.linspace(lo, hi, n_fine)
    log_dens_u = logsumexp(np.array([log_c[k] + _log_alpha_kernel(u_fine, k, n, a, b)
                                     for k in k_range]), axis=0) - log_Z
    dens_u = np.exp(log_dens_u)
    cdf_fine = cumulative_simpson(dens_u, x=u_fine, initial=0.0)
    # cubic Hermite interpolation with the exact derivative dCDF/du = density(u): O(h^4)
    cdf_spline = CubicHermiteSpline(u_fine, cdf_fine, dens_u, extrapolate=False)

    def alpha_cdf(t):
        t = np.asarray(t, dtype=float)
        with np.errstate(divide="ignore"):
            lt = np.log(np.where(t > 0, t, 0.0))
        out = np.where(lt < lo, 0.0, np.where(lt > hi, 1.0, cdf_spline(np.clip(lt, lo, hi))))
        return np.clip(out, 0.0, 1.0)

    def alpha_pdf(t):
        t = np.asarray(t, dtype=float)
        out = np.zeros(t.shape)
        pos = t > 0
        u = np.log(t[pos])
        out[pos] = np.exp(logsumexp(np.array([log_c[k] + _log_alpha_kernel(u, k, n, a, b)
                                              for k in k_range]), axis=0) - log_Z - u)
        return out

    if alpha_grid is None:
        q_lo = np.interp(1e-6, cdf_fine, u_fine)
        q_hi = np.interp(1 - 1e-6, cdf_fine, u_fine)
        grid = np.exp(np.linspace(q_lo, q_hi, 1001))
    else:
        grid = np.asarray(alpha_grid, dtype=float)

    return DPExactPosterior(
        p_n_clusters=p_k, alpha_mean=alpha_mean, alpha_var=alpha_var,
        coclustering=_coclustering(partitions, probs, n), alpha_grid=grid,
        alpha_cdf_values=alpha_cdf(grid), alpha_cdf=alpha_cdf, alpha_pdf=alpha_pdf,
        alpha_mean_given_k=mean_given_k, log_marginal_likelihood=float(log_Z),
        partitions=partitions, partition_probs=probs, alpha_fixed=False)


@functools.lru_cache(maxsize=8)
def exact_x6(alpha_prior=PRIOR6):
    """``exact_dp_posterior(X6, BETA6, alpha_prior)``, computed once per prior (a hashable
    (shape, rate) pair or a fixed alpha) and shared by the tests: do not modify the result."""
    return exact_dp_posterior(X6, BETA6, alpha_prior)


def _coclustering(partitions, probs, n):
    co = np.zeros((n, n))
    for part, p in zip(partitions, probs):
        for blk in part:
            co[np.ix_(blk, blk)] += p
    return co


# --------------------------------------------------------------------------- collapsed Gibbs
@dataclass
class GibbsTrace:
    """Recorded sweeps (after burn-in) of ``collapsed_gibbs_dp``."""
    n_clusters: np.ndarray   # (n_iter,) number of occupied clusters K
    alpha: np.ndarray        # (n_iter,) concentration
    z: np.ndarray            # (n_iter, n) cluster labels (arbitrary per sweep; compare z_i == z_j)

    def p_n_clusters(self):
        n = self.z.shape[1]
        return np.bincount(self.n_clusters, minlength=n + 1)[1:] / self.n_clusters.size

    def coclustering(self):
        return (self.z[:, :, None] == self.z[:, None, :]).mean(axis=0)


def collapsed_gibbs_dp(X, base_concentration, alpha_prior=(1.0, 1.0), n_iter=10_000,
                       random_state=None, burn_in=0, alpha_init=1.0, z_init=None):
    """Plain collapsed Gibbs sampler for the DP mixture of multinomials.

    Allocations: Neal (2000) algorithm 3, p(z_i = k | ...) ∝ n_{-i,k} p(x_i | rows in k) and
    ∝ alpha p(x_i) for a new cluster, with the Dirichlet-multinomial predictive
    B(beta + s_k + x_i) / B(beta + s_k). alpha: Escobar & West (1995) auxiliary variable
    eta ~ Beta(alpha + 1, n), then a two-component Gamma mixture with rate b - log eta.
    ``alpha_prior`` scalar -> alpha held fixed. One sweep = every row once + one alpha update;
    ``burn_in`` sweeps are discarded, then ``n_iter`` sweeps are recorded.
    """
    X = _check_X(X)
    n, d = X.shape
    beta = float(base_concentration)
    a, b = _parse_alpha_prior(alpha_prior)
    alpha = b if a is None else float(alpha_init)
    rng = np.random.default_rng(random_state)
    rows = [list(map(float, x)) for x in X]
    nz = [[c for c in range(d) if x[c] > 0] for x in rows]
    tot = [sum(x) for x in rows]
    dbeta = d * beta
    lg = math.lgamma

    z = list(range(n)) if z_init is None else list(map(int, z_init))
    labels = sorted(set(z))  # relabel to 0..K-1
    z = [labels.index(v) for v in z]
    K = len(labels)
    sizes = [0] * K
    sums = [[0.0] * d for _ in range(K)]
    totals = [0.0] * K
    for i in range(n):
        k = z[i]
        sizes[k] += 1
        totals[k] += tot[i]
        for c in range(d):
            sums[k][c] += rows[i][c]

    def log_pred(i, s, st):
        x = rows[i]
        out = lg(dbeta + st) - lg(dbeta + st + tot[i])
        for c in nz[i]:
            out += lg(beta + s[c] + x[c]) - lg(beta + s[c])
        return out

    empty = [0.0] * d
    total_sweeps = burn_in + n_iter
    out_k = np.empty(n_iter, dtype=np.int64)
    out_alpha = np.empty(n_iter)
    out_z = np.empty((n_iter, n), dtype=np.int64)

    for sweep in range(total_sweeps):
        us = rng.random(n)
        for i in range(n):
            k = z[i]
            sizes[k] -= 1
            totals[k] -= tot[i]
            s = sums[k]
            for c in nz[i]:
                s[c] -= rows[i][c]
            if sizes[k] == 0:  # drop the empty cluster: move the last one into slot k
                last = len(sizes) - 1
                if k != last:
                    sizes[k], sums[k], totals[k] = sizes[last], sums[last], totals[last]
                    for j in range(n):
                        if z[j] == last:
                            z[j] = k
                sizes.pop(); sums.pop(); totals.pop()
            K = len(sizes)
            logw = [math.log(sizes[j]) + log_pred(i, sums[j], totals[j]) for j in range(K)]
            logw.append(math.log(alpha) + log_pred(i, empty, 0.0))
            m = max(logw)
            w = [math.exp(v - m) for v in logw]
            target = us[i] * sum(w)
            acc = 0.0
            new = K
            for j, wj in enumerate(w):
                acc += wj
                if target < acc:
                    new = j
                    break
            if new == K:
                sizes.append(0)
                sums.append([0.0] * d)
                totals.append(0.0)
            z[i] = new
            sizes[new] += 1
            totals[new] += tot[i]
            s = sums[new]
            for c in nz[i]:
                s[c] += rows[i][c]
        K = len(sizes)
        if a is not None:  # Escobar & West (1995)
            eta = rng.beta(alpha + 1.0, n)
            rate = b - math.log(eta)
            odds = (a + K - 1.0) / (n * rate)
            shape = a + K if rng.random() < odds / (1.0 + odds) else a + K - 1.0
            alpha = rng.gamma(shape, 1.0 / rate)
        if sweep >= burn_in:
            t = sweep - burn_in
            out_k[t] = K
            out_alpha[t] = alpha
            out_z[t] = z
    return GibbsTrace(n_clusters=out_k, alpha=out_alpha, z=out_z)


# --------------------------------------------------------------------------- MC error
def effective_sample_size(x, n_batches=50):
    """ESS = var(x) / se_bm^2 (``batch_means_se``); equals len(x) for iid draws, in expectation."""
    x = np.asarray(x, dtype=float)
    se = float(batch_means_se(x, n_batches))
    v = x.var(ddof=1)
    return float(x.size) if se == 0 else float(v / se ** 2)


def mc_se(series, p_exact=None, n_batches=50):
    """Batch-means standard error of the mean of ``series``. For an indicator series whose exact
    probability is ``p_exact`` it is never below the iid binomial error sqrt(p (1 - p) / n): a
    state that a sticky chain never visits would otherwise get a standard error of 0."""
    se = float(batch_means_se(series, n_batches))
    if p_exact is not None:
        se = max(se, math.sqrt(max(p_exact * (1.0 - p_exact), 1e-12) / len(series)))
    return se


#: Posterior probabilities at which ``mc_deviations`` checks the CDF of alpha.
ALPHA_LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)


def alpha_thresholds(exact, levels=ALPHA_LEVELS):
    """Points t near the posterior ``levels``-quantiles of alpha, and P(alpha <= t | X) exactly."""
    t = np.interp(levels, exact.alpha_cdf_values, exact.alpha_grid)
    return t, exact.alpha_cdf(t)


def n_cluster_events(exact, min_probability=0.0):
    """The events about K whose posterior probabilities ``mc_deviations`` checks, as
    (name, lowest k, highest k, exact probability): every ``K=k`` of probability at least
    ``min_probability``, and the rarer states at either end pooled with their neighbours into
    ``K<=k`` / ``K>=k``, the narrowest such tail that reaches ``min_probability``.

    A chain visits a state of small probability in a few excursions of very unequal lengths, so
    batch means cannot estimate the error of its frequency (``mc_se``): pooling keeps every
    state in some checked event, each with an error that can be estimated.
    """
    p = exact.p_n_clusters
    n = p.size
    events = [(f"K={k}", k, k, p[k - 1]) for k in range(1, n + 1) if p[k - 1] >= min_probability]
    low = next(k for k in range(1, n + 1) if p[:k].sum() >= min_probability)
    if low > 1:
        events.append((f"K<={low}", 1, low, p[:low].sum()))
    high = next(k for k in range(n, 0, -1) if p[k - 1:].sum() >= min_probability)
    if high < n:
        events.append((f"K>={high}", high, n, p[high - 1:].sum()))
    return events


def mc_deviations(exact, n_clusters, alpha=None, z=None, n_batches=50, min_probability=0.0):
    """|Monte Carlo estimate - exact value| / Monte Carlo standard error (``mc_se``, batch means)
    of every posterior summary a chain's trace gives, by name:

    * ``K=k`` (and pooled tails ``K<=k``, ``K>=k``, see ``n_cluster_events`` and
      ``min_probability``): the posterior probabilities of the numbers of occupied clusters,
      from the trace ``n_clusters``;
    * with ``alpha`` (unless alpha is fixed): ``E[alpha]``, ``Var[alpha]`` (the mean of
      (alpha - E[alpha])^2 with the exact mean), and ``P(alpha<=t)`` at the thresholds of
      ``alpha_thresholds`` (the CDF of alpha at its 10, 25, 50, 75 and 90% quantiles);
    * with labels ``z`` (n_iter, n): ``zi=zj``, every co-clustering probability P(z_i = z_j | X).

    A correct sampler gives approximately standard normal deviations; compare the largest with a
    critical value for the number of summaries.
    """
    n_clusters = np.asarray(n_clusters)
    out = {}
    for name, low, high, p in n_cluster_events(exact, min_probability):
        hits = ((n_clusters >= low) & (n_clusters <= high)).astype(float)
        out[name] = abs(hits.mean() - p) / mc_se(hits, p, n_batches)
    if alpha is not None and not exact.alpha_fixed:
        alpha = np.asarray(alpha, dtype=float)
        out["E[alpha]"] = abs(alpha.mean() - exact.alpha_mean) / mc_se(alpha, None, n_batches)
        centred = (alpha - exact.alpha_mean) ** 2
        out["Var[alpha]"] = abs(centred.mean() - exact.alpha_var) / mc_se(centred, None, n_batches)
        for t, p in zip(*alpha_thresholds(exact)):
            below = (alpha <= t).astype(float)
            out[f"P(alpha<={t:.3g})"] = abs(below.mean() - p) / mc_se(below, p, n_batches)
    if z is not None:
        z = np.asarray(z)
        for i in range(z.shape[1]):
            for j in range(i + 1, z.shape[1]):
                same = (z[:, i] == z[:, j]).astype(float)
                p = exact.coclustering[i, j]
                out[f"z{i}=z{j}"] = abs(same.mean() - p) / mc_se(same, p, n_batches)
    return out
