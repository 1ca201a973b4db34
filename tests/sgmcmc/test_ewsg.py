"""Tests of EWSG (simplexsg.sgmcmc.ewsg.ExponentiallyWeightedGradient).

Monte Carlo tolerances: means of C iid draws (independent chains run together) are compared at
Z = 5 standard errors (sd / sqrt(C); two-sided false-failure rate 6e-7 per assertion); the
chi-square tests of the index chain reject at p < 1e-4. All seeds are fixed.
"""
import numpy as np
import pytest
from scipy import stats

from simplexsg.sgmcmc import (SGD, SGHMC, SGLD, GaussianLocationModel, LangevinState,
                              LinearRegressionModel, MinibatchGradient, sample)
from simplexsg.sgmcmc.ewsg import ExponentiallyWeightedGradient

from helpers.stats import Z


def regression(N=40, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d))
    return X, X @ np.linspace(1.0, -1.0, d) + rng.standard_normal(N)


# ------------------------------------------------------------------------------------------
# The index chain targets exp(phi)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("batch_size,n_proposals", [(1, 1), (1, 3), (2, 1)])
def test_index_chain_stationary_law(batch_size, n_proposals):
    """theta and momentum frozen: after 40 steps, the b-tuples of 4000 independent chains are
    iid draws from the chain's law, which must be the target pmf ~ exp(phi_S) (chi-square;
    the independence sampler forgets its start as (1 - N^b min p)^(40 M) < 1e-6 here)."""
    model = LinearRegressionModel()
    X, y = regression(N=5, d=2, seed=1)
    data = (X, y)
    N, C, b = len(y), 4000, batch_size
    est = ExponentiallyWeightedGradient(batch_size=b, n_proposals=n_proposals)
    integ = SGHMC(0.05, friction=2.0)
    rng = np.random.default_rng(2)
    theta = np.tile([0.3, -0.2], (C, 1))
    state = LangevinState(theta, np.tile([0.5, 1.0], (C, 1)),
                          est.init_aux(model, data, theta, rng))
    for _ in range(40):
        _, aux = est.step_gradient(model, data, state, 0.05, integ, rng)
        state = state._replace(aux=aux)
    tuples = np.array(np.meshgrid(*[np.arange(N)] * b, indexing="ij")).reshape(b, -1).T
    phi = est.log_weights(model, data, LangevinState(theta[0], state.momentum[0]), 0.05, integ,
                          tuples)
    p = np.exp(phi - phi.max())
    p /= p.sum()
    assert p.max() / p.min() > 2          # the weights are far from uniform
    codes = (state.aux * N ** np.arange(b)[::-1]).sum(axis=-1)
    counts = np.bincount(codes, minlength=N ** b)
    assert stats.chisquare(counts, C * p).pvalue > 1e-4


# ------------------------------------------------------------------------------------------
# weight_scale = 0 / n_proposals = 0: uniform subsampling, exactly
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(weight_scale=0.0, n_proposals=3),
                                    dict(n_proposals=0)])
@pytest.mark.parametrize("integrator", [SGHMC(0.01, friction=3.0), SGLD(0.002)])
def test_uniform_limit_is_minibatch_with_replacement(kwargs, integrator):
    model = LinearRegressionModel()
    data = regression()
    est = ExponentiallyWeightedGradient(batch_size=3, **kwargs)
    assert est.uniform and est.evaluations_per_step == 3
    a = sample(model, data, est, integrator, 50, theta0=np.zeros((3, 2)), random_state=4,
               store_gradients=True)
    b = sample(model, data, MinibatchGradient(3, replace=True), integrator, 50,
               theta0=np.zeros((3, 2)), random_state=4, store_gradients=True)
    np.testing.assert_array_equal(a.chain, b.chain)
    np.testing.assert_array_equal(a.gradients, b.gradients)
    # the estimate is the formula of MinibatchGradient at the b-tuple kept in aux
    rng = np.random.default_rng(5)
    theta = np.array([0.2, 0.1])
    g, idx = est.step_gradient(model, data, LangevinState(theta, np.zeros(2)), 0.01,
                               integrator, rng)
    X, y = data
    expected = (model.grad_log_prior(theta)
                + len(y) / 3 * model.sum_grad_log_lik(theta, (X[idx], y[idx])))
    np.testing.assert_array_equal(g, expected)
    assert est.evaluations_per_step == 3
    assert ExponentiallyWeightedGradient(batch_size=3, n_proposals=2).evaluations_per_step == 9


