"""Statistical tests of the SCIR and SGRLD simplex samplers against exact answers.

Monte Carlo tolerances: a mean (or variance) estimated from M independent draws is compared with
its exact value at Z = 5 standard errors (two-sided false-failure rate 6e-7 per assertion); the
standard error of a sample variance is sqrt((m4 - s^4) / M) with the sample fourth central moment
m4. Distribution tests (KS, chi-square) pass when p > 1e-4. The running-experiment comparisons
use the same Z on the difference of two samplers' mean KS distances over independent chains,
with the standard error from the chains' spread. All seeds are fixed.
"""
import numpy as np
import pytest
from scipy import stats

from simplexsg import SCIR, SGRLD
from simplexsg.diagnostics import rosenblatt
from simplexsg.schedules import Constant, Polynomial
from simplexsg.simplex import FLOOR, scir_transition, to_simplex

from helpers.examples_loader import load_example
from helpers.stats import Z

rx = load_example("running_experiment")     # the SCIR paper's running experiment



def assert_mean_var(x, mean, var):
    """Sample mean and variance of iid draws ``x`` agree with exact values within Z sigma."""
    m = x.size
    centred = x - x.mean()
    s2 = centred.var()
    m4 = np.mean(centred ** 4)
    assert abs(x.mean() - mean) <= Z * np.sqrt(var / m), (x.mean(), mean)
    assert abs(s2 - var) <= Z * np.sqrt((m4 - s2 ** 2) / m), (s2, var)


def cir_moments(theta0, a, t):
    """Exact mean and variance of the CIR process (Gamma(a, 1) stationary) after time t."""
    e = np.exp(-t)
    return theta0 * e + a * (1 - e), a * (1 - e) ** 2 + 2 * theta0 * e * (1 - e)


def one_step_cdf(x, theta, a, h):
    """Exact CDF of one CIR step: Poisson(theta e^-h / c) mixture of Gamma(a + N, scale c)."""
    c = -np.expm1(-h)
    lam = theta * np.exp(-h) / c
    n = np.arange(int(lam + 12 * np.sqrt(lam) + 30))
    weights = stats.poisson.pmf(n, lam)
    return weights @ stats.gamma.cdf(np.asarray(x)[None, :] / c, a + n[:, None])


ONE_STEP_CASES = [  # (theta, a, h)
    (1.0, 1.0, 0.1),
    (0.5, 1e-3, 0.5),
    (5.0, 1e-3, 1.0),
    (1e-3, 10.0, 0.01),
    (0.0, 1e-3, 0.1),
    (200.0, 0.5, 0.05),
    (0.0, 0.45, 0.3),
]


@pytest.mark.parametrize("theta, a, h", ONE_STEP_CASES)
def test_scir_one_step_moments_are_exact(theta, a, h):
    m = 400_000
    x = scir_transition(np.full((m, 1), theta), np.full((m, 1), a), h, 20240 + int(1e3 * h)).ravel()
    assert_mean_var(x, *cir_moments(theta, a, h))


@pytest.mark.parametrize("theta, a, h", [
    (1.0, 1.0, 0.1), (0.5, 0.3, 0.5), (3.0, 2.0, 1.0),
    (0.2, 0.01, 0.5),       # shape < 1, N = 0 and N >= 1 both common
    (1e-3, 0.05, 1.0),      # N = 0 nearly always: Gamma(a), its proposal U^(1/a) mostly
    (0.0, 0.45, 1.0),       # N = 0 always: 45% of Gamma(a)'s proposals (1 - a + a Y)^(1/a)
    (0.5, 0.5, 0.02),       # shape 1/2: one normal, (Z + sqrt(2 lam))^2, lam about 25
    (0.0, 0.5, 0.1),        # shape 1/2 from 0
    (1.0, 0.5, np.inf),     # an exact draw: Gamma(1/2)
    (0.3, 0.75, 0.5),       # 1/2 < shape < 1: Gamma(a - 1/2) below 1/2 plus the normal part
    (2.0, 0.49, 0.05),      # just below 1/2: the Poisson form
])
def test_scir_one_step_law_is_the_cir_transition(theta, a, h):
    x = scir_transition(np.full((20_000, 1), theta), np.full((20_000, 1), a), h, 7).ravel()
    assert stats.kstest(x, lambda v: one_step_cdf(v, theta, a, h)).pvalue > 1e-4


