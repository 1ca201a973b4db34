"""Tests of the exact DP-mixture reference ``tests/helpers/dp_exact.py`` (enumeration,
collapsed Gibbs) and of the batch-means standard error (``tests/helpers/stats.py``)."""
import math

import numpy as np
import pytest
from scipy import stats
from scipy.integrate import quad
from scipy.special import betaln, exp1, gammaln

from helpers.dp_exact import (BETA6, PRIOR6, X6, bell_number, collapsed_gibbs_dp,
                              effective_sample_size, exact_dp_posterior, exact_x6,
                              log_dirichlet_multinomial, mc_deviations, n_cluster_events,
                              set_partitions, stirling1_unsigned)
from helpers.stats import batch_means_se


def rising_factorial(x, n):
    return math.prod(x + m for m in range(n))


# --------------------------------------------------------------------------- combinatorics
@pytest.mark.parametrize("n", range(0, 8))
def test_set_partitions_are_all_distinct_partitions(n):
    parts = list(set_partitions(n))
    assert len(parts) == bell_number(n) == [1, 1, 2, 5, 15, 52, 203, 877][n]
    canon = {tuple(sorted(tuple(sorted(b)) for b in p)) for p in parts}
    assert len(canon) == len(parts)
    for p in parts:
        assert sorted(i for b in p for i in b) == list(range(n))


def test_stirling_numbers_sum_to_factorial():
    for n in range(1, 9):
        assert sum(stirling1_unsigned(n, k) for k in range(n + 1)) == math.factorial(n)
    assert [stirling1_unsigned(4, k) for k in range(1, 5)] == [6, 11, 6, 1]


def test_log_dirichlet_multinomial_matches_beta_function():
    # d = 2: B(beta + x) / B(beta) is a ratio of Beta functions
    for x, beta in [([3, 1], 0.5), ([0, 0], 2.0), ([5, 2], 1.3)]:
        want = betaln(beta + x[0], beta + x[1]) - betaln(beta, beta)
        assert log_dirichlet_multinomial(x, beta) == pytest.approx(want, rel=1e-12, abs=1e-12)


# --------------------------------------------------------------------------- enumeration
@pytest.mark.parametrize("prior", [PRIOR6, (2.0, 0.5), 0.7])
def test_enumeration_is_normalised_and_consistent(prior):
    r = exact_x6(prior)
    n = X6.shape[0]
    assert len(r.partitions) == 203
    assert r.partition_probs.sum() == pytest.approx(1.0, abs=1e-12)
    assert r.p_n_clusters.shape == (n,)
    assert r.p_n_clusters.sum() == pytest.approx(1.0, abs=1e-12)
    by_k = np.bincount([len(p) for p in r.partitions], weights=r.partition_probs, minlength=n + 1)
    np.testing.assert_allclose(by_k[1:], r.p_n_clusters, atol=1e-14)
    np.testing.assert_allclose(np.diag(r.coclustering), 1.0, atol=1e-12)
    np.testing.assert_allclose(r.coclustering, r.coclustering.T, atol=1e-14)
    assert np.all((r.coclustering >= 0) & (r.coclustering <= 1 + 1e-12))
    # E[K] = sum_i 1 / (size of i's block) expected -> also from the co-clustering matrix
    e_k = np.dot(np.arange(1, n + 1), r.p_n_clusters)
    e_k_partitions = sum(p * len(part) for p, part in zip(r.partition_probs, r.partitions))
    assert e_k == pytest.approx(e_k_partitions, rel=1e-12)


def test_matches_an_independent_straightforward_computation():
    """Brute-force with plain gammaln per block and quadrature directly over alpha."""
    a, b = 2.0, 0.5
    n = X6.shape[0]
    mass = np.zeros(n + 1)
    for part in set_partitions(n):
        mass[len(part)] += math.exp(sum(
            gammaln(len(blk)) + gammaln(3 * BETA6) - gammaln(3 * BETA6 + X6[blk].sum())
            + np.sum(gammaln(BETA6 + X6[blk].sum(axis=0)) - gammaln(BETA6)) for blk in part))

    def w(alpha, k):
        return (stats.gamma.pdf(alpha, a, scale=1 / b) * alpha ** k * math.exp(
            gammaln(alpha) - gammaln(alpha + n)))
    I = np.array([0.0] + [quad(w, 0, np.inf, args=(k,), epsabs=0, epsrel=1e-11, limit=200)[0]
                          for k in range(1, n + 1)])
    M1 = np.array([0.0] + [quad(lambda t, k=k: t * w(t, k), 0, np.inf, epsabs=0, epsrel=1e-11,
                                limit=200)[0] for k in range(1, n + 1)])
    p = mass * I / np.dot(mass, I)
    r = exact_x6((a, b))
    np.testing.assert_allclose(r.p_n_clusters, p[1:], rtol=1e-8)
    assert r.alpha_mean == pytest.approx(np.dot(mass, M1) / np.dot(mass, I), rel=1e-8)