# ------------------------------------------------------------------------------------------
# Theorem 2: smaller trace of covariance than uniform subsampling, for small x
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("weight_scale", [1.0, -1.0])
def test_theorem2_variance(weight_scale):
    """200 data sets of n = 50 i.i.d. gradients (location model, c_i ~ N(0, I_2), so
    G_i = n (c_i - theta) are iid), small x (momentum ~ 0.1): the trace of the covariance of
    G_J under the index chain's target pmf, against uniform subsampling's. Theorem 2 (smaller
    trace with high probability) holds for weight_scale = -1: smaller in >= 95% of data sets
    (observed 100%). For the paper's kernel-matching sign (+1) the trace is *larger* in >= 95%
    (observed 100%): the conflict the module docstring reports."""
    rng = np.random.default_rng(6)
    model, n, d, h = GaussianLocationModel(), 50, 2, 2e-4
    est = ExponentiallyWeightedGradient(weight_scale=weight_scale)
    integ = SGHMC(h, friction=1.0)
    deltas = []
    for _ in range(200):
        c = rng.standard_normal((n, d))
        theta, r = 0.1 * rng.standard_normal(d), 0.1 * rng.standard_normal(d)
        G = n * (c - theta)
        phi = est.log_weights(model, (c,), LangevinState(theta, r), h, integ,
                              np.arange(n)[:, None])
        p = np.exp(phi - phi.max())
        p /= p.sum()
        tr_uniform = np.sum(G.var(axis=0))
        tr_ewsg = p @ np.sum(G ** 2, axis=1) - np.sum((p @ G) ** 2)
        deltas.append(tr_uniform - tr_ewsg)
    reduced = np.mean(np.array(deltas) > 0)
    assert reduced >= 0.95 if weight_scale < 0 else reduced <= 0.05


# ------------------------------------------------------------------------------------------
# Theorem 5: the mean recursion on V = sum_i (theta - c_i)^2 / 2, sum_i c_i = 0
# ------------------------------------------------------------------------------------------

def _mean_path(est, h, gamma, theta0, n_iter, C=4000, seed=7):
    c = np.linspace(-1.5, 1.5, 10)[:, None]
    th0 = np.asarray(theta0, dtype=np.float64).reshape(C, 1)
    res = sample(GaussianLocationModel(), (c,), est, SGHMC(h, friction=gamma), n_iter,
                 theta0=LangevinState(th0, np.zeros((C, 1))), random_state=seed)
    x = res.chain[:, :, 0]
    A = np.array([[1 - h * h * 10, h * (1 - h * gamma)], [-h * 10, 1 - h * gamma]])
    m, pred = np.array([np.mean(theta0), 0.0]), []
    for _ in range(n_iter):
        m = A @ m               # semi-implicit Euler: theta' = theta + h r'
        pred.append(m[0])
    return x.mean(axis=1), x.std(axis=1) / np.sqrt(C), np.array(pred)


def test_theorem5_mean_recursion():
    """(a) Where the theorem's hypothesis E[c_J] = 0 holds (data symmetric about 0, chains
    started symmetrically at theta = +-1, r = 0), EWSG's mean follows SGHMC's recursion
    E[theta, r]_{k+1} = A E[theta, r]_k within Z standard errors. (b) From theta = 1 the
    hypothesis fails for the practical algorithm (the weights pull c_J toward theta): the mean
    deviates, by O(h) -- quartering h divides the deviation by > 2 (observed 3.7)."""
    h, gamma = 0.02, 1.0
    start = np.repeat([1.0, -1.0], 2000)
    for est in (ExponentiallyWeightedGradient(n_proposals=0), ExponentiallyWeightedGradient()):
        m, se, pred = _mean_path(est, h, gamma, start, 60)
        assert np.all(np.abs(m - pred) < Z * se)
    devs = []
    for hh in (0.02, 0.005):
        m, se, pred = _mean_path(ExponentiallyWeightedGradient(), hh, gamma, np.ones(4000),
                                 int(1.2 / hh))
        devs.append(np.abs(m - pred).max())
    assert devs[1] < devs[0] / 2
    m, se, pred = _mean_path(ExponentiallyWeightedGradient(n_proposals=0), h, gamma,
                             np.ones(4000), 60)
    assert np.all(np.abs(m - pred) < Z * se)          # SGHMC itself follows A exactly


