"""MCMC diagnostics shared by the samplers' users and tests.

* ``split_rhat(draws)``, ``bulk_ess(draws)``: rank-normalised split-R-hat and bulk effective
  sample size of (n_chains, n_draws) draws (Vehtari, Gelman, Simpson, Carpenter & Bürkner
  2021, "Rank-normalization, folding, and localization: an improved R-hat", Bayesian Analysis
  16(2)).
* ``rosenblatt(samples, alpha)``, ``ks_uniform(u)``, ``dirichlet_ks_distance(samples,
  alpha)``, ``chain_ks_distances(kept, alpha)``: how far samples are from a Dirichlet law, by
  the Kolmogorov-Smirnov distance of their Rosenblatt transforms to U(0, 1), the measure of the
  SCIR paper's running experiment (Baker, Fearnhead, Fox & Nemeth 2018, section 1.3).
"""
import numpy as np
from scipy import special
from scipy.special import ndtri
from scipy.stats import rankdata


def _split(draws):
    """(M, N) draws as (2M, N // 2) half-chains (the middle draw of an odd N dropped)."""
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim != 2 or draws.shape[1] < 4:
        raise ValueError(f"draws must be (n_chains, n_draws) with n_draws >= 4, got shape "
                         f"{draws.shape}")
    if not np.isfinite(draws).all():
        raise ValueError("draws must be finite")
    half = draws.shape[1] // 2
    return np.concatenate([draws[:, :half], draws[:, -half:]])


def _rank_normalise(draws):
    """Normal scores of the pooled ranks: ``Phi^-1((r - 3/8) / (S + 1/4))`` (Vehtari et al.
    2021, eq. 14), average ranks for ties."""
    ranks = rankdata(draws, method="average").reshape(draws.shape)
    return ndtri((ranks - 0.375) / (draws.size + 0.25))


def _variances(chains):
    """(W, var_plus): the mean within-chain variance and the pooled estimate
    ``(N - 1) / N W + B / N`` of the (M, N) ``chains``."""
    n = chains.shape[1]
    within = chains.var(axis=1, ddof=1).mean()
    between = n * chains.mean(axis=1).var(ddof=1)
    return within, (n - 1) / n * within + between / n


def _rhat(chains):
    within, var_plus = _variances(chains)
    return float(np.sqrt(var_plus / within)) if within > 0 else (
        1.0 if var_plus == 0 else float("inf"))


def split_rhat(draws):
    """Rank-normalised split-R-hat of draws (n_chains, n_draws), n_draws >= 4: the larger of
    the bulk R-hat (rank-normalised half-chains) and the tail R-hat (the same of the draws
    folded about their median), Vehtari et al. 2021, Section 4.2. About 1 when the chains
    mix; they suggest requiring < 1.01."""
    chains = _split(draws)
    folded = np.abs(chains - np.median(chains))
    return max(_rhat(_rank_normalise(chains)), _rhat(_rank_normalise(folded)))


def _autocovariance(chains):
    """(M, N) autocovariances of each chain at lags 0 .. N - 1 (by FFT, biased: divided by
    N)."""
    n = chains.shape[1]
    centred = chains - chains.mean(axis=1, keepdims=True)
    spectrum = np.fft.rfft(centred, n=2 * n, axis=1)
    return np.fft.irfft(spectrum * np.conj(spectrum), n=2 * n, axis=1)[:, :n] / n


def bulk_ess(draws):
    """Bulk effective sample size of draws (n_chains, n_draws), n_draws >= 4: the ESS of the
    rank-normalised half-chains, ``M N / tau`` with the autocorrelations combined across
    chains and truncated by Geyer's initial monotone sequence (Vehtari et al. 2021,
    Section 3.2 and eq. 10)."""
    chains = _rank_normalise(_split(draws))
    m, n = chains.shape
    within, var_plus = _variances(chains)
    if var_plus == 0:
        return float(m * n)
    rho = 1.0 - (within - _autocovariance(chains).mean(axis=0)) / var_plus
    rho[0] = 1.0
    pairs = rho[:n - n % 2].reshape(-1, 2).sum(axis=1)      # Geyer's P_k = rho_2k + rho_2k+1
    ends = np.flatnonzero(pairs <= 0)
    pairs = pairs[:ends[0] if ends.size else len(pairs)]
    pairs = np.minimum.accumulate(pairs)                     # initial monotone sequence
    tau = max(-1.0 + 2.0 * pairs.sum(), 1.0 / np.log10(m * n))
    return float(m * n / tau)


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