def test_one_row_alpha_posterior_is_the_prior():
    a, b = 1.7, 0.6
    x = np.array([[4, 1]])
    r = exact_dp_posterior(x, 0.8, (a, b))
    np.testing.assert_allclose(r.p_n_clusters, [1.0])
    assert r.alpha_mean == pytest.approx(a / b, rel=1e-9)
    assert r.alpha_var == pytest.approx(a / b ** 2, rel=1e-9)
    grid = np.array([0.1, 1.0, 2.8, 7.0])
    np.testing.assert_allclose(r.alpha_cdf(grid), stats.gamma.cdf(grid, a, scale=1 / b), atol=1e-9)
    np.testing.assert_allclose(r.alpha_pdf(grid), stats.gamma.pdf(grid, a, scale=1 / b), rtol=1e-10)
    assert r.log_marginal_likelihood == pytest.approx(betaln(4.8, 1.8) - betaln(0.8, 0.8),
                                                      rel=1e-12)


@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.0])
def test_two_rows_fixed_alpha_closed_form(alpha):
    # x1 = x2 = (1, 0), beta = 1: shared theta gives E[theta^2] = 1/3, separate 1/2 * 1/2 = 1/4,
    # CRP: P(same) = 1/(1+alpha)  =>  P(K=1 | X) = (1/3) / (1/3 + alpha/4) = 4 / (4 + 3 alpha)
    r = exact_dp_posterior([[1, 0], [1, 0]], 1.0, alpha)
    p1 = 4 / (4 + 3 * alpha)
    np.testing.assert_allclose(r.p_n_clusters, [p1, 1 - p1], rtol=1e-12)
    assert r.coclustering[0, 1] == pytest.approx(p1, rel=1e-12)
    assert r.alpha_mean == alpha and r.alpha_var == 0.0


@pytest.mark.parametrize("b", [0.5, 1.0, 2.0])
def test_two_rows_alpha_integrated_closed_form(b):
    # alpha ~ Exp(rate b): h = E[1/(1+alpha)] = b e^b E1(b), E[alpha/(1+alpha)] = 1 - h,
    # E[alpha^2/(1+alpha)] = E[alpha - 1 + 1/(1+alpha)] = 1/b - 1 + h,
    # E[alpha^3/(1+alpha)] = E[alpha^2 - alpha + 1 - 1/(1+alpha)] = 2/b^2 - 1/b + 1 - h.
    h = b * math.exp(b) * exp1(b)
    L1, L2 = 1 / 3, 1 / 4
    Z = L1 * h + L2 * (1 - h)
    p1 = L1 * h / Z
    mean = (L1 * (1 - h) + L2 * (1 / b - 1 + h)) / Z
    second = (L1 * (1 / b - 1 + h) + L2 * (2 / b ** 2 - 1 / b + 1 - h)) / Z
    r = exact_dp_posterior([[1, 0], [1, 0]], 1.0, (1.0, b))
    np.testing.assert_allclose(r.p_n_clusters, [p1, 1 - p1], rtol=1e-10)
    assert r.alpha_mean == pytest.approx(mean, rel=1e-10)
    assert r.alpha_var == pytest.approx(second - mean ** 2, rel=1e-9)
    assert r.log_marginal_likelihood == pytest.approx(math.log(Z), rel=1e-10)


