"""Statistical tests of the SGLD family (simplexsg.sgmcmc) against exact answers.

Monte Carlo tolerances: a mean of M iid draws is compared with its exact value at Z = 5 standard
errors (sample sd / sqrt(M); two-sided false-failure rate 6e-7 per assertion). A sample
covariance entry is an average of M iid products, so its standard error is the sd of those
products / sqrt(M). Chains: many independent chains run together (theta of shape
(n_chains, d)); each chain's time average over the kept steps is one iid draw, so the standard
error of the average over chains is the sd across chains / sqrt(n_chains), whatever the
autocorrelation within a chain. Burn-in is long enough that the start is forgotten to
< 1e-6 of the stationary covariance (stated at each test). All seeds are fixed.
"""
import numpy as np
import pytest
from scipy import linalg

from simplexsg import schedules
from simplexsg.sgmcmc import (SGD, SGHMC, SGLD, ControlVariateGradient, FullGradient,
                                LinearRegressionModel, LogisticRegressionModel,
                                LangevinState, MinibatchGradient, find_centre, sample)
from simplexsg.sgmcmc.gradients import NoiseTrackingGradient, noise_estimate_from_aux

from helpers.sgmcmc_exact import kron_moment, minibatch_cov, stationary_cov
from helpers.stats import Z


def regression_data(N, d, seed, logistic=False):
    """Correlated Gaussian covariates and responses from a linear or logistic model."""
    rng = np.random.default_rng(seed)
    mix = np.eye(d) + 0.5 * np.tril(np.ones((d, d)), -1)
    X = rng.standard_normal((N, d)) @ mix.T
    eta = X @ np.linspace(1.0, -1.0, d)
    if logistic:
        return X, (rng.random(N) < 1 / (1 + np.exp(-eta))).astype(float)
    return X, eta + rng.standard_normal(N)


def assert_mean_cov(draws, mean, cov):
    """Mean and covariance of iid rows ``draws`` (M, p) agree with exact values within Z SE."""
    m = len(draws)
    est = draws.mean(axis=0)
    assert np.all(np.abs(est - mean) <= Z * draws.std(axis=0, ddof=1) / np.sqrt(m)), (est, mean)
    c = draws - est
    prods = c[:, :, None] * c[:, None, :]
    s = prods.mean(axis=0)
    se = prods.std(axis=0, ddof=1) / np.sqrt(m)
    assert np.all(np.abs(s - cov) <= Z * se), (s, cov, se)
    return s, se


# ------------------------------------------------------------------------------------------
# Gradient estimators
# ------------------------------------------------------------------------------------------

MODELS = {
    "linear": (LinearRegressionModel(prior_mean=0.2, prior_precision=2.0, noise_precision=1.5),
               False),
    "logistic": (LogisticRegressionModel(prior_precision=0.5), True),
}


@pytest.mark.parametrize("model_name", sorted(MODELS))
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("N, n", [(50, 20), (300, 6)])  # argpartition / Floyd index draws
def test_minibatch_gradient_is_unbiased_with_the_finite_population_covariance(model_name, replace,
                                                                              N, n):
    model, logistic = MODELS[model_name]
    data = regression_data(N, 3, seed=N + n, logistic=logistic)
    theta = np.array([0.5, -0.3, 0.8])
    per_datum = model.grad_log_lik(theta, data)
    exact_cov = minibatch_cov(per_datum, n, replace)
    est = MinibatchGradient(n, replace=replace).prepare(model, data)
    # 20000 independent minibatches in one call: theta tiled as 20000 "chains".
    draws = est(model, data, np.tile(theta, (20_000, 1)), random_state=n)
    _, se = assert_mean_cov(draws, model.grad_log_posterior(theta, data), exact_cov)
    if not replace and n / N > 0.2:
        # Power: the with-replacement covariance (39% larger at N=50, n=20) is rejected.
        wrong = minibatch_cov(per_datum, n, True)
        assert np.all(np.abs(np.diag(wrong - exact_cov)) > 2 * Z * np.diag(se))


@pytest.mark.parametrize("replace", [False, True])
def test_single_chain_minibatches_have_the_same_law(replace):
    # theta of shape (d,) draws indices with Generator.choice / integers: 3000 separate calls.
    model, _ = MODELS["linear"]
    data = regression_data(40, 2, seed=3)
    theta = np.array([0.1, 0.4])
    est, rng = MinibatchGradient(15, replace=replace), np.random.default_rng(4)
    draws = np.array([est(model, data, theta, rng) for _ in range(3000)])
    exact_cov = minibatch_cov(model.grad_log_lik(theta, data), 15, replace)
    assert_mean_cov(draws, model.grad_log_posterior(theta, data), exact_cov)