@pytest.mark.parametrize("theta, a, h", [
    (0.0, 0.01, 1.0),       # N = 0: Gamma(a), the proposal U^(1/a) below 2^-53 for 70%
    (0.0, 0.1, 1.0),        # most proposals tested against their exponential
    (0.01, 0.05, 1.0),      # N = 0 and N >= 1
])
def test_scir_one_step_law_in_log_space_at_small_shapes(theta, a, h):
    """The law of log(value): at a small shape the values span hundreds of orders of magnitude,
    which the KS test above sees as one point at 0. Exact CDF: Poisson mixture of log-gammas;
    the draws floored at DBL_MIN (0.08% at a = 0.01) are counted as in the test below."""
    n = 50_000
    c = -np.expm1(-h)
    x = scir_transition(np.full((n, 1), theta), np.full((n, 1), a), h, 21).ravel()
    lam = theta * np.exp(-h) / c
    counts = np.arange(int(lam + 12 * np.sqrt(lam) + 30))
    weights = stats.poisson.pmf(counts, lam)

    def cdf(y):
        return weights @ np.exp(stats.gamma.logcdf(np.exp(np.asarray(y))[None, :],
                                                   a + counts[:, None]))
    p_floor = cdf([np.log(FLOOR / c)])[0]
    floored = np.mean(x <= FLOOR)
    assert abs(floored - p_floor) <= 5 * np.sqrt(p_floor * (1 - p_floor) / n) + 1e-12
    above = np.log(x[x > FLOOR] / c)
    assert stats.kstest(above, lambda y: (cdf(y) - p_floor) / (1 - p_floor)).pvalue > 1e-4


def test_scir_one_step_law_below_the_floor():
    """Shape 0.002 from 0 (no Poisson part): a quarter of the draws c Gamma(a) lie below DBL_MIN
    (computed in log space, then floored). The floored fraction is the exact probability within
    5 standard errors, and the draws above the floor follow the exact conditional law."""
    a, h, n = 0.002, 0.5, 20_000
    c = -np.expm1(-h)
    x = scir_transition(np.zeros((n, 1)), np.full((n, 1), a), h, 12).ravel()
    p_floor = stats.gamma.cdf(FLOOR / c, a)
    floored = np.mean(x <= FLOOR)
    assert abs(floored - p_floor) < 5 * np.sqrt(p_floor * (1 - p_floor) / n)
    above = x[x > FLOOR]
    conditional = stats.gamma(a, scale=c)
    assert stats.kstest(above, lambda v: (conditional.cdf(v) - p_floor) / (1 - p_floor)).pvalue > 1e-4


@pytest.mark.parametrize("a", [0.1, 2.0, 50.0])
def test_scir_with_exact_counts_is_stationary_for_gamma(a):
    # 4000 independent chains (rows of one coordinate) run for time 300 * 0.05 = 15, so the start
    # is forgotten up to exp(-15); their end points are iid draws of the chain's marginal.
    sampler = SCIR(step_size=0.05)
    rng = np.random.default_rng(11)
    theta = np.full((4000, 1), 1.0)
    for _ in range(300):
        theta = sampler.step(theta, a, np.zeros_like(theta), random_state=rng)
    assert stats.kstest(theta.ravel(), stats.gamma(a).cdf).pvalue > 1e-4
    assert sampler.t == 300