def test_uninformative_data_gives_the_crp_prior():
    """All-zero rows carry no information: the posterior is the DP prior."""
    n, alpha = 6, 1.3
    Xz = np.zeros((n, 3))
    r = exact_dp_posterior(Xz, 0.5, alpha)
    want = [stirling1_unsigned(n, k) * alpha ** k / rising_factorial(alpha, n)
            for k in range(1, n + 1)]
    np.testing.assert_allclose(r.p_n_clusters, want, rtol=1e-12)
    off = r.coclustering[~np.eye(n, dtype=bool)]
    np.testing.assert_allclose(off, 1 / (1 + alpha), rtol=1e-12)

    a, b = 2.0, 1.5
    r = exact_dp_posterior(Xz, 0.5, (a, b))
    assert r.alpha_mean == pytest.approx(a / b, rel=1e-10)
    assert r.alpha_var == pytest.approx(a / b ** 2, rel=1e-10)
    grid = np.geomspace(0.01, 10, 25)
    np.testing.assert_allclose(r.alpha_cdf(grid), stats.gamma.cdf(grid, a, scale=1 / b), atol=1e-9)
    prior = stats.gamma(a, scale=1 / b)
    for k in range(1, n + 1):
        pk = prior.expect(lambda t: stirling1_unsigned(n, k) * t ** k / rising_factorial(t, n),
                          epsabs=0, epsrel=1e-11, limit=200)
        assert r.p_n_clusters[k - 1] == pytest.approx(pk, rel=1e-8)
    same = prior.expect(lambda t: 1 / (1 + t), epsabs=0, epsrel=1e-11)
    np.testing.assert_allclose(r.coclustering[~np.eye(n, dtype=bool)], same, rtol=1e-9)


def test_row_permutation_equivariance():
    perm = np.array([4, 0, 5, 2, 1, 3])
    r = exact_x6(PRIOR6)
    rp = exact_dp_posterior(X6[perm], BETA6, PRIOR6)
    np.testing.assert_allclose(rp.p_n_clusters, r.p_n_clusters, rtol=1e-12)
    np.testing.assert_allclose(rp.coclustering, r.coclustering[np.ix_(perm, perm)], rtol=1e-12)
    assert rp.alpha_mean == pytest.approx(r.alpha_mean, rel=1e-12)


def test_alpha_cdf_and_pdf_are_consistent():
    r = exact_x6(PRIOR6)
    assert np.all(np.diff(r.alpha_cdf_values) >= 0)
    assert r.alpha_cdf_values[0] == pytest.approx(1e-6, abs=1e-8)
    assert r.alpha_cdf_values[-1] == pytest.approx(1 - 1e-6, abs=1e-8)
    assert r.alpha_cdf(np.inf) == 1.0 and r.alpha_cdf(0.0) == 0.0
    opts = dict(epsabs=0, epsrel=1e-11, limit=200)
    assert quad(r.alpha_pdf, 0, np.inf, **opts)[0] == pytest.approx(1.0, rel=1e-9)
    assert quad(lambda t: t * r.alpha_pdf(t), 0, np.inf, **opts)[0] == \
        pytest.approx(r.alpha_mean, rel=1e-9)
    assert quad(lambda t: (t - r.alpha_mean) ** 2 * r.alpha_pdf(t), 0, np.inf, **opts)[0] == \
        pytest.approx(r.alpha_var, rel=1e-9)
    for t in [0.05, 0.5, 1.0, 2.0, 5.0, 12.0]:
        assert r.alpha_cdf(t) == pytest.approx(quad(r.alpha_pdf, 0, t, **opts)[0], abs=1e-11)


def test_rare_states_of_k_are_pooled_into_tails():
    r = exact_x6(PRIOR6)      # P(K = 1) = 0.008, the others >= 0.07
    assert [e[0] for e in n_cluster_events(r)] == [f"K={k}" for k in range(1, 7)]
    events = {name: (low, high, p) for name, low, high, p in n_cluster_events(r, 0.05)}
    assert list(events) == ["K=2", "K=3", "K=4", "K=5", "K=6", "K<=2"]
    assert events["K<=2"][2] == pytest.approx(r.p_n_clusters[:2].sum(), rel=1e-12)
    wrong = exact_x6((1.0, 2.0))   # P(K = 1), P(K = 6) < 0.05 < P(K = 2)
    events = {name: (low, high) for name, low, high, _ in n_cluster_events(wrong, 0.05)}
    assert events == {"K=2": (2, 2), "K=3": (3, 3), "K=4": (4, 4), "K=5": (5, 5),
                      "K<=2": (1, 2), "K>=5": (5, 6)}


