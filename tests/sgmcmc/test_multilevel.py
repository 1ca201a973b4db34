"""Tests of multilevel SGLD (simplexsg.sgmcmc.multilevel; Nagapetyan et al. 2017).

Monte Carlo tolerances: an MLMC estimate has standard error se = sqrt(sum_l V_l / N_l) (levels
and samples independent); a difference of two independent estimates has se =
sqrt(se_1^2 + se_2^2). Means are compared at Z standard errors (stated at each test). All seeds
are fixed, so every test is deterministic.
"""
import numpy as np
import pytest

from simplexsg.sgmcmc import (SGLD, LinearRegressionModel, LogisticRegressionModel,
                              MinibatchGradient, find_centre, sample)
from simplexsg.sgmcmc.multilevel import (MultilevelResult, _StepMap, level_schedule,
                                         multilevel_estimate)


def logistic_data(N, seed=0):
    """The paper's design (Section 4): covariates (N(0,1), N(0,1), 1), labels from the model
    with coefficients (1, -1, 0.5)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.standard_normal((N, 2)), np.ones(N)])
    y = (rng.random(N) < 1 / (1 + np.exp(-X @ np.array([1.0, -1.0, 0.5])))).astype(float)
    return X, y


def linear_data(N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 2))
    return X, X @ np.array([1.0, -0.5]) + rng.standard_normal(N)


@pytest.fixture(scope="module")
def logistic():
    model, data = LogisticRegressionModel(), logistic_data(300)
    return model, data, find_centre(model, data)


def sq_dist(c):
    """The paper's test function g(theta) = |theta - theta_MAP|^2."""
    return lambda theta: ((theta - c) ** 2).sum(axis=-1)


@pytest.mark.parametrize("coupling", ["synchronous", "antithetic"])
def test_telescoping_sum_matches_direct_finest_level(logistic, coupling):
    # sum_l E[Delta_l] = E[f_L] exactly (paper eq. 4): the coarse path of level l has the law of
    # the fine path of level l-1 (eq. 8). Checked against an independent direct estimate of
    # E f_L by the package's own driver (``sample``: SGLD with MinibatchGradient without
    # replacement, s_L steps of h_L from the MAP, 4000 chains), plain minibatch gradient (its
    # level differences are large, sum_{l>=1} |E Delta_l| ~ 1.6 x E f_L, so a wrong coarse law
    # would show). Z = 4 combined standard errors.
    model, data, c = logistic
    N, L, m = len(data[1]), 3, 5
    g = sq_dist(c)
    res = multilevel_estimate(model, data, g, max_level=L, m=m, gradient="minibatch",
                              coupling=coupling, batch_size=7, n_samples=[4000] * (L + 1),
                              centre=c, random_state=11)
    s_L = level_schedule(L, m)[0]
    direct = sample(model, data, MinibatchGradient(7), SGLD(1.0 / N / 2 ** L), s_L,
                    theta0=np.tile(c, (4000, 1)), thin=s_L, random_state=12).chain[-1]
    vals = g(direct)
    se = np.hypot(res.standard_error, vals.std(ddof=1) / np.sqrt(len(vals)))
    assert np.abs(res.means[1:]).sum() > vals.mean()   # the check has teeth
    assert abs(res.estimate - vals.mean()) <= 4 * se, (res.estimate, vals.mean(), se)


@pytest.mark.parametrize("gradient, coupling, lo, hi", [
    # Expected (paper Section 4.1, Fig. 2b): Var Delta_l ~ h_l^beta, beta = 1 for Algorithm 1
    # (synchronous: fine and coarse minibatches differ, an O(1) gradient-noise difference per
    # step) and beta = 2 for Algorithm 2 (antithetic). Over levels 1..5 the synchronous
    # slope is pre-asymptotic: at coarse levels the Brownian term dominates (slope -2), at fine
    # levels the minibatch noise (slope -1), so its fitted slope lies between; the band
    # [-1.8, -0.8] admits that. Antithetic: [-2.4, -1.7] around -2. Monte Carlo error of a
    # fitted slope: log2 V_l from 800 samples has sd ~ 0.1-0.2, giving ~0.05 on the slope over
    # 5 levels, so each band is >= 5 standard errors from its observed value.
    ("minibatch", "synchronous", -1.8, -0.8),
    ("minibatch", "antithetic", -2.4, -1.7),
    ("taylor", "antithetic", -2.4, -1.7),
])
def test_level_variance_decays_at_the_expected_rate(logistic, gradient, coupling, lo, hi):
    # Fixed horizon T = 5 h_0 (all paths start at the MAP; no shifting coupling), so the
    # variance reflects the coupling alone.
    model, data, c = logistic
    L = 5
    res = multilevel_estimate(model, data, sq_dist(c), max_level=L, horizon="fixed",
                              gradient=gradient, coupling=coupling, batch_size=7,
                              n_samples=[800] * (L + 1), centre=c, random_state=3)
    slope = np.polyfit(np.arange(1, L + 1), np.log2(res.variances[1:]), 1)[0]
    assert lo <= slope <= hi, (slope, np.log2(res.variances))
    # Weak order 1 (paper Section 2.2: |E Delta_l| = O(h_l)): halves per level, checked on the
    # last two levels, whose means are > 10 standard errors from 0 here.
    ratio = res.means[L] / res.means[L - 1]
    assert 0.3 <= ratio <= 0.7, ratio