@pytest.mark.slow
def test_scir_single_long_chain_marginal_is_gamma():
    # One chain, thinned every 20 steps of h = 0.5 (lag autocorrelation exp(-10) = 5e-5).
    a, sampler, rng = 1.5, SCIR(0.5), np.random.default_rng(3)
    theta, draws = np.array([[a]]), []
    for t in range(20 * 3000):
        theta = sampler.step(theta, a - 0.5, np.array([[0.5]]), random_state=rng)
        if t % 20 == 19:
            draws.append(theta[0, 0])
    assert stats.kstest(draws, stats.gamma(a).cdf).pvalue > 1e-4


def test_scir_variance_with_noisy_counts_matches_corollary_3_2():
    # a_hat = prior + (N/n) Binomial(n, p): unbiased for a = prior + N p, Var[a_hat] = (N/n)^2 n p (1-p).
    prior, n_obs, n, p = 0.5, 1000, 10, 0.1
    theta0, h, steps, m = 20.0, 0.05, 40, 200_000
    a = prior + n_obs * p
    var_a_hat = (n_obs / n) ** 2 * n * p * (1 - p)
    rng = np.random.default_rng(5)
    sampler = SCIR(step_size=h)
    theta = np.full((m, 1), theta0)
    for _ in range(steps):
        counts = (n_obs / n) * rng.binomial(n, p, size=(m, 1)).astype(float)
        theta = sampler.step(theta, prior, counts, random_state=rng)
    mean, exact_var = cir_moments(theta0, a, steps * h)
    e = np.exp(-h)
    var = exact_var + (1 - np.exp(-2 * steps * h)) * (1 - e) / (1 + e) * var_a_hat
    assert_mean_var(theta.ravel(), mean, var)
    # The test has power: the noise-free CIR variance is rejected by a wide margin.
    s = theta.ravel()
    se = np.sqrt((np.mean((s - s.mean()) ** 4) - s.var() ** 2) / m)
    assert abs(s.var() - exact_var) > 20 * se


#: Fresh chains per sampler on which the tuned step sizes are scored (running experiment).
EVAL_CHAINS = 40
#: Equivalence margin of the dense running experiment: the mean KS distance that 1000 exact iid
#: posterior draws themselves show, sqrt(pi/2) ln 2 / sqrt(1000) = 0.0275 (the mean of the
#: Kolmogorov distribution over sqrt(n); measured 0.0270 on 200 sets of 1000 Dirichlet draws).
#: Two samplers whose 1000 kept draws differ by less than that are not resolved by this measure
#: (it is the exact-sampling floor of the paper's Figure 2); it is a tenth of the sparse gap.
DENSE_MARGIN = np.sqrt(np.pi / 2) * np.log(2) / np.sqrt(1000)


def tuned_chain_ks(counts, seed):
    """Each sampler's step tuned over the authors' grid (5 chains per step, as the paper), then
    the chosen steps scored on ``EVAL_CHAINS`` fresh independent chains each: the minimum of the
    tuning means is biased low (measured: SGRLD tunes to 0.17-0.20 on the dense data and scores
    0.20-0.21 on fresh chains), the fresh chains' KS distances are iid draws of the tuned
    sampler's. Returns SGRLD's tuned step, the per-chain KS of SCIR and of SGRLD, and the rng."""
    h_scir, _, _ = rx.tuned_ks(SCIR, rx.SCIR_GRID, counts, random_state=seed)
    h_sgrld, _, _ = rx.tuned_ks(SGRLD, rx.SGRLD_GRID, counts, random_state=seed)
    rng = np.random.default_rng([seed, 1])
    ks_scir = rx.ks_per_chain(SCIR(h_scir), counts, n_chains=EVAL_CHAINS, random_state=rng)
    ks_sgrld = rx.ks_per_chain(SGRLD(h_sgrld), counts, n_chains=EVAL_CHAINS, random_state=rng)
    return h_sgrld, ks_scir, ks_sgrld, rng


def difference_and_se(a, b):
    """mean(b) - mean(a) over independent chains, and its standard error (Welch). With 40 chains
    a side the estimated se has ~78 degrees of freedom: P(t_78 > 5) = 2e-6, so Z = 5 keeps its
    meaning up to a factor of a few."""
    return b.mean() - a.mean(), np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)


