"""The package's exact Gibbs slice sampler, ``DPMixture(sampler="gibbs")``, against the exact
posterior of a tiny data set.

The exact posterior comes from ``tests/dp_exact.py``: it enumerates all 203 set partitions of the
6 rows, with the DP's exchangeable partition probability function and the Dirichlet-multinomial
marginal of each block, and integrates alpha out by quadrature. That reference is itself tested in
``tests/test_dp_exact.py`` (closed forms, a brute-force recomputation, an independent collapsed
Gibbs sampler).
"""
import numpy as np
import pytest

from dp_exact import BETA6, PRIOR6, X6, exact_x6, mc_deviations

from simplexsg import DPMixture

N_ITER, BURN_IN, Z = 14_500, 500, 4.5  # 14,000 kept iterations
#: States of K below this posterior probability are checked pooled with their neighbours.
MIN_PROBABILITY = 0.05


@pytest.fixture(scope="module")
def gibbs_trace():
    """Numbers of occupied clusters and alpha of every iteration after burn-in."""
    dp = DPMixture("gibbs", base_concentration=BETA6, alpha_prior=PRIOR6, initial_components=2,
                   max_iter=N_ITER, evaluate_every=1, random_state=0).fit(X6)
    kept = dp.history_[BURN_IN:]
    return np.array([h["n_components"] for h in kept]), np.array([h["alpha"] for h in kept])


def test_gibbs_matches_the_exact_posterior(gibbs_trace):
    """The distribution of the number of occupied clusters K, P(K <= 2) and P(K = k) for
    k = 2..6, and that of alpha, E[alpha], Var[alpha] and its CDF at its 10, 25, 50, 75 and 90%
    posterior quantiles: each within Z = 4.5 Monte Carlo standard errors, by batch means (50
    batches of 280 iterations after 500 burn-in, about 30 autocorrelation times; ESS of alpha
    ~1000), never below the iid binomial error of a probability. With 49 degrees of freedom a
    false alarm has probability ~4e-5 per summary, ~6e-4 for all 13; over seeds 0-6 the largest
    deviation was 2.8.

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


def test_comparison_has_power_against_a_wrong_prior(gibbs_trace):
    """The same trace is rejected by a wide margin (24 to 39 standard errors over seeds 0-6)
    against the exact posterior under a Gamma(1, 2) prior for alpha instead of Gamma(1, 1)."""
    wrong = exact_x6((1.0, 2.0))
    assert max(mc_deviations(wrong, *gibbs_trace, min_probability=MIN_PROBABILITY).values()) > 3 * Z