@pytest.mark.parametrize("model_name", sorted(MODELS))
@pytest.mark.parametrize("replace", [False, True])
def test_control_variate_gradient_is_unbiased_and_exact_at_the_centre(model_name, replace):
    model, logistic = MODELS[model_name]
    N, n = 120, 8
    data = regression_data(N, 3, seed=7, logistic=logistic)
    centre = np.array([0.9, 0.1, -0.7])
    est = ControlVariateGradient(centre, n, replace=replace).prepare(model, data)
    np.testing.assert_allclose(est.centre_gradient, model.grad_log_posterior(centre, data),
                               rtol=1e-13)
    # At the centre the noise is exactly 0, for batched and single chains.
    at_centre = est(model, data, np.tile(centre, (500, 1)), random_state=1)
    assert np.array_equal(at_centre, np.broadcast_to(est.centre_gradient, at_centre.shape))
    assert np.array_equal(est(model, data, centre, random_state=2), est.centre_gradient)
    # Away from it: unbiased, with the minibatch covariance of the per-datum differences.
    theta = centre + np.array([0.3, -0.2, 0.1])
    diffs = model.grad_log_lik(theta, data) - model.grad_log_lik(centre, data)
    draws = est(model, data, np.tile(theta, (20_000, 1)), random_state=3)
    assert_mean_cov(draws, model.grad_log_posterior(theta, data), minibatch_cov(diffs, n, replace))


def test_full_gradient_matches_finite_differences_of_the_log_posterior():
    for model, logistic in MODELS.values():
        data = regression_data(30, 3, seed=1, logistic=logistic)
        theta, eps = np.array([0.3, -0.5, 0.2]), 1e-6
        numeric = [(model.log_posterior(theta + eps * e, data)
                    - model.log_posterior(theta - eps * e, data)) / (2 * eps) for e in np.eye(3)]
        np.testing.assert_allclose(FullGradient()(model, data, theta), numeric, rtol=1e-6)
        # Batched chains give the same rows as one chain at a time.
        thetas = np.array([theta, -theta])
        np.testing.assert_allclose(model.grad_log_posterior(thetas, data),
                                   [model.grad_log_posterior(t, data) for t in thetas], rtol=1e-12)


# ------------------------------------------------------------------------------------------
# Stationary moments on Bayesian linear regression (Brosse, Durmus & Moulines 2018, Section 3)
# ------------------------------------------------------------------------------------------

N_LR, BATCH_LR = 200, 10
LR_MODEL = LinearRegressionModel(prior_precision=1.0, noise_precision=1.0)
LR_DATA = regression_data(N_LR, 2, seed=2024)
LR_MEAN, LR_COV = LR_MODEL.posterior(LR_DATA)
LR_H = np.linalg.inv(LR_COV)
LR_STEP = 0.5 / np.linalg.eigvalsh(LR_H).max()      # h lambda_max(H) = 0.5: stable, h ∝ 1/N
LR_OFFSET = np.array([3.0, -2.0]) * np.sqrt(np.diag(LR_COV))  # centre 3.6 posterior sd away


def closed_form_cov(c_rho, c_xi, c_z, u=None, replace=False):
    """Stationary covariance V of delta = theta - theta* under
    delta' = (I - hH - h c_rho rho) delta - h c_xi xi + c_z sqrt(2h) Z, with the minibatch
    gradient's multiplicative noise rho(S) and additive noise xi(S) of Brosse, Durmus & Moulines
    (2018, Section 3.1, decomposition (6)), independent of delta: it solves
    V = (I-hH) V (I-hH) + c_rho h^2 E[rho V rho] + c_xi h^2 Sigma_xi + c_z 2h I,
    plus h^2 E[rho u u^T rho] for a control variate centred at theta* - u."""
    X, y = LR_DATA
    h, d, tau = LR_STEP, 2, LR_MODEL.noise_precision
    K_rho = kron_moment(tau * X[:, :, None] * X[:, None, :], BATCH_LR, replace)
    sigma_xi = minibatch_cov(LR_MODEL.grad_log_lik(LR_MEAN, LR_DATA), BATCH_LR, replace)
    Q = c_xi * h ** 2 * sigma_xi + c_z * 2 * h * np.eye(d)
    if u is not None:
        Q = Q + h ** 2 * (K_rho @ np.outer(u, u).ravel()).reshape(d, d)
    return stationary_cov(np.eye(d) - h * LR_H, c_rho * h ** 2 * K_rho, Q)


def chain_moments(estimator, integrator, seed, n_chains=1000, burn=150, keep=600):
    """Per-chain time averages of delta and delta delta^T (delta = theta - theta*) of
    ``n_chains`` chains started at theta*; returns (means (c, d), second moments (c, d, d)).
    Burn-in: the covariance forgets its start to < 1e-12 (checked in the closed-form test)."""
    res = sample(LR_MODEL, LR_DATA, estimator, integrator, burn + keep,
                 theta0=np.tile(LR_MEAN, (n_chains, 1)), random_state=seed)
    delta = res.chain[burn:] - LR_MEAN
    return delta.mean(axis=0), np.einsum("tci,tcj->cij", delta, delta) / keep