@pytest.mark.slow
def test_scir_beats_tuned_sgrld_on_the_sparse_running_experiment():
    # Paper Figure 2a at minibatch 10, 1000 burn-in + 1000 kept. Test: SGRLD's mean KS minus
    # SCIR's exceeds Z = 5 standard errors (one-sided). Measured over seeds 0-7: SCIR 0.091-0.098
    # (h 0.05 or 0.1), SGRLD 0.359-0.366 (h 1e-4), difference 0.26-0.28 = 65-90 se (se 0.003-0.004).
    h_sgrld, ks_scir, ks_sgrld, rng = tuned_chain_ks(rx.SPARSE_COUNTS, seed=0)
    diff, se = difference_and_se(ks_scir, ks_sgrld)
    assert diff > Z * se, (ks_scir.mean(), ks_sgrld.mean(), se)
    # The criterion can fail: with SCIR's step replaced by SGRLD's (the same tuned SGRLD on fresh
    # chains, a sampler no better than SGRLD) the difference is 0 up to Monte Carlo error
    # (measured -1.2 to +2.2 se over seeds 0-7) and the assertion above would fail.
    same = rx.ks_per_chain(SGRLD(h_sgrld), rx.SPARSE_COUNTS, n_chains=EVAL_CHAINS, random_state=rng)
    diff_same, se_same = difference_and_se(same, ks_sgrld)
    assert not diff_same > Z * se_same, (same.mean(), ks_sgrld.mean(), se_same)


@pytest.mark.slow
def test_scir_and_sgrld_agree_on_the_dense_running_experiment():
    # Paper Figure 2b: on a dense posterior the tuned samplers are close. Test: |difference of
    # mean KS| < Z se + DENSE_MARGIN (Z = 5, margin 0.0275). Measured over seeds 0-7: both
    # 0.19-0.21, difference -0.014 to +0.005 with se 0.005-0.008, so the bound is 0.055-0.069.
    h_sgrld, ks_scir, ks_sgrld, rng = tuned_chain_ks(rx.DENSE_COUNTS, seed=0)
    diff, se = difference_and_se(ks_scir, ks_sgrld)
    assert abs(diff) < Z * se + DENSE_MARGIN, (ks_scir.mean(), ks_sgrld.mean(), se)
    # The criterion can fail: SGRLD at ten times its tuned step (the next step of the authors'
    # grid) is detected as different from SCIR. Measured over seeds 0-7: KS 0.35-0.37, |difference|
    # 0.14-0.16 against a bound of 0.059-0.070.
    worse = rx.ks_per_chain(SGRLD(10 * h_sgrld), rx.DENSE_COUNTS, n_chains=EVAL_CHAINS,
                            random_state=rng)
    diff_worse, se_worse = difference_and_se(ks_scir, worse)
    assert abs(diff_worse) >= Z * se_worse + DENSE_MARGIN, (ks_scir.mean(), worse.mean(), se_worse)


def test_rosenblatt_of_exact_dirichlet_draws_is_uniform():
    alpha = 0.1 + rx.SPARSE_COUNTS
    draws = np.random.default_rng(2).dirichlet(alpha, size=5000)
    u = rosenblatt(draws, alpha)
    assert min(stats.kstest(u[:, j], "uniform").pvalue for j in range(u.shape[1])) > 1e-4 / 9


@pytest.mark.slow
def test_scir_survives_extreme_sparsity():
    # 10^5 steps at prior 1e-4 with zero counts in most coordinates: every row stays finite,
    # positive, normalisable, and its simplex value is a probability vector.
    rng = np.random.default_rng(0)
    sampler = SCIR(step_size=0.5)
    theta = rng.gamma(1.0, size=(4, 50))
    counts = np.zeros_like(theta)
    counts[0, :3] = [500.0, 20.0, 1.0]
    counts[1, 7] = 3.0
    for _ in range(100_000):
        theta = sampler.step(theta, 1e-4, counts, random_state=rng)
        if not (np.isfinite(theta).all() and theta.min() >= FLOOR):
            pytest.fail(f"bad state at t={sampler.t}: {theta}")
    omega = to_simplex(theta)
    assert np.allclose(omega.sum(axis=1), 1.0) and np.isfinite(omega).all()


