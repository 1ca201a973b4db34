"""A centre for the control-variate gradient: the posterior mode, by L-BFGS or SGD."""
import warnings

import numpy as np
from scipy import optimize

from .._validation import check_int, check_positive_scalar
from .driver import check_theta0, sample
from .gradients import MinibatchGradient
from .integrators import SGD
from .models import n_data

__all__ = ["find_centre"]


def find_centre(model, data, method="lbfgs", *, theta0=None, step_size=None, batch_size=100,
                n_iter=None, replace=False, tol=1e-8, max_iter=1000, random_state=None):
    """A centre for ``ControlVariateGradient``: an estimate (d,) of the posterior mode.

    ``method="lbfgs"``: scipy.optimize.minimize L-BFGS-B on the full-data negative log
    posterior (needs the model's ``log_prior``/``log_lik``), from ``theta0`` (default zeros),
    gradient tolerance ``tol``, at most ``max_iter`` iterations; warns if it does not converge.
    ``method="sgd"``: Baker et al.'s mode finder, ``n_iter`` steps (default: 10 passes over the
    data) of ``SGD(step_size)`` with ``MinibatchGradient(batch_size, replace)`` (batch_size
    capped at N without replacement); ``step_size`` is required (a float or a schedule, e.g.
    Robbins-Monro ``schedules.Polynomial(1 / (m tau), tau, kappa=1)`` for a posterior with
    curvature >= m); returns the last iterate.
    """
    data = model.check_data(data)
    d = model.n_params(data)
    theta0 = np.zeros(d) if theta0 is None else check_theta0(theta0, d)
    if theta0.ndim != 1:
        raise ValueError(f"theta0 must have shape ({d},), got {theta0.shape}")
    if method == "sgd":
        if step_size is None:
            raise ValueError("method='sgd' needs a step_size (float or schedule)")
        batch_size = check_int("batch_size", batch_size, 1)
        batch_size = min(batch_size, n_data(data)) if not replace else batch_size
        if n_iter is None:
            n_iter = 10 * -(-n_data(data) // batch_size)
        result = sample(model, data, MinibatchGradient(batch_size, replace), SGD(step_size),
                        n_iter, theta0=theta0, random_state=random_state, thin=n_iter)
        return result.chain[-1]
    if method != "lbfgs":
        raise ValueError(f"method must be 'lbfgs' or 'sgd', got {method!r}")
    tol = check_positive_scalar("tol", tol)
    max_iter = check_int("max_iter", max_iter, 1)

    def objective(theta):
        return -model.log_posterior(theta, data), -model.grad_log_posterior(theta, data)

    res = optimize.minimize(objective, theta0, jac=True, method="L-BFGS-B",
                            options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15})
    if not res.success:
        grad_norm = np.linalg.norm(model.grad_log_posterior(res.x, data))
        warnings.warn(f"find_centre: L-BFGS did not converge ({res.message}); gradient norm "
                      f"{grad_norm:.3g} at the returned point", RuntimeWarning, stacklevel=2)
    return res.x