# ------------------------------------------------------------------------------------------
# Through sample: SGHMC and SGLD, chains, resume and continuation
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("integrator,est", [
    (SGHMC(0.002, friction=10.0), ExponentiallyWeightedGradient()),
    (SGHMC(0.002, friction=10.0), ExponentiallyWeightedGradient(batch_size=4, n_proposals=2)),
    (SGLD(0.0005), ExponentiallyWeightedGradient()),
    (SGLD(0.0005), ExponentiallyWeightedGradient(batch_size=2, x_rule="zero"))])
def test_sample_reaches_posterior(integrator, est):
    """200 chains, 1500 steps: the average over chains and the last 500 steps is within 1.5
    posterior sds of the exact posterior mean and the spread within a factor 2 of the
    posterior sd. A sanity bound only: EWSG is biased (observed: mean off by up to 1.1 sd with
    b = 1, 0.2 sd with b = 4; uniform subsampling 0.06 sd; MC error ~0.01 sd)."""
    model = LinearRegressionModel()
    data = regression(N=40, d=2, seed=8)
    mean, cov = model.posterior(data)
    res = sample(model, data, est, integrator, 1500, theta0=np.zeros((200, 2)),
                 random_state=9)
    assert res.state.aux.shape == (200, est.batch_size)
    avg = res.chain[-500:].mean(axis=(0, 1))
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(avg - mean) < 1.5 * sd)
    spread = res.chain[-500:].reshape(-1, 2).std(axis=0)
    assert np.all((spread > sd / 2) & (spread < 2 * sd))


@pytest.mark.parametrize("theta0", [np.zeros(2), np.zeros((3, 2))])
@pytest.mark.parametrize("integrator", [SGHMC(0.01, friction=3.0), SGLD(0.002)])
def test_continuation_and_resume_bit_exact(theta0, integrator):
    model = LinearRegressionModel()
    data = regression()
    est = ExponentiallyWeightedGradient(batch_size=2, n_proposals=2)
    full = sample(model, data, est, integrator, 40, theta0=theta0,
                  random_state=np.random.default_rng(10))
    rng = np.random.default_rng(10)
    first = sample(model, data, est, integrator, 20, theta0=theta0, random_state=rng)
    second = sample(model, data, est, integrator, 20, theta0=first.state, random_state=rng)
    np.testing.assert_array_equal(np.concatenate([first.chain, second.chain]), full.chain)
    np.testing.assert_array_equal(second.state.aux, full.state.aux)
    saved = []
    sample(model, data, est, integrator, 40, theta0=theta0, random_state=11,
           checkpoint=saved.append, checkpoint_every=15)
    again = sample(model, data, est, integrator, 40, theta0=theta0, random_state=11,
                   resume=saved[0])
    reference = sample(model, data, est, integrator, 40, theta0=theta0, random_state=11)
    np.testing.assert_array_equal(again.chain, reference.chain)


# ------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(batch_size=0), dict(batch_size=1.5),
                                    dict(n_proposals=-1), dict(n_proposals=True),
                                    dict(weight_scale=np.inf), dict(weight_scale=np.nan),
                                    dict(weight_scale=True), dict(weight_scale="1"),
                                    dict(x_rule="future")])
def test_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        ExponentiallyWeightedGradient(**kwargs)


def test_bad_integrator_or_state():
    model = LinearRegressionModel()
    data = regression()
    est = ExponentiallyWeightedGradient()
    with pytest.raises(ValueError, match="SGHMC or SGLD"):
        sample(model, data, est, SGD(0.001), 5)
    with pytest.raises(ValueError, match="temperature"):
        sample(model, data, est, SGLD(0.001, temperature=0.0), 5)
    with pytest.raises(ValueError, match="momentum"):
        sample(model, data, ExponentiallyWeightedGradient(x_rule="momentum"), SGLD(0.001), 5)
    with pytest.raises(ValueError, match="aux"):
        sample(model, data, est, SGHMC(0.01), 5,
               theta0=LangevinState(np.zeros(2), np.zeros(2), np.zeros((3, 1), dtype=int)))
    # uniform EWSG needs no temperature
    sample(model, data, ExponentiallyWeightedGradient(weight_scale=0), SGD(0.001), 5)
