"""The Bayesian regressions' sampler settings: where ``step_size``, ``friction`` and
``batch_size`` left at None get their values (and the floor of an estimated
``noise_variance``), and the accuracy those values give (the warnings ``fit`` issues).
Everything here is on the standardised scale of ``simplexsg.sgmcmc.regression`` (its
docstring: what the chain samples).

**Step sizes** follow ``simplexsg.sgmcmc``: h is the diffusion time of a step, drift
``h * grad log pi`` and noise variance ``2 h`` (SGLD); Welling & Teh's and Baker et al.'s
epsilon is ``2 h``. The default is ``h = STEP_SCALE / L``, so h scales as 1/N as in the
papers, with L the largest eigenvalue of the Hessian of -log pi,
``I / prior_scale^2 + X^T diag(w) X`` (X with its column of ones): for "sgldcv" at the centre,
where its chain starts and stays; for the other samplers, which start at 0, the bound with w at
its supremum (1/4 for the logistic likelihood; 1 / noise_variance for the Gaussian one, exact).
Here X is the standardised design (its column of ones included) and noise_variance is on the
standardised scale; the flat prior of the intercept makes ``I / prior_scale^2`` an upper bound.

**Accuracy of the defaults** (minibatch size n of N rows, ``f = (N - n) / (N - 1)``). A
minibatch gradient's noise covariance near the mode is ``Sigma ~ (N^2 f / n) x`` the per-datum
Fisher information, at most ``Sigma_max = (L - 1 / prior_scale^2) N f / n`` (exact for the
linear model in expectation over y's noise; an upper bound for the logistic one). On the
linear-Gaussian model the exact stationary moments are known (Brosse, Durmus & Moulines 2018,
Section 3): a chain's variance in the direction of curvature lambda is that of the posterior
times

- "sgldcv": ``1 / (1 - h lambda / 2)`` plus a small control-variate term: 1.03 at the default
  h lambda_max = 0.1, whatever N;
- "sgld": ``(1 + h Sigma / 2) / (1 - h lambda / 2)``. At the default h = 0.1 / L and n = N / 100
  that is about 1 + 0.05 N / n = 6 (standard deviations 2.5x too wide), and it does not shrink
  as N grows. Bounding it by 1 + eps needs ``h <= 2 eps n / (L N f)``: a cost of about
  N / (2 eps) per-datum gradients per independent sample, linear in N (Brosse et al.), against
  O(n) for "sgldcv". So the default stays h = 0.1 / L, and ``fit`` warns (UserWarning) with
  the predicted inflation whenever its standard-deviation factor exceeds ``WARN_SD_FACTOR``;
  use "sgldcv", or a larger ``batch_size`` with a smaller ``step_size``;
- "sghmc": a minibatch gradient adds ``h^2 Sigma`` to the momentum's variance per step, so
  without a correction the chain runs at temperature ``1 + h Sigma / (2 friction)``, which at
  h = sqrt(0.1 / L) and friction = 0.1 / h is ``1 + N f / (2 n)``: 50x the posterior variance
  at n = N / 100. So it applies Chen et al.'s (2014) correction: the
  estimator ``NoiseTrackingGradient`` keeps an online estimate Sigma_hat of the minibatch
  gradient's covariance (within-minibatch covariance of the per-datum gradients, exponentially
  averaged), and the injected noise covariance is ``2 friction h I - h^2 Sigma_hat`` (Chen et
  al.'s ``2 (C - B_hat) h`` with C = friction, B_hat = h Sigma_hat / 2), which needs
  ``h Sigma / (2 friction) <= 1``. The default h is the largest that keeps this ratio at
  ``SGHMC_NOISE_FRACTION`` for the predicted Sigma_max, with ``h * friction = SGHMC_DECAY``:
  ``h = min(sqrt(STEP_SCALE / L), sqrt(2 SGHMC_NOISE_FRACTION SGHMC_DECAY / Sigma_max))``. The
  stationary law is then the full-gradient SGHMC's (0.1% wide of the posterior here) up to the
  estimate's error. The price: the chain moves like SGLD with step h / friction <=
  ``2 SGHMC_NOISE_FRACTION / Sigma_max``, so an independent sample costs about
  ``N f / SGHMC_NOISE_FRACTION`` per-datum gradients, linear in N like plain SGLD's (Brosse et
  al.) and about 3x SGLD-CV's at the defaults; it does not depend on n, so the default batch
  is larger, ``SGHMC_BATCH_FRACTION`` of N (positions relax in ~12 steps, enough for the
  default n_iter). ``fit`` warns when the ratio is predicted above ``WARN_SD_FACTOR^2`` (a
  user-given ``step_size`` or ``friction``) or measured above it at the end of the run
  (gradient noise larger than the Fisher information predicts, e.g. heteroscedastic data).
- "sgd" is a baseline optimiser, not a sampler: its spread is the SGD noise's, not the
  posterior's (no warning).
"""
import numbers