def assert_chain_moments(means, second, cov):
    """The chains' stationary mean is theta* and covariance ``cov``, within Z SE across chains."""
    c = len(means)
    assert np.all(np.abs(means.mean(0)) <= Z * means.std(0, ddof=1) / np.sqrt(c)), means.mean(0)
    se = second.std(0, ddof=1) / np.sqrt(c)
    assert np.all(np.abs(second.mean(0) - cov) <= Z * se), (second.mean(0), cov, se)
    return second.mean(0), se


def test_closed_forms_agree_with_each_other():
    h, lmc = LR_STEP, closed_form_cov(0, 0, 1)
    # Burn-in claim of chain_moments: the covariance recursion's operator (with and without
    # the minibatch Hessian noise) raised to the burn-in of 150 steps is < 1e-12.
    X = LR_DATA[0]
    M0 = np.eye(2) - h * LR_H
    for c_rho, replace in [(0, False), (1, False), (1, True)]:
        K = c_rho * h ** 2 * kron_moment(X[:, :, None] * X[:, None, :], BATCH_LR, replace)
        assert np.abs(np.linalg.eigvals(np.kron(M0, M0) + K)).max() ** 150 < 1e-12
    np.testing.assert_allclose(lmc, np.linalg.inv(LR_H) @ np.linalg.inv(np.eye(2) - h * LR_H / 2),
                               rtol=1e-10)
    np.testing.assert_allclose(lmc, linalg.solve_discrete_lyapunov(np.eye(2) - h * LR_H,
                                                                   2 * h * np.eye(2)), rtol=1e-10)
    # V_SGLD = V_SGLDFP + V_SGD exactly (the source term is linear).
    np.testing.assert_allclose(closed_form_cov(1, 1, 1),
                               closed_form_cov(1, 0, 1) + closed_form_cov(1, 1, 0), rtol=1e-10)
    # SGLD is far wider than the posterior; SGLD-CV only slightly (here 4.7x vs 1.25x).
    assert np.trace(closed_form_cov(1, 1, 1)) > 4 * np.trace(LR_COV)
    assert np.trace(closed_form_cov(1, 0, 1)) < 1.6 * np.trace(LR_COV)


CHAINS = {  # name: (estimator, integrator, closed form)
    "LMC": (FullGradient(), SGLD(LR_STEP), lambda: closed_form_cov(0, 0, 1)),
    "SGLD": (MinibatchGradient(BATCH_LR), SGLD(LR_STEP), lambda: closed_form_cov(1, 1, 1)),
    "SGLD with replacement": (MinibatchGradient(BATCH_LR, replace=True), SGLD(LR_STEP),
                              lambda: closed_form_cov(1, 1, 1, replace=True)),
    "SGLD-CV": (ControlVariateGradient(LR_MEAN, BATCH_LR), SGLD(LR_STEP),
                lambda: closed_form_cov(1, 0, 1)),
    "SGLD-CV offset centre": (ControlVariateGradient(LR_MEAN - LR_OFFSET, BATCH_LR), SGLD(LR_STEP),
                              lambda: closed_form_cov(1, 0, 1, u=LR_OFFSET)),
    "SGD": (MinibatchGradient(BATCH_LR), SGD(LR_STEP), lambda: closed_form_cov(1, 1, 0)),
}


@pytest.fixture(scope="module")
def lr_chain_moments():
    return {name: chain_moments(est, integ, seed=i)
            for i, (name, (est, integ, _)) in enumerate(CHAINS.items())}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHAINS))
def test_stationary_mean_and_covariance_match_the_lyapunov_solution(lr_chain_moments, name):
    assert_chain_moments(*lr_chain_moments[name], CHAINS[name][2]())


def test_offset_centre_inflation_is_detected(lr_chain_moments):
    # Power: the offset-centre chain rejects the exact-centre covariance by a wide margin.
    est, se = assert_chain_moments(*lr_chain_moments["SGLD-CV offset centre"],
                                   closed_form_cov(1, 0, 1, u=LR_OFFSET))
    assert np.abs(est - closed_form_cov(1, 0, 1))[0, 0] > 3 * Z * se[0, 0]


def test_sgld_covariance_is_sgld_cv_plus_sgd_empirically(lr_chain_moments):
    # Three independent runs: the SE of the difference is the root sum of squared SEs.
    parts = [lr_chain_moments[k][1] for k in ("SGLD", "SGLD-CV", "SGD")]
    ests = [p.mean(0) for p in parts]
    ses = [p.std(0, ddof=1) / np.sqrt(len(p)) for p in parts]
    gap = ests[0] - ests[1] - ests[2]
    assert np.all(np.abs(gap) <= Z * np.sqrt(sum(s ** 2 for s in ses))), gap


# ------------------------------------------------------------------------------------------
# SGHMC stationary moments
# ------------------------------------------------------------------------------------------