def test_gaussian_posterior_mean_with_exact_bias():
    # Linear regression, Gaussian posterior N(mu, H^-1). The gradient estimate is unbiased and
    # affine in theta, so SGLD's mean solves E theta_{k+1} = (I - h H) E theta_k + h H mu:
    # E theta_s = mu + (I - h H)^s (theta0 - mu), exactly, for every gradient (minibatch noise
    # changes the covariance, not the mean; SGLD has no O(h) bias in the mean of a Gaussian).
    # The only bias is that of the finite horizon T_L from theta0, accounted for exactly.
    # Check: |estimate - mu - bias_L| <= 3 standard errors, per coordinate.
    model = LinearRegressionModel(prior_precision=1.0, noise_precision=1.0)
    data = linear_data(200)
    mu, _ = model.posterior(data)
    X = data[0]
    H = np.eye(2) + X.T @ X
    theta0 = mu + np.array([0.5, -0.3])
    L, m, h0 = 4, 2, 0.25 / 200     # h_0 = N^-1 / 4: minibatch noise at h_0 = 1/N swamps SE
    for gradient in ("minibatch", "cv"):
        res = multilevel_estimate(model, data, lambda t: t, h0=h0, max_level=L, m=m,
                                  gradient=gradient, theta0=theta0, batch_size=20,
                                  n_samples=[2000, 1000, 500, 300, 200], random_state=5)
        h_L, s_L = h0 / 2 ** L, level_schedule(L, m)[0]
        bias = np.linalg.matrix_power(np.eye(2) - h_L * H, s_L) @ (theta0 - mu)
        assert res.estimate.shape == (2,) and res.means.shape == (L + 1, 2)
        assert np.all(np.abs(res.estimate - mu - bias) <= 3 * res.standard_error), \
            (gradient, res.estimate, mu + bias, res.standard_error)
        # The horizon bias is ~15 se here (so accounting for it matters):
        assert np.abs(bias).max() > 3 * res.standard_error.max()


def test_taylor_gradient_is_exact_for_a_quadratic_log_likelihood():
    # The Taylor remainder of a quadratic log-likelihood is 0, so eq. 11 is the full gradient.
    model = LinearRegressionModel(prior_precision=2.0)
    data = linear_data(50)
    mu, _ = model.posterior(data)
    step = _StepMap(model, data, "taylor", 5, mu)
    theta = np.random.default_rng(0).standard_normal((4, 2))
    idx = np.random.default_rng(1).integers(50, size=(4, 5))
    np.testing.assert_allclose(step.grad(theta, idx), model.grad_log_posterior(theta, data),
                               rtol=1e-10, atol=1e-8)


def test_mlmc_rule_and_reproducibility(logistic):
    model, data, c = logistic
    kw = dict(max_level=3, horizon="fixed", gradient="taylor", average=0.5, centre=c,
              target_rmse=1e-3, n_pilot=50)
    a = multilevel_estimate(model, data, sq_dist(c), random_state=7, **kw)
    b = multilevel_estimate(model, data, sq_dist(c), random_state=np.random.SeedSequence(7),
                            **kw)
    assert isinstance(a, MultilevelResult)
    assert a.estimate == b.estimate and np.array_equal(a.n_samples, b.n_samples)
    c2 = multilevel_estimate(model, data, sq_dist(c), random_state=8, **kw)
    assert a.estimate != c2.estimate
    # Giles' rule with half the MSE to variance: se = target / sqrt 2 if the variances were
    # known. They come from the pilot (50 samples per level: relative sd sqrt(2/49) = 0.2 on
    # each V_l, so about 0.1 on the realised se); 1.35 allows 3.5 of those sds. Samples fall
    # with level.
    assert a.standard_error <= 1e-3 / np.sqrt(2) * 1.35
    assert np.all(np.diff(a.n_samples) <= 0)
    assert a.total_cost == pytest.approx((a.n_samples * a.costs).sum())
    # A budget is respected up to the pilot and rounding.
    r = multilevel_estimate(model, data, sq_dist(c), max_level=2, horizon="fixed",
                            gradient="cv", centre=c, budget=3e5, n_pilot=20, random_state=1)
    assert r.total_cost <= 3e5 + 3 * 20 * r.costs.max()


@pytest.mark.parametrize("kwargs, match", [
    (dict(h0=0.0), "h0"),
    (dict(max_level=-1), "max_level"),
    (dict(gradient="svrg"), "gradient"),
    (dict(coupling="reflection"), "coupling"),
    (dict(horizon="forever"), "horizon"),
    (dict(batch_size=10 ** 6), "batch_size"),
    (dict(average=1.5), "average"),
    (dict(n_samples=[10, 10]), "n_samples"),
    (dict(n_samples=[10, 10, 10, 1], target_rmse=0.1), "exactly one"),
    (dict(n_samples=[10, 10, 10, 1]), r"n_samples\[3\]"),
    (dict(n_samples=None, target_rmse=-1.0), "target_rmse"),
    (dict(n_samples=None, budget=1e4, adaptive_levels=True), "adaptive_levels"),
    (dict(n_samples=[10] * 4, centre=[0.0, 0.0]), "centre"),
    (dict(n_samples=[10] * 4, theta0=[0.0]), "theta0"),
])
def test_bad_input_raises(logistic, kwargs, match):
    model, data, c = logistic
    kwargs = dict(dict(max_level=3, n_samples=[10] * 4), **kwargs)
    with pytest.raises(ValueError, match=match):
        multilevel_estimate(model, data, sq_dist(c), **kwargs)


def test_bad_f_raises(logistic):
    model, data, c = logistic
    with pytest.raises(ValueError, match="f must"):
        multilevel_estimate(model, data, lambda t: t.sum(), max_level=1, n_samples=[5, 5],
                            centre=c)
    with pytest.raises(ValueError, match="f must be callable"):
        multilevel_estimate(model, data, 3.0, max_level=1, n_samples=[5, 5], centre=c)