import numpy as np

from .._validation import check_int
from .gradients import noise_estimate_from_aux
from .integrators import SGD, SGHMC, SGLD

__all__ = ["STEP_SCALE", "SGHMC_DECAY", "SGHMC_NOISE_FRACTION", "SGHMC_BATCH_FRACTION",
           "WARN_SD_FACTOR", "BATCH_FRACTION", "MIN_BATCH", "NOISE_FLOOR", "resolve_batch_size",
           "largest_hessian_eigenvalue", "choose_integrator", "measured_noise_warning"]

#: Default step h = STEP_SCALE / L (module docstring); SGHMC: at most sqrt(STEP_SCALE / L).
STEP_SCALE = 0.1
#: Default SGHMC momentum decay per step, h * friction (Chen et al.'s alpha).
SGHMC_DECAY = 0.1
#: SGHMC's default h keeps the predicted gradient-noise share of the injected noise,
#: h Sigma_max / (2 friction), at this value (Chen et al.'s B_hat / C), so the online
#: correction has room for the estimate's error.
SGHMC_NOISE_FRACTION = 0.8
#: SGHMC's default minibatch: SGHMC_BATCH_FRACTION of the data, at least MIN_BATCH rows.
SGHMC_BATCH_FRACTION = 0.05
#: ``fit`` warns when the chain's standard deviations are predicted more than this factor
#: above the posterior's ("sgld"; "sghmc" with an infeasible noise correction).
WARN_SD_FACTOR = 1.1
#: Default minibatch: BATCH_FRACTION of the data, at least MIN_BATCH rows (at most all).
BATCH_FRACTION, MIN_BATCH = 0.01, 32
#: ``noise_variance=None`` estimates the noise variance of the standardised target, at least
#: NOISE_FLOOR (``BayesianLinearRegression`` docstring).
NOISE_FLOOR = 1e-6


def resolve_batch_size(batch_size, n_data, sampler):
    """Rows per minibatch of ``n_data`` rows: an int (capped at n_data), a fraction in (0, 1]
    of n_data, or None (default: BATCH_FRACTION (0.01) of n_data, SGHMC_BATCH_FRACTION (0.05)
    for ``sampler`` "sghmc", at least MIN_BATCH (32) rows and at most n_data)."""
    if batch_size is None:
        fraction = SGHMC_BATCH_FRACTION if sampler == "sghmc" else BATCH_FRACTION
        return min(n_data, max(MIN_BATCH, int(np.ceil(fraction * n_data))))
    if isinstance(batch_size, numbers.Integral) and not isinstance(batch_size, bool):
        return min(n_data, check_int("batch_size", batch_size, 1))
    if isinstance(batch_size, numbers.Real) and not isinstance(batch_size, bool) \
            and 0 < batch_size <= 1:
        return max(1, int(np.ceil(batch_size * n_data)))
    raise ValueError(f"batch_size must be an int >= 1, a fraction in (0, 1] or None, "
                     f"got {batch_size!r}")


def largest_hessian_eigenvalue(prior_precision, design, weights):
    """Largest eigenvalue of prior_precision I + design^T diag(weights) design, for design
    (N, p) and weights a scalar or (N,)."""
    root = np.sqrt(np.reshape(weights, (-1, 1)))
    return prior_precision + np.linalg.norm(root * design, 2) ** 2