def sghmc_closed_form(h, gamma, H, K=None, sigma_xi=None):
    """Stationary covariance of s = (delta, r) (2d,) under SGHMC on a Gaussian target:
    r' = (1-h gamma) r - h (H + rho) delta - h xi + sqrt(2 gamma h) Z, delta' = delta + h r'.
    The noise on s is kron((h, 1), -h xi + sqrt(2 gamma h) Z); the multiplicative part is
    -kron([[h^2, 0], [h, 0]], rho), whose E[kron(., .)] is ``K``."""
    d = len(H)
    I = np.eye(d)
    M0 = np.block([[I - h * h * H, h * (1 - h * gamma) * I], [-h * H, (1 - h * gamma) * I]])
    B = np.outer([h, 1.0], [h, 1.0])
    Q = np.kron(B, 2 * gamma * h * I + (0 if sigma_xi is None else h * h * sigma_xi))
    return stationary_cov(M0, 0.0 if K is None else K, Q)


def test_sghmc_with_full_gradients_matches_the_posterior_for_small_steps():
    # N = 50 posterior; h sqrt(lambda_max) = 0.05, friction 2 sqrt(lambda_min) (about critical).
    model, data = LR_MODEL, regression_data(50, 2, seed=99)
    mean, cov = model.posterior(data)
    H = np.linalg.inv(cov)
    lam = np.linalg.eigvalsh(H)
    h, gamma = 0.05 / np.sqrt(lam.max()), 2 * np.sqrt(lam.min())
    exact = sghmc_closed_form(h, gamma, H)[:2, :2]
    burn, keep, chains = 600, 1500, 1000
    # Burn-in: spectral radius of the mean recursion ^ burn < 1e-6 (checked).
    M0 = np.block([[np.eye(2) - h * h * H, h * (1 - h * gamma) * np.eye(2)],
                   [-h * H, (1 - h * gamma) * np.eye(2)]])
    assert np.abs(np.linalg.eigvals(M0)).max() ** burn < 1e-6
    res = sample(model, data, FullGradient(), SGHMC(h, friction=gamma), burn + keep,
                 theta0=np.tile(mean, (chains, 1)), random_state=5)
    delta = res.chain[burn:] - mean
    means, second = delta.mean(0), np.einsum("tci,tcj->cij", delta, delta) / keep
    est, se = assert_chain_moments(means, second, exact)
    # Small steps: the discretisation bias is below the Monte Carlo resolution, so the
    # posterior covariance passes the same test.
    assert np.all(np.abs(exact - cov) < se)
    assert np.all(np.abs(est - cov) <= Z * se)


def test_sghmc_with_minibatch_gradients_matches_its_lyapunov_solution():
    # Minibatch noise inflates SGHMC's covariance; the joint (delta, r) recursion has the
    # multiplicative and additive noise rho(S), xi(S) of closed_form_cov.
    model, data = LR_MODEL, regression_data(60, 2, seed=98)
    mean, cov = model.posterior(data)
    H = np.linalg.inv(cov)
    lam = np.linalg.eigvalsh(H)
    h, gamma, n = 0.3 / np.sqrt(lam.max()), np.sqrt(lam.min()), 4
    X, tau = data[0], model.noise_precision
    D = np.einsum("ab,nij->naibj", np.array([[h * h, 0.0], [h, 0.0]]),
                  tau * X[:, :, None] * X[:, None, :]).reshape(len(X), 4, 4)
    K = kron_moment(D, n, True)
    sigma_xi = minibatch_cov(model.grad_log_lik(mean, data), n, True)
    exact = sghmc_closed_form(h, gamma, H, K=K, sigma_xi=sigma_xi)[:2, :2]
    assert np.trace(exact) > 2 * np.trace(cov)   # the gradient noise matters (x2.45)
    burn, keep, chains = 300, 1200, 1000
    # Burn-in: the covariance recursion's operator, raised to the burn-in, is < 1e-6.
    M0 = np.block([[np.eye(2) - h * h * H, h * (1 - h * gamma) * np.eye(2)],
                   [-h * H, (1 - h * gamma) * np.eye(2)]])
    assert np.abs(np.linalg.eigvals(np.kron(M0, M0) + K)).max() ** burn < 1e-6
    res = sample(model, data, MinibatchGradient(n, replace=True), SGHMC(h, friction=gamma),
                 burn + keep, theta0=np.tile(mean, (chains, 1)), random_state=6)
    delta = res.chain[burn:] - mean
    assert_chain_moments(delta.mean(0), np.einsum("tci,tcj->cij", delta, delta) / keep, exact)


