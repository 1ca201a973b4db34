"""Integrators: ``init(theta, rng) -> LangevinState``; ``step(state, grad, h, rng) ->
LangevinState``, where ``grad`` estimates the gradient of the log posterior at ``state.theta``
and ``h`` is the step size (the diffusion-time convention of ``simplexsg.sgmcmc``)."""
import dataclasses
import numbers
from typing import NamedTuple, Optional

import numpy as np

from .._validation import check_positive_scalar
from ..schedules import as_schedule

__all__ = ["LangevinState", "SGLD", "SGD", "SGHMC"]


class LangevinState(NamedTuple):
    """Integrator state: ``theta`` (..., d); for SGHMC, ``momentum`` (same shape); ``aux``: the
    gradient estimator's state carried from step to step (e.g. EWSG's index chain), or None.
    Integrators leave ``aux`` to the driver."""
    theta: np.ndarray
    momentum: Optional[np.ndarray] = None
    aux: Optional[object] = None


class _Integrator:
    def step_sizes(self, n_iter, start=0):
        """Step sizes h_t for t = start, ..., start + n_iter - 1, checked finite and > 0."""
        schedule = as_schedule(self.step_size)
        h = np.array([schedule(t) for t in range(start, start + n_iter)], dtype=np.float64)
        bad = ~(np.isfinite(h) & (h > 0))
        if bad.any():
            t = start + int(np.flatnonzero(bad)[0])
            raise ValueError(f"step_size must be > 0 and finite; the schedule gave {h[t - start]} "
                             f"at t={t}")
        return h

    def init(self, theta, rng, momentum0=None):
        """The state at ``theta`` (first-order integrators ignore ``momentum0``)."""
        return LangevinState(theta)