def test_rejects_too_many_rows_and_bad_priors():
    with pytest.raises(ValueError):
        exact_dp_posterior(np.ones((11, 2)), 1.0)
    with pytest.raises(ValueError):
        exact_dp_posterior(X6, 1.0, (0.0, 1.0))
    with pytest.raises(ValueError):
        exact_dp_posterior(X6, -1.0)


# --------------------------------------------------------------------------- MC error helpers
def test_batch_means_on_iid_and_ar1():
    rng = np.random.default_rng(1)
    x = rng.normal(size=50_000)
    se = batch_means_se(x, 50)
    assert se == pytest.approx(1 / math.sqrt(x.size), rel=0.3)
    assert effective_sample_size(x) == pytest.approx(x.size, rel=0.5)
    rho = 0.9  # AR(1): ESS ~ n (1 - rho) / (1 + rho)
    y = np.empty(200_000)
    y[0] = 0
    e = rng.normal(size=y.size)
    for t in range(1, y.size):
        y[t] = rho * y[t - 1] + e[t]
    assert effective_sample_size(y) == pytest.approx(y.size * (1 - rho) / (1 + rho), rel=0.4)


# --------------------------------------------------------------------------- collapsed Gibbs
# 20,000 sweeps (ESS of alpha ~8,000) take ~1.2 s; the deviations of a correct run stay below 2.5
# over seeds, those against a wrong prior exceed 60.
N_SWEEPS, BURN_IN, Z_CRIT = 20_000, 1_000, 4.0


@pytest.fixture(scope="module")
def gibbs_trace():
    return collapsed_gibbs_dp(X6, BETA6, PRIOR6, n_iter=N_SWEEPS, random_state=12345,
                              burn_in=BURN_IN)


def deviations(trace, exact):
    """``mc_deviations`` of a collapsed Gibbs trace: P(K = k), alpha and all co-clusterings."""
    return mc_deviations(exact, trace.n_clusters, trace.alpha, trace.z)


def test_collapsed_gibbs_matches_enumeration(gibbs_trace):
    """P(K = k), E[alpha], Var[alpha], the CDF of alpha at 5 quantiles and all 15 co-clustering
    probabilities (28 summaries) within 4 batch-means standard errors: false-alarm probability
    ~2e-4 per summary (t with 49 degrees of freedom), ~6e-3 in all."""
    exact = exact_x6(PRIOR6)
    assert effective_sample_size(gibbs_trace.alpha) > 4_000
    dev = deviations(gibbs_trace, exact)
    assert len(dev) == 6 + 2 + 5 + 15
    assert max(dev.values()) < Z_CRIT, dev
    # KS-type check of the whole alpha marginal, thinned for near-independence
    sample = np.sort(gibbs_trace.alpha[::10])
    ks = np.max(np.abs(exact.alpha_cdf(sample) - np.arange(1, sample.size + 1) / sample.size))
    assert ks < 1.63 / math.sqrt(sample.size)  # 1% KS critical value


def test_comparison_has_power_against_a_wrong_prior(gibbs_trace):
    """The same trace is clearly rejected against the posterior under a rate-2 alpha prior."""
    wrong = exact_x6((1.0, 2.0))
    assert max(deviations(gibbs_trace, wrong).values()) > 3 * Z_CRIT


def test_collapsed_gibbs_fixed_alpha_matches_enumeration():
    alpha = 0.7
    trace = collapsed_gibbs_dp(X6, BETA6, alpha, n_iter=10_000, random_state=7, burn_in=500,
                               z_init=[0] * 6)
    assert np.all(trace.alpha == alpha)
    exact = exact_x6(alpha)
    dev = deviations(trace, exact)
    assert len(dev) == 6 + 15
    assert max(dev.values()) < Z_CRIT, dev


def test_collapsed_gibbs_is_reproducible():
    t1 = collapsed_gibbs_dp(X6, BETA6, PRIOR6, n_iter=200, random_state=3)
    t2 = collapsed_gibbs_dp(X6, BETA6, PRIOR6, n_iter=200, random_state=3)
    np.testing.assert_array_equal(t1.n_clusters, t2.n_clusters)
    np.testing.assert_array_equal(t1.alpha, t2.alpha)
    assert t1.p_n_clusters().sum() == pytest.approx(1.0)
    np.testing.assert_allclose(np.diag(t1.coclustering()), 1.0)