def test_sghmc_noise_correction_with_a_fixed_estimate_matches_its_lyapunov_solution():
    # Chen et al.'s correction with Sigma_hat = Sigma_xi, the exact covariance of the
    # minibatch gradient's additive noise: the injected noise 2 gamma h I - h^2 Sigma_xi cancels
    # it, so the (delta, r) recursion's noise is kron(B, 2 gamma h I) plus the multiplicative
    # part K alone. Setting of the test above, with friction 4 sqrt(lambda_min), so that
    # h Sigma_xi / (2 gamma) <= 0.62 (no clipping).
    model, data = LR_MODEL, regression_data(60, 2, seed=98)
    mean, cov = model.posterior(data)
    H = np.linalg.inv(cov)
    lam = np.linalg.eigvalsh(H)
    h, gamma, n = 0.3 / np.sqrt(lam.max()), 4 * np.sqrt(lam.min()), 4
    X, tau = data[0], model.noise_precision
    D = np.einsum("ab,nij->naibj", np.array([[h * h, 0.0], [h, 0.0]]),
                  tau * X[:, :, None] * X[:, None, :]).reshape(len(X), 4, 4)
    K = kron_moment(D, n, True)
    sigma_xi = minibatch_cov(model.grad_log_lik(mean, data), n, True)
    assert h * np.linalg.eigvalsh(sigma_xi).max() / (2 * gamma) < 0.65
    exact = sghmc_closed_form(h, gamma, H, K=K)[:2, :2]
    uncorrected = sghmc_closed_form(h, gamma, H, K=K, sigma_xi=sigma_xi)[:2, :2]
    assert np.trace(exact) < 1.06 * np.trace(cov) < np.trace(uncorrected) / 1.25  # 1.05, 1.34
    burn, keep, chains = 200, 1000, 1000
    # Burn-in: the covariance recursion's operator, raised to the burn-in, is < 1e-6.
    M0 = np.block([[np.eye(2) - h * h * H, h * (1 - h * gamma) * np.eye(2)],
                   [-h * H, (1 - h * gamma) * np.eye(2)]])
    assert np.abs(np.linalg.eigvals(np.kron(M0, M0) + K)).max() ** burn < 1e-6
    integrator = SGHMC(h, friction=gamma, noise_estimate=sigma_xi)
    res = sample(model, data, MinibatchGradient(n, replace=True), integrator, burn + keep,
                 theta0=np.tile(mean, (chains, 1)), random_state=8)
    delta = res.chain[burn:] - mean
    est, se = assert_chain_moments(delta.mean(0),
                                   np.einsum("tci,tcj->cij", delta, delta) / keep, exact)
    # Power: the uncorrected chain's covariance is rejected.
    assert np.abs(est - uncorrected).max() > 3 * Z * se.max()


def test_sghmc_online_noise_estimate_matches_the_full_gradient_chain():
    # NoiseTrackingGradient's estimate Sigma_hat (within-minibatch covariance of the per-datum
    # gradients, exponentially averaged) is unbiased for the minibatch gradient's covariance
    # Sigma(theta) at the states it was computed at, and SGHMC injects 2 gamma h I - h^2
    # Sigma_hat independently of the step's own gradient noise. On the linear-Gaussian model
    # Sigma(theta) = Sigma_xi + E_S[rho delta delta^T rho] (+ terms linear in delta, mean 0),
    # so at stationarity E Sigma_hat cancels both the additive and the multiplicative noise
    # (whose contributions to the (delta, r) recursion have the same kron(B, .) form): the
    # stationary covariance is exactly the full-gradient chain's, unless the injected
    # covariance is clipped at 0. Here h Sigma_xi / (2 gamma) = 0.49 and 10-row minibatches:
    # clipping is rare (the largest ratio of the final estimates over the 1000 chains is ~0.8).
    model, data = LR_MODEL, regression_data(100, 2, seed=97)
    mean, cov = model.posterior(data)
    H = np.linalg.inv(cov)
    lam = np.linalg.eigvalsh(H)
    h, gamma, n = 0.2 / np.sqrt(lam.max()), 1.2 * np.sqrt(lam.max()), 10
    sigma_xi = minibatch_cov(model.grad_log_lik(mean, data), n, True)
    assert h * np.linalg.eigvalsh(sigma_xi).max() / (2 * gamma) < 0.5
    exact = sghmc_closed_form(h, gamma, H)[:2, :2]
    uncorrected = sghmc_closed_form(h, gamma, H, sigma_xi=sigma_xi)[:2, :2]
    assert np.trace(uncorrected) > 1.25 * np.trace(exact)          # 1.30
    burn, keep, chains = 200, 600, 1000
    # Burn-in (chains start at the mode): the full-gradient covariance recursion's operator,
    # raised to the burn-in, is < 1e-6.
    M0 = np.block([[np.eye(2) - h * h * H, h * (1 - h * gamma) * np.eye(2)],
                   [-h * H, (1 - h * gamma) * np.eye(2)]])
    assert np.abs(np.linalg.eigvals(np.kron(M0, M0))).max() ** burn < 1e-6
    integrator = SGHMC(h, friction=gamma, noise_estimate=noise_estimate_from_aux)
    res = sample(model, data, NoiseTrackingGradient(n, replace=True), integrator, burn + keep,
                 theta0=np.tile(mean, (chains, 1)), random_state=7)
    assert res.state.aux.shape == (chains, 2, 2)
    delta = res.chain[burn:] - mean
    est, se = assert_chain_moments(delta.mean(0),
                                   np.einsum("tci,tcj->cij", delta, delta) / keep, exact)
    assert np.abs(est - uncorrected).max() > 3 * Z * se.max()