def test_tiny_shapes_keep_the_simplex_value_exact():
    # All-zero counts and prior 1e-4 over 5 coordinates: most draws lie far below 1e-308, yet
    # Dirichlet(1e-4 * 1) puts its mass on one coordinate; the largest simplex coordinate must
    # be ~1 in nearly every row (exact probability that it is below 0.99 is tiny).
    theta = scir_transition(np.full((20_000, 5), 1e-300), np.full((20_000, 5), 1e-4), 1.0, 4)
    omega = to_simplex(theta)
    assert np.isfinite(omega).all()
    assert np.mean(omega.max(axis=1) > 0.99) > 0.99


@pytest.mark.parametrize("sampler_cls", [SCIR, SGRLD])
def test_same_random_state_same_output_bit_for_bit(sampler_cls):
    def run(seed):
        sampler, rng = sampler_cls(Polynomial(0.1, tau=10, kappa=0.5)), np.random.default_rng(seed)
        theta = np.ones((3, 8))
        for _ in range(50):
            theta = sampler.step(theta, 0.1, rng.poisson(2.0, size=(3, 8)).astype(float),
                                 random_state=rng)
        return theta
    np.testing.assert_array_equal(run(42), run(42))
    assert not np.array_equal(run(42), run(43))


@pytest.mark.parametrize("sampler_cls", [SCIR, SGRLD])
def test_advance_is_the_step_at_t_without_moving_the_counter(sampler_cls):
    """``advance`` (the unchecked step of a chain's own arrays) draws what ``step`` draws at
    the same point of the schedule, and leaves ``t`` where it was."""
    schedule = Polynomial(0.1, tau=10, kappa=0.5)
    theta, counts = np.ones((3, 8)), np.random.default_rng(1).poisson(2.0, (3, 8)) * 1.0
    stepped = sampler_cls(schedule)
    stepped.t = 7
    expected = stepped.step(theta, 0.1, counts, random_state=np.random.default_rng(2))
    advancing = sampler_cls(schedule)
    got = advancing.advance(theta, 0.1, counts, 7, random_state=np.random.default_rng(2))
    np.testing.assert_array_equal(got, expected)
    assert advancing.t == 0
    other = advancing.advance(theta, 0.1, counts, 0, random_state=np.random.default_rng(2))
    assert not np.array_equal(other, expected)          # t picks the step size


def test_scir_large_arrays_do_not_depend_on_n_jobs():
    # 3 x 2^16-coordinate stream blocks; threads run blocks, each block has its own stream.
    theta = np.random.default_rng(0).gamma(0.5, size=(300, 2000))
    one = scir_transition(theta, 0.01 + theta, 0.3, 8, n_jobs=1)
    two = scir_transition(theta, 0.01 + theta, 0.3, 8, n_jobs=2)
    np.testing.assert_array_equal(one, two)
    assert not np.array_equal(one, scir_transition(theta, 0.01 + theta, 0.3, 9))


def test_sgrld_expanded_mean_step_drift_and_noise():
    # With theta fixed, one SGRLD step has mean theta + h drift and variance 2 h theta (before
    # the mirror, which is negligible here since theta >> sqrt(2 h theta)).
    theta = np.tile([4.0, 2.0, 1.0], (200_000, 1))
    counts = np.tile([30.0, 5.0, 0.0], (200_000, 1))
    prior, h = 0.5, 0.01
    new = SGRLD(h).step(theta, prior, counts, random_state=9)
    phi = theta[0] / theta[0].sum()
    drift = prior - theta[0] + counts[0] - counts[0].sum() * phi
    for j in range(3):
        assert_mean_var(new[:, j], theta[0, j] + h * drift[j], 2 * h * theta[0, j])