def choose_integrator(sampler, prior_precision, design, curvature, batch_size, step_size=None,
                      friction=None):
    """The integrator of ``sampler`` ("sgld", "sgldcv", "sghmc" or "sgd") with its resolved
    step size (and friction for "sghmc"), and the warning ``fit`` gives about its accuracy
    (module docstring).

    ``prior_precision``: 1 / prior_scale^2 (> 0); ``design``: the standardised X (N, p), its
    column of ones included; ``curvature``: -d^2/d eta^2 of the log-likelihood of a row at
    eta = x . theta, (N,) at the centre or a scalar (its supremum, without a centre);
    ``batch_size``: rows per minibatch; ``step_size``, ``friction``: the user's h and
    friction (> 0), or None for the defaults.

    Returns (integrator, h (float), friction (float for "sghmc", None otherwise), the warning
    (str) or None).
    """
    L = largest_hessian_eigenvalue(prior_precision, design, curvature)
    N, n = design.shape[0], batch_size
    # Largest eigenvalue of the minibatch gradient's covariance, (N^2 f / n) x per-datum
    # Fisher information, bounded by (N^2 f / n) x (likelihood curvature L - prior) / N.
    noise = (L - prior_precision) * N / n * ((N - n) / (N - 1) if N > 1 else 0.0)
    h = step_size
    if h is None:
        h = STEP_SCALE / L
        if sampler == "sghmc":
            h = np.sqrt(STEP_SCALE / L)
            if noise > 0:
                h = min(h, np.sqrt(2 * SGHMC_NOISE_FRACTION * SGHMC_DECAY / noise))
    message = None
    if sampler == "sghmc":
        if friction is None:
            friction = SGHMC_DECAY / h
        ratio = h * noise / (2 * friction)
        if n < 2 and 1 + ratio > WARN_SD_FACTOR ** 2:
            message = (f"sampler='sghmc' with batch_size=1: one row per step gives no "
                       "estimate of the gradient noise to correct for, so the chain's "
                       f"standard deviations may be up to {np.sqrt(1 + ratio):.3g}x the "
                       "posterior's; use batch_size >= 2 (the default is 5% of the rows)")
        elif ratio > WARN_SD_FACTOR ** 2:
            message = (f"sampler='sghmc' with step_size={h:.3g} and friction={friction:.3g}: "
                       f"the minibatch gradient noise is predicted at {ratio:.3g} times the "
                       "noise the friction injects, more than the correction can remove, so "
                       f"the chain's standard deviations may be up to {np.sqrt(ratio):.3g}x "
                       "the posterior's; use the default step_size and friction, a smaller "
                       "step_size, a larger friction or a larger batch_size")
        integrator = SGHMC(h, friction=friction, noise_estimate=noise_estimate_from_aux)
        return integrator, float(h), float(friction), message
    if sampler == "sgld":
        factor = (1 + h * noise / 2) / (1 - h * L / 2) if h * L < 2 else np.inf
        if factor > WARN_SD_FACTOR ** 2:
            message = (f"sampler='sgld' with step_size={h:.3g} and batch_size={n} of {N} "
                       "rows: the minibatch gradient noise inflates the chain's variance "
                       f"by up to about {factor:.3g}x (standard deviations "
                       f"{np.sqrt(factor):.3g}x the posterior's; Brosse, Durmus & Moulines "
                       "2018). Use sampler='sgldcv' (accurate at this cost) or 'sghmc', or "
                       "a larger batch_size with a smaller step_size: the variance factor "
                       "is about (1 + h Sigma_max / 2) / (1 - h L / 2) with Sigma_max = "
                       f"{noise:.3g} and L = {L:.3g} (simplexsg.sgmcmc.regression_defaults "
                       "docstring)")
    return (SGD(h) if sampler == "sgd" else SGLD(h)), float(h), None, message


def measured_noise_warning(step_size, friction, noise_covariance):
    """The warning (str) ``fit`` gives when the gradient noise SGHMC measured at the end of its
    run, ``noise_covariance`` (p, p), exceeds what its correction can remove (the ratio
    h Sigma / (2 friction) above WARN_SD_FACTOR^2 = 1.21); None otherwise. ``step_size`` h and
    ``friction``: the chain's (> 0)."""
    ratio = step_size * np.linalg.eigvalsh(noise_covariance).max() / (2 * friction)
    if ratio > WARN_SD_FACTOR ** 2:
        return (f"sampler='sghmc': the minibatch gradient noise measured at the end of the "
                f"run is {ratio:.3g} times the noise the friction injects, more than the "
                "correction can remove, so the chain's standard deviations may be up to "
                f"{np.sqrt(ratio):.3g}x the posterior's. If the chain had not reached the "
                "posterior yet (n_iter too small), run longer; otherwise use a smaller "
                "step_size, a larger friction or a larger batch_size")
    return None