def test_noise_tracking_gradient_estimates_the_minibatch_covariance():
    # One step from fixed states: the estimator's gradient is MinibatchGradient's estimate and
    # its first covariance estimate is unbiased for the exact minibatch covariance
    # (finite-population formula), over 4000 independent chains (Z standard errors).
    model, data = LR_MODEL, regression_data(50, 2, seed=3)
    theta = np.tile([0.4, -0.2], (4000, 1))
    for replace in (False, True):
        estimator = NoiseTrackingGradient(5, replace=replace)
        state = SGHMC(0.1).init(theta, np.random.default_rng(0))
        grad, aux = estimator.step_gradient(model, data, state, 0.1, None,
                                            np.random.default_rng(1))
        same = MinibatchGradient(5, replace=replace)(model, data, theta, np.random.default_rng(1))
        np.testing.assert_allclose(grad, same, rtol=1e-10)
        exact = minibatch_cov(model.grad_log_lik(theta[0], data), 5, replace)
        se = aux.std(axis=0, ddof=1) / np.sqrt(len(aux))
        assert np.all(np.abs(aux.mean(axis=0) - exact) <= Z * se), (aux.mean(0), exact)
        # The exponential average: aux <- aux + memory (new - aux).
        _, aux2 = estimator.step_gradient(model, data, state._replace(aux=aux), 0.1, None,
                                          np.random.default_rng(2))
        _, new = estimator.step_gradient(model, data, state, 0.1, None, np.random.default_rng(2))
        np.testing.assert_allclose(aux2, aux + 0.05 * (new - aux), rtol=1e-12)