def test_schedules():
    assert Constant(0.3)(100) == 0.3
    s = Polynomial(0.5, tau=10, kappa=0.33)
    assert s(0) == 0.5 and np.isclose(s(100), 0.5 * 11 ** -0.33)
    with pytest.raises(ValueError, match="kappa"):
        Polynomial(0.5, tau=10, kappa=2)
    with pytest.raises(ValueError, match="h"):
        Constant(-1.0)


@pytest.mark.parametrize("sampler_cls", [SCIR, SGRLD])
@pytest.mark.parametrize("kwargs, message, error", [
    (dict(theta=-np.ones((2, 3))), "theta", ValueError),
    (dict(theta=np.full((2, 3), np.nan)), "theta", ValueError),
    (dict(prior=-0.1), "prior", ValueError),
    (dict(prior=0.0), "prior", ValueError),
    (dict(prior=np.full((2, 3), np.nan)), "prior", ValueError),
    (dict(prior=np.ones(4)), "prior", ValueError),
    (dict(counts=np.full((2, 3), np.inf)), "counts", ValueError),
    (dict(counts=np.full((2, 3), np.nan)), "counts", ValueError),
    (dict(counts=-np.ones((2, 3))), "counts", ValueError),
    (dict(counts=np.ones((3, 2))), "counts", ValueError),
    # Only input that is not numeric at all may raise TypeError.
    (dict(theta="abc"), "theta", TypeError),
])
def test_bad_input_names_the_argument_and_keeps_the_counter(sampler_cls, kwargs, message, error):
    args = dict(theta=np.ones((2, 3)), prior=0.1, counts=np.ones((2, 3)))
    args.update(kwargs)
    sampler = sampler_cls(0.1)
    with pytest.raises(error, match=message):
        sampler.step(args["theta"], args["prior"], args["counts"], random_state=0)
    assert sampler.t == 0


@pytest.mark.parametrize("sampler_cls", [SCIR, SGRLD])
@pytest.mark.parametrize("step_size, error", [
    (0.0, ValueError), (-0.5, ValueError), (-1, ValueError), (float("nan"), ValueError),
    (float("inf"), ValueError), ("big", TypeError), (None, TypeError),
])
def test_bad_step_size_is_rejected_at_construction(sampler_cls, step_size, error):
    with pytest.raises(error, match="step_size"):
        sampler_cls(step_size)
    with pytest.raises(error, match="step_size"):
        sampler_cls(step_size=step_size)


@pytest.mark.parametrize("sampler_cls", [SCIR, SGRLD])
def test_schedules_pass_construction_and_their_values_are_checked_per_step(sampler_cls):
    # A schedule is accepted as it is (Constant, Polynomial, or any callable of t); a value it
    # gives that is not > 0 is a ValueError naming step_size at the step that uses it, and the
    # counter keeps its value.
    theta, counts = np.ones((2, 3)), np.ones((2, 3))
    for schedule in (Constant(0.2), Polynomial(0.1, tau=10, kappa=0.5)):
        sampler = sampler_cls(schedule)
        assert sampler.step_size is schedule
        sampler.step(theta, 0.1, counts, random_state=0)
        assert sampler.t == 1 and sampler.step_size_at(1) == schedule(1)
    sampler = sampler_cls(lambda t: 0.1 if t == 0 else -0.1)
    sampler.step(theta, 0.1, counts, random_state=0)
    with pytest.raises(ValueError, match="step_size"):
        sampler.step(theta, 0.1, counts, random_state=0)
    assert sampler.t == 1


def test_bad_random_state_is_rejected():
    with pytest.raises(TypeError, match="random_state"):
        SCIR(0.1).step(np.ones((2, 3)), 0.1, np.ones((2, 3)), random_state="seed")
