"""simplexsg.sgmcmc.gradients.StoredControlVariate on a model with exact gradients."""
import numpy as np

from simplexsg.sgmcmc import LinearRegressionModel
from simplexsg.sgmcmc.gradients import StoredControlVariate


def test_stored_control_variate_is_unbiased_exact_at_the_centre_and_tracks_replacements():
    rng = np.random.default_rng(0)
    N, d, n = 60, 3, 7
    X, y = rng.standard_normal((N, d)), rng.standard_normal(N)
    model = LinearRegressionModel()
    cv = StoredControlVariate(N, d, n_total=N)
    cv.store(model, np.arange(N), (X, y))
    centre = rng.standard_normal(d)
    cv.set_centre(model, centre, (X, y))
    # Replacing rows after the centre is set keeps G equal to the recomputed sum.
    X[:10] = rng.standard_normal((10, d))
    cv.store(model, np.arange(10), (X[:10], y[:10]))
    np.testing.assert_allclose(cv.running_sum, model.grad_log_lik(centre, (X, y)).sum(axis=0),
                               rtol=1e-12, atol=1e-12)
    exact = model.grad_log_posterior(centre, (X, y))
    for _ in range(3):                                     # zero noise at the centre
        idx = rng.choice(N, n, replace=False)
        np.testing.assert_allclose(cv.estimate(model, centre, idx, (X[idx], y[idx])), exact,
                                   rtol=1e-12, atol=1e-10)
    # Unbiased: the mean over every minibatch (all n-subsets sampled as all rows, n = N)
    # is the full gradient; over all single rows too.
    theta = centre + 0.5
    full = model.grad_log_posterior(theta, (X, y))
    singles = [cv.estimate(model, theta, [i], (X[[i]], y[[i]])) for i in range(N)]
    np.testing.assert_allclose(np.mean(singles, axis=0), full, rtol=1e-10, atol=1e-10)


def test_stored_control_variate_scales_a_partial_store_to_the_total():
    rng = np.random.default_rng(1)
    N, d = 40, 2
    X, y = rng.standard_normal((N, d)), rng.standard_normal(N)
    model = LinearRegressionModel()
    cv = StoredControlVariate(N, d, n_total=4 * N)        # a quarter of the rows seen
    cv.store(model, np.arange(N), (X, y))
    cv.set_centre(model, np.zeros(d), (X, y))
    theta = np.ones(d)
    scaled = model.grad_log_prior(theta) + 4 * model.grad_log_lik(theta, (X, y)).sum(axis=0)
    singles = [cv.estimate(model, theta, [i], (X[[i]], y[[i]])) for i in range(N)]
    np.testing.assert_allclose(np.mean(singles, axis=0), scaled, rtol=1e-10, atol=1e-10)
    assert cv.n_seen == N