def test_sghmc_noise_estimate_forms():
    data = regression_data(50, 2, seed=2)
    est, theta0 = MinibatchGradient(5), np.zeros((3, 2))
    run = lambda integrator: sample(LR_MODEL, data, est, integrator, 20, theta0=theta0,
                                    random_state=4).chain
    plain = run(SGHMC(1e-2, friction=2.0))
    # A zero estimate changes nothing (bit for bit as scalar or diagonal, to rounding as a
    # matrix, whose noise is V sqrt(D) V^T xi).
    assert np.array_equal(run(SGHMC(1e-2, friction=2.0, noise_estimate=0.0)), plain)
    assert np.array_equal(run(SGHMC(1e-2, friction=2.0, noise_estimate=[0.0, 0.0])), plain)
    np.testing.assert_allclose(run(SGHMC(1e-2, friction=2.0, noise_estimate=np.zeros((2, 2)))),
                               plain, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(run(SGHMC(1e-2, friction=2.0, noise_estimate=lambda s: None)),
                               plain, rtol=0, atol=0)
    # An isotropic estimate equals the same diagonal and matrix; one at the whole budget
    # 2 gamma / h removes all the injected noise (the T = 0 chain).
    iso = run(SGHMC(1e-2, friction=2.0, noise_estimate=100.0))
    np.testing.assert_allclose(run(SGHMC(1e-2, friction=2.0, noise_estimate=[100.0, 100.0])),
                               iso, rtol=1e-12)
    np.testing.assert_allclose(run(SGHMC(1e-2, friction=2.0,
                                         noise_estimate=100.0 * np.eye(2))), iso, rtol=1e-10)
    # An estimate above the whole budget 2 gamma T / h is clipped: no noise is injected, as
    # at T = 0 (full gradients, which draw no random numbers, and a given momentum).
    start = LangevinState(np.tile([0.5, -0.5], (3, 1)), np.zeros((3, 2)))
    cold = sample(LR_MODEL, data, FullGradient(), SGHMC(1e-2, friction=2.0, temperature=0.0),
                  20, theta0=start, random_state=4).chain
    clipped = sample(LR_MODEL, data, FullGradient(),
                     SGHMC(1e-2, friction=2.0, noise_estimate=1.01 * 2 * 2.0 / 1e-2), 20,
                     theta0=start, random_state=4).chain
    assert np.array_equal(clipped, cold) and not np.array_equal(cold[-1], cold[0])
    # Value semantics: equal estimates, equal (and hashable) integrators.
    a = SGHMC(0.1, noise_estimate=np.eye(2))
    assert a == SGHMC(0.1, noise_estimate=[[1.0, 0.0], [0.0, 1.0]]) and hash(a) == hash(
        SGHMC(0.1, noise_estimate=np.eye(2)))
    assert a != SGHMC(0.1, noise_estimate=2 * np.eye(2))
    for bad, match in [(-1.0, ">= 0"), ([1.0, np.nan], "noise_estimate"),
                       (np.ones((2, 3)), "square"), ("x", "noise_estimate")]:
        with pytest.raises((ValueError, TypeError), match=match):
            SGHMC(0.1, noise_estimate=bad)


# ------------------------------------------------------------------------------------------
# Driver, centre finding, exact properties
# ------------------------------------------------------------------------------------------

def test_same_seed_same_chain_and_stored_gradients_are_at_the_kept_states():
    data = regression_data(80, 3, seed=0)
    kw = dict(theta0=np.zeros(3), random_state=11, store_gradients=True, thin=3)
    a = sample(LR_MODEL, data, FullGradient(), SGLD(1e-3), 30, **kw)
    b = sample(LR_MODEL, data, FullGradient(), SGLD(1e-3), 30, **kw)
    assert np.array_equal(a.chain, b.chain) and a.chain.shape == (10, 3)
    np.testing.assert_allclose(a.gradients, LR_MODEL.grad_log_posterior(a.chain, data), rtol=1e-12)
    c = sample(LR_MODEL, data, FullGradient(), SGLD(1e-3), 30, **{**kw, "random_state": 12})
    assert not np.array_equal(a.chain, c.chain)
    # thin not dividing n_iter: the last kept state's gradient comes from inside the loop
    d = sample(LR_MODEL, data, FullGradient(), SGLD(1e-3), 31, **kw)
    np.testing.assert_allclose(d.gradients, LR_MODEL.grad_log_posterior(d.chain, data), rtol=1e-12)
    assert np.array_equal(d.chain, a.chain)
    assert a.seconds > 0 and np.array_equal(a.state.theta, a.chain[-1])


@pytest.mark.parametrize("integrator", [SGLD(1e-3), SGHMC(1e-2, friction=2.0)])
def test_continuing_from_the_final_state_equals_one_long_run(integrator):
    data = regression_data(50, 2, seed=2)
    est, theta0 = MinibatchGradient(5), np.zeros((3, 2))
    whole = sample(LR_MODEL, data, est, integrator, 20, theta0=theta0, random_state=4)
    rng = np.random.default_rng(4)
    first = sample(LR_MODEL, data, est, integrator, 10, theta0=theta0, random_state=rng)
    second = sample(LR_MODEL, data, est, integrator, 10, theta0=first.state, random_state=rng)
    assert np.array_equal(np.concatenate([first.chain, second.chain]), whole.chain)


def test_control_variate_chain_starts_at_the_centre():
    data = regression_data(80, 2, seed=1)
    centre = np.array([0.5, -0.5])
    est = ControlVariateGradient(centre, 5)
    res = sample(LR_MODEL, data, est, SGD(1e-3), 1, random_state=0)
    grad = LR_MODEL.grad_log_posterior(centre, data)
    np.testing.assert_allclose(res.chain[0], centre + 1e-3 * grad, rtol=1e-12)


def test_zero_temperature_zero_gradient_leaves_the_state_unchanged():
    theta = np.array([[1.0, 2.0], [3.0, 4.0]])
    rng = np.random.default_rng(0)
    for integ in (SGLD(0.1, temperature=0.0), SGD(0.1)):
        state = integ.init(theta, rng)
        assert np.array_equal(integ.step(state, np.zeros(2), 0.1, rng).theta, theta)
    sghmc = SGHMC(0.1, friction=1.0, temperature=0.0)
    state = sghmc.init(theta, rng)
    assert np.array_equal(state.momentum, np.zeros_like(theta))
    assert np.array_equal(sghmc.step(state, np.zeros(2), 0.1, rng).theta, theta)


def test_step_size_schedule_is_followed():
    # SGD with full gradients is deterministic: compare with steps taken by hand.
    data = regression_data(20, 2, seed=4)
    sched = schedules.Polynomial(0.01, tau=2.0, kappa=0.6)
    res = sample(LR_MODEL, data, FullGradient(), SGD(sched), 5, theta0=np.ones(2))
    theta = np.ones(2)
    for t in range(5):
        theta = theta + sched(t) * LR_MODEL.grad_log_posterior(theta, data)
    np.testing.assert_allclose(res.chain[-1], theta, rtol=1e-12)


def test_find_centre():
    data = regression_data(500, 3, seed=8)
    mean, cov = LR_MODEL.posterior(data)
    sd = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(find_centre(LR_MODEL, data), mean, atol=1e-6 * sd.min())
    logistic = LogisticRegressionModel()
    ldata = regression_data(2000, 3, seed=9, logistic=True)
    mode = find_centre(logistic, ldata)
    assert np.linalg.norm(logistic.grad_log_posterior(mode, ldata)) < 1e-6
    # SGD with Robbins-Monro steps h_t = 1 / (m (t + 10)) (Baker et al. Lemma 3, m the smallest
    # Hessian eigenvalue at the mode), 10 passes: the last iterate is O(N^-1/2) from the mode.
    # Over seeds 0-9 its error is 0.32 posterior sd (rms, Laplace sd), at most 0.77; accept 1.5.
    X = ldata[0]
    p = 1 / (1 + np.exp(-X @ mode))
    hess = X.T @ (X * (p * (1 - p))[:, None]) + np.eye(3)
    lsd = np.sqrt(np.diag(np.linalg.inv(hess)))
    m = np.linalg.eigvalsh(hess).min()
    sgd = find_centre(logistic, ldata, method="sgd", batch_size=50, random_state=0,
                      step_size=schedules.Polynomial(1 / (10 * m), tau=10.0, kappa=1.0))
    assert np.all(np.abs(sgd - mode) < 1.5 * lsd), (sgd - mode) / lsd
    assert np.any(np.abs(mode) > 10 * lsd)   # the start, 0, is far away


def test_verbose_progress_bar_runs():
    pytest.importorskip("tqdm")
    data = regression_data(20, 2, seed=4)
    res = sample(LR_MODEL, data, MinibatchGradient(5), SGLD(1e-3), 3, verbose=1, random_state=0)
    assert res.chain.shape == (3, 2)


# ------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------

GOOD = regression_data(20, 2, seed=0)


@pytest.mark.parametrize("data, match", [
    ((np.ones(20), GOOD[1]), "X must be a non-empty 2-d"),
    ((GOOD[0], GOOD[1][:-1]), r"y must have shape \(20,\)"),
    ((np.where(np.eye(20, 2) > 0, np.nan, GOOD[0]), GOOD[1]), r"X has a non-finite value \(nan\)"),
    ((GOOD[0], np.r_[GOOD[1][:-1], np.inf]), r"y has a non-finite value \(inf\) at index \(19,\)"),
    ((GOOD[0],), "data must be a pair"),
])
def test_bad_data_is_named(data, match):
    with pytest.raises(ValueError, match=match):
        sample(LR_MODEL, data, FullGradient(), SGLD(0.01), 2)


def test_bad_model_parameters_are_named():
    with pytest.raises(ValueError, match="prior_precision"):
        LinearRegressionModel(prior_precision=0.0)
    with pytest.raises(ValueError, match="noise_precision"):
        LinearRegressionModel(noise_precision=-1.0)
    with pytest.raises(ValueError, match="prior_mean has length 3 but X has 2 columns"):
        LinearRegressionModel(prior_mean=[0, 0, 0]).check_data(GOOD)
    with pytest.raises(ValueError, match="y must contain only 0 and 1; found 2.0 at index 0"):
        LogisticRegressionModel().check_data((GOOD[0], np.r_[2.0, np.zeros(19)]))


@pytest.mark.parametrize("make, exc, match", [
    (lambda: SGLD(0.0), ValueError, "step_size must be a finite number > 0, got 0.0"),
    (lambda: SGLD(-1e-3), ValueError, "step_size"),
    (lambda: SGLD(np.nan), ValueError, "step_size"),
    (lambda: SGLD("big"), TypeError, "step_size must be a real number"),
    (lambda: SGLD(0.1, temperature=-1), ValueError, "temperature"),
    (lambda: SGD(np.inf), ValueError, "step_size"),
    (lambda: SGHMC(0.1, friction=0.0), ValueError, "friction"),
    (lambda: MinibatchGradient(0), ValueError, "batch_size must be an int >= 1, got 0"),
    (lambda: MinibatchGradient(2.5), ValueError, "batch_size"),
    (lambda: MinibatchGradient(5, replace="yes"), ValueError, "replace must be True or False"),
    (lambda: ControlVariateGradient(np.zeros((2, 2)), 5), ValueError,
     "centre must be a non-empty 1-d"),
    (lambda: ControlVariateGradient([0.0, np.nan], 5), ValueError, "centre has a non-finite"),
])
def test_bad_components_are_named(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


@pytest.mark.parametrize("kwargs, match", [
    (dict(estimator=MinibatchGradient(21)), "batch_size=21 exceeds the number of data N=20"),
    (dict(estimator=ControlVariateGradient(np.zeros(3), 5)), "centre has shape \\(3,\\)"),
    (dict(integrator=SGLD(lambda t: 0.1 if t < 2 else 0.0)), "schedule gave 0.0 at t=2"),
    (dict(integrator=SGHMC(0.5, friction=3.0)), "step_size \\* friction must be < 1"),
    (dict(n_iter=0), "n_iter must be an int >= 1"),
    (dict(thin=0), "thin must be an int >= 1"),
    (dict(thin=10), "thin=10 exceeds n_iter=5"),
    (dict(theta0=np.zeros(3)), r"theta0 must have shape \(2,\) or \(n_chains, 2\)"),
    (dict(theta0=[0.0, np.inf]), "theta0 has a non-finite value"),
])
def test_bad_sample_arguments_are_named(kwargs, match):
    args = dict(estimator=FullGradient(), integrator=SGLD(0.01), n_iter=5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        sample(LR_MODEL, GOOD, args.pop("estimator"), args.pop("integrator"), args.pop("n_iter"),
               **args)


def test_bad_find_centre_arguments_are_named():
    with pytest.raises(ValueError, match="method must be 'lbfgs' or 'sgd', got 'newton'"):
        find_centre(LR_MODEL, GOOD, method="newton")
    with pytest.raises(ValueError, match="method='sgd' needs a step_size"):
        find_centre(LR_MODEL, GOOD, method="sgd")
    with pytest.raises(ValueError, match="theta0 must have shape"):
        find_centre(LR_MODEL, GOOD, theta0=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="call prepare"):
        ControlVariateGradient(np.zeros(2), 5)(LR_MODEL, GOOD, np.zeros(2))