def _check_temperature(temperature):
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) \
            or not np.isfinite(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")


@dataclasses.dataclass(frozen=True)
class SGLD(_Integrator):
    """Euler step of the overdamped Langevin diffusion (Welling & Teh 2011, in this module's
    convention): ``theta <- theta + h * grad + sqrt(2 h T) xi``, xi ~ N(0, I).

    ``step_size`` h: a float > 0 or a schedule of ``simplexsg.schedules``; Welling & Teh's /
    Baker et al.'s epsilon is ``2 h``. ``temperature`` T >= 0 scales the noise variance (T = 0
    is ``SGD``). With ``FullGradient`` this is LMC/ULA; with ``ControlVariateGradient``, SGLD-CV.
    """

    step_size: object
    temperature: float = 1.0

    def __post_init__(self):
        as_schedule(self.step_size)
        _check_temperature(self.temperature)

    def step(self, state, grad, h, rng):
        theta = state.theta + h * grad
        if self.temperature > 0:
            theta = theta + np.sqrt(2.0 * h * self.temperature) * rng.standard_normal(theta.shape)
        return LangevinState(theta)


@dataclasses.dataclass(frozen=True)
class SGD(_Integrator):
    """Stochastic gradient ascent on the log posterior: ``theta <- theta + h * grad`` (no noise;
    Brosse et al.'s SGD, Baker et al.'s eq. 5 with their h_k = h). Used to find a centre."""

    step_size: object

    def __post_init__(self):
        as_schedule(self.step_size)

    def step(self, state, grad, h, rng):
        return LangevinState(state.theta + h * grad)


@dataclasses.dataclass(frozen=True)
class SGHMC(_Integrator):
    """Stochastic gradient HMC (Chen et al. 2014) with unit mass: a semi-implicit Euler step of
    the underdamped Langevin diffusion ``d theta = r dt``,
    ``dr = grad log pi(theta) dt - gamma r dt + sqrt(2 gamma T) dW``::

        r     <- (1 - h gamma) r + h * grad(theta) + N(0, 2 gamma h T I - h^2 Sigma_hat)
        theta <- theta + h r

    ``step_size`` h is a time step (float or schedule), ``friction`` gamma > 0 with
    ``h * gamma < 1``, ``temperature`` T >= 0. The stationary law of the diffusion is
    pi(theta) x N(0, T I) for r. In Chen et al.'s parametrisation (v = h r, learning rate eta,
    momentum decay alpha): ``eta = h^2``, ``alpha = h gamma``, ``beta_hat = h^2 Sigma_hat / 2``.
    The momentum starts as N(0, T I), or from the state passed to ``sample``.

    **Gradient-noise correction** (Chen et al.'s B_hat = h Sigma_hat / 2 in this module's
    units). A gradient estimate with covariance Sigma adds ``h^2 Sigma`` to the
    momentum's variance each step, on top of the ``2 gamma h T`` injected: without correction
    the chain runs at the temperature ``T + h Sigma / (2 gamma)`` (per eigen-direction), too wide
    by that factor in variance when ``h Sigma / (2 gamma)`` is not small (minibatch gradients at
    h ~ 1/sqrt(N): the factor is O(N / n)). ``noise_estimate`` = Sigma_hat, an estimate of the
    covariance of ``grad`` given ``theta``, makes the injected covariance
    ``2 gamma h T I - h^2 Sigma_hat``, so the total is ``2 gamma h T I`` when Sigma_hat = Sigma.
    It is the covariance's projection onto the positive semi-definite matrices (eigenvalues
    clipped at 0): where ``h Sigma_hat / (2 gamma T) > 1`` the correction cannot remove all the
    noise, and the chain is too wide in that direction by that factor in variance (make h
    smaller or gamma larger). ``noise_estimate``:

    - None (default): no correction (beta_hat = 0);
    - a covariance: a float >= 0 (``Sigma_hat = value * I``), the diagonal (d,), or a matrix
      (d, d) or one per chain (..., d, d);
    - a callable ``noise_estimate(state) -> covariance or None`` (None: no correction at that
      step), e.g. reading an online estimate a gradient estimator keeps in ``state.aux``
      (``simplexsg.sgmcmc.gradients.NoiseTrackingGradient``). It is called before the step, so an estimate
      from earlier minibatches is independent of this step's gradient noise.
    """

    step_size: object
    friction: float = 1.0
    temperature: float = 1.0
    noise_estimate: object = None

    def __post_init__(self):
        as_schedule(self.step_size)
        check_positive_scalar("friction", self.friction)
        _check_temperature(self.temperature)
        estimate = self.noise_estimate
        if estimate is not None and not callable(estimate):
            sigma = self._check_noise_covariance(estimate)
            # Stored as a float or nested tuples, so that SGHMCs compare and hash by value.
            def freeze(x):
                return tuple(map(freeze, x)) if isinstance(x, list) else x
            object.__setattr__(self, "noise_estimate", freeze(sigma.tolist()))

    def step_sizes(self, n_iter, start=0):
        h = super().step_sizes(n_iter, start)
        if h.size and (h * self.friction).max() >= 1:
            t = start + int(np.argmax(h * self.friction >= 1))
            raise ValueError(f"step_size * friction must be < 1; step_size is {h[t - start]} at "
                             f"t={t} with friction {self.friction}")
        return h

    def init(self, theta, rng, momentum0=None):
        if momentum0 is None:
            momentum0 = np.sqrt(self.temperature) * rng.standard_normal(np.shape(theta))
        return LangevinState(theta, np.asarray(momentum0, dtype=np.float64))

    def noise_covariance(self, state):
        """Sigma_hat for the step from ``state``: None (no correction) or a float64 array of
        shape (), (d,) or (..., d, d) (``noise_estimate``)."""
        estimate = self.noise_estimate
        if callable(estimate):
            estimate = estimate(state)
        return None if estimate is None else np.asarray(estimate, dtype=np.float64)

    @staticmethod
    def _check_noise_covariance(value):
        """A gradient-noise covariance as a float64 array: finite; >= 0 as a scalar or a
        diagonal (d,); square matrices (..., d, d)."""
        from .._validation import check_finite
        sigma = check_finite("noise_estimate", value)
        if sigma.ndim < 2 and np.any(sigma < 0):
            raise ValueError("noise_estimate must be >= 0 (a variance or a diagonal of "
                             "variances)")
        if sigma.ndim >= 2 and sigma.shape[-1] != sigma.shape[-2]:
            raise ValueError(f"noise_estimate must be square matrices (..., d, d), got shape "
                             f"{sigma.shape}")
        return sigma

    def step(self, state, grad, h, rng):
        gamma = self.friction
        r = (1.0 - h * gamma) * state.momentum + h * grad
        if self.temperature > 0:
            budget = 2.0 * gamma * h * self.temperature
            sigma = self.noise_covariance(state)
            xi = rng.standard_normal(r.shape)
            if sigma is None:
                r = r + np.sqrt(budget) * xi
            elif sigma.ndim < 2:                        # isotropic or diagonal
                r = r + np.sqrt(np.maximum(budget - h * h * sigma, 0.0)) * xi
            else:
                # Injected covariance M = budget I - h^2 Sigma_hat: its Cholesky factor when M is
                # positive definite, else its projection onto the PSD matrices, V D^1/2 V^T.
                try:
                    factor = np.linalg.cholesky(budget * np.eye(sigma.shape[-1])
                                                - (h * h) * sigma)
                except np.linalg.LinAlgError:
                    w, v = np.linalg.eigh(sigma)
                    factor = v * np.sqrt(np.maximum(budget - h * h * w, 0.0))[..., None, :]
                    factor = factor @ np.swapaxes(v, -1, -2)
                r = r + np.einsum("...ij,...j->...i", factor, xi)
        return LangevinState(state.theta + h * r, r)
