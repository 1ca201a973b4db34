"""SGLD-family samplers for unconstrained parameters, built from swappable parts.

``sample(model, data, estimator, integrator, n_iter)`` runs ``integrator`` driven by
``estimator``'s estimates of the gradient of the log posterior of ``model`` given ``data``:

- models: ``Model`` (interface), ``LinearRegressionModel``, ``LogisticRegressionModel``;
- gradient estimators: ``FullGradient`` (LMC), ``MinibatchGradient`` (SGLD),
  ``ControlVariateGradient`` (SGLD-CV = SGLDFP), centre from ``find_centre``;
- integrators: ``SGLD``, ``SGHMC``, ``SGD``.

**Data** is a tuple of arrays sharing their first axis, one row per datum (``(X, y)`` for the
regression models); a **batch** is such a tuple of rows, ``tuple(a[idx] for a in data)``.

**Chains** ``theta`` have shape ``(d,)`` or ``(n_chains, d)``: several independent chains
advance together, each with its own minibatches and noise (a batch then has a leading
``n_chains`` axis, e.g. X of shape (n_chains, n, d)).

**Step-size convention** (every integrator here): the step of size ``h`` is the Euler step of
time ``h`` of the Langevin diffusion ``d theta = grad log pi(theta) dt + sqrt(2) dW``::

    SGLD:  theta <- theta + h * grad_est(theta) + sqrt(2 h) * xi,      xi ~ N(0, I)

Conversions: Brosse et al.'s gamma = h, the MLMC paper's h = h and EWSG's
h = h; Welling & Teh's and Baker et al.'s epsilon (drift ``epsilon/2 * grad``, noise variance
``epsilon``) is ``2 h``, so pass ``step_size = epsilon / 2``. The step size ``h`` of
``simplexsg.simplex`` (SCIR/SGRLD) is the same diffusion time as this ``h``.
"""
import dataclasses
import numbers
import time
import warnings
from typing import NamedTuple, Optional

import numpy as np
from scipy import optimize
from scipy.special import expit

from ._random import check_generator
from ._validation import check_finite, check_int, check_positive_scalar
from .schedules import as_schedule

__all__ = ["Model", "LinearRegressionModel", "LogisticRegressionModel", "FullGradient",
           "MinibatchGradient", "ControlVariateGradient", "find_centre", "LangevinState",
           "SGLD", "SGHMC", "SGD", "SampleResult", "sample"]

# A full-data pass runs over chunks of rows such that rows * theta.size <= this: the
# (n_chains, rows) temporaries then stay in cache (6x faster than one pass at 1000 x 200 x 2).
_CHUNK_ELEMENTS = 1 << 16


def _n_data(data):
    """The number of data N: the common length of the arrays of ``data``."""
    return len(data[0])


def _take(data, idx):
    """The batch of rows ``idx`` (any integer array shape) of every array of ``data``."""
    return tuple(a[idx] for a in data)


# ------------------------------------------------------------------------------------------
# Models
# ------------------------------------------------------------------------------------------

class Model:
    """Interface of a model: a prior and per-datum likelihood terms, vectorised.

    Subclasses implement ``check_data``, ``n_params``, ``grad_log_prior`` and
    ``grad_log_lik``; ``log_prior`` and ``log_lik`` are optional (``find_centre(method="lbfgs")``
    and the diagnostics need them), ``sum_grad_log_lik`` may be overridden for speed. Data is
    a tuple of arrays with a common first axis (one row per datum); a batch is a tuple of rows
    of those arrays, with leading axes that broadcast with theta's (..., d) chain axes.
    """

    def check_data(self, data):
        """Validate ``data``; return it as a tuple of float arrays (ValueError names the fault)."""
        raise NotImplementedError

    def n_params(self, data):
        """The dimension d of theta for (checked) ``data``."""
        raise NotImplementedError

    def grad_log_prior(self, theta):
        """Gradient of log p(theta): (..., d)."""
        raise NotImplementedError

    def grad_log_lik(self, theta, batch):
        """Per-datum gradients of log p(x_i | theta): (..., n, d) for a batch of n rows."""
        raise NotImplementedError

    def sum_grad_log_lik(self, theta, batch):
        """sum_i grad log p(x_i | theta) over the batch rows: (..., d). Override for speed."""
        return self.grad_log_lik(theta, batch).sum(axis=-2)

    def log_prior(self, theta):
        """log p(theta): (...)."""
        raise NotImplementedError(f"{type(self).__name__} does not define log_prior")

    def log_lik(self, theta, batch):
        """Per-datum log p(x_i | theta): (..., n)."""
        raise NotImplementedError(f"{type(self).__name__} does not define log_lik")

    def log_posterior(self, theta, data):
        """Unnormalised log posterior, log p(theta) + sum_i log p(x_i | theta): (...)."""
        theta = np.asarray(theta, dtype=np.float64)
        total = self.log_prior(theta)
        for chunk in _chunks(data, theta):
            total = total + self.log_lik(theta, chunk).sum(axis=-1)
        return total

    def grad_log_posterior(self, theta, data):
        """Full-data gradient of the log posterior (one pass over ``data``): (..., d)."""
        theta = np.asarray(theta, dtype=np.float64)
        total = self.grad_log_prior(theta)
        for chunk in _chunks(data, theta):
            total = total + self.sum_grad_log_lik(theta, chunk)
        return total


def _chunks(data, theta):
    size = max(1, _CHUNK_ELEMENTS // max(1, theta.size))
    n = _n_data(data)
    for start in range(0, n, size):
        yield tuple(a[start:start + size] for a in data)


def _check_regression_data(data, d_prior):
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise ValueError("data must be a pair (X, y) of arrays, got "
                         f"{type(data).__name__}" + (f" of length {len(data)}"
                                                     if isinstance(data, (tuple, list)) else ""))
    X = check_finite("X", data[0])
    y = check_finite("y", data[1])
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-d array (n_data, d), got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},) to match X, got {y.shape}")
    if d_prior is not None and d_prior != X.shape[1]:
        raise ValueError(f"prior_mean has length {d_prior} but X has {X.shape[1]} columns")
    return X, y


@dataclasses.dataclass(frozen=True, eq=False)
class _GaussianPrior:
    prior_mean: object = 0.0
    prior_precision: float = 1.0

    def __post_init__(self):
        mean = check_finite("prior_mean", self.prior_mean)
        if mean.ndim > 1:
            raise ValueError(f"prior_mean must be a scalar or 1-d, got shape {mean.shape}")
        object.__setattr__(self, "prior_mean", mean)
        check_positive_scalar("prior_precision", self.prior_precision)

    def _d_prior(self):
        return None if self.prior_mean.ndim == 0 else self.prior_mean.shape[0]

    def n_params(self, data):
        return data[0].shape[1]

    def grad_log_prior(self, theta):
        """-prior_precision * (theta - prior_mean): (..., d)."""
        return -self.prior_precision * (np.asarray(theta, dtype=np.float64) - self.prior_mean)

    def log_prior(self, theta):
        """Gaussian N(prior_mean, I / prior_precision) log density: (...)."""
        theta = np.asarray(theta, dtype=np.float64)
        lam, d = self.prior_precision, theta.shape[-1]
        return (0.5 * d * np.log(lam / (2 * np.pi))
                - 0.5 * lam * np.sum((theta - self.prior_mean) ** 2, axis=-1))


def _linear_predictor(theta, X):
    """x_i . theta for X (..., n, d) and theta (..., d): (..., n)."""
    theta = np.asarray(theta, dtype=np.float64)
    if X.ndim == 2:
        return theta @ X.T
    return np.matmul(X, theta[..., None])[..., 0]


def _weighted_rows(w, X):
    """sum_i w_i x_i for w (..., n) and X (..., n, d): (..., d)."""
    if X.ndim == 2:
        return w @ X
    return np.matmul(w[..., None, :], X)[..., 0, :]


class _GLM:
    """Per-datum gradients of the form w_i(theta) x_i, with the weights from ``_weights``."""

    def grad_log_lik(self, theta, batch):
        return self._weights(theta, batch)[..., None] * batch[0]

    def sum_grad_log_lik(self, theta, batch):
        return _weighted_rows(self._weights(theta, batch), batch[0])


@dataclasses.dataclass(frozen=True, eq=False)
class LinearRegressionModel(_GLM, _GaussianPrior, Model):
    """Bayesian linear regression: y_i ~ N(x_i . theta, 1 / noise_precision) with known noise,
    theta ~ N(prior_mean, I / prior_precision). Data ``(X, y)``: X (N, d), y (N,).

    The posterior is Gaussian (``posterior``), with precision
    ``H = prior_precision I + noise_precision X^T X``.
    """

    prior_mean: object = 0.0
    prior_precision: float = 1.0
    noise_precision: float = 1.0

    def __post_init__(self):
        super().__post_init__()
        check_positive_scalar("noise_precision", self.noise_precision)

    def check_data(self, data):
        return _check_regression_data(data, self._d_prior())

    def _weights(self, theta, batch):
        # grad log p(y_i | x_i, theta) = noise_precision * (y_i - x_i . theta) x_i
        X, y = batch
        return self.noise_precision * (y - _linear_predictor(theta, X))

    def log_lik(self, theta, batch):
        X, y = batch
        tau = self.noise_precision
        return 0.5 * np.log(tau / (2 * np.pi)) - 0.5 * tau * (y - _linear_predictor(theta, X)) ** 2

    def posterior(self, data):
        """Exact posterior mean (d,) and covariance (d, d)."""
        X, y = self.check_data(data)
        d = X.shape[1]
        H = self.prior_precision * np.eye(d) + self.noise_precision * X.T @ X
        b = (self.prior_precision * np.broadcast_to(self.prior_mean, (d,))
             + self.noise_precision * X.T @ y)
        cov = np.linalg.inv(H)
        return np.linalg.solve(H, b), 0.5 * (cov + cov.T)


@dataclasses.dataclass(frozen=True, eq=False)
class LogisticRegressionModel(_GLM, _GaussianPrior, Model):
    """Bayesian logistic regression: P(y_i = 1) = sigmoid(x_i . theta), y_i in {0, 1},
    theta ~ N(prior_mean, I / prior_precision). Data ``(X, y)``: X (N, d), y (N,).
    Add a column of ones to X for an intercept."""

    prior_mean: object = 0.0
    prior_precision: float = 1.0

    def check_data(self, data):
        X, y = _check_regression_data(data, self._d_prior())
        bad = (y != 0) & (y != 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"y must contain only 0 and 1; found {y[i]} at index {i}")
        return X, y

    def _weights(self, theta, batch):
        # grad log p(y_i | x_i, theta) = (y_i - sigmoid(x_i . theta)) x_i
        X, y = batch
        return y - expit(_linear_predictor(theta, X))

    def log_lik(self, theta, batch):
        X, y = batch
        eta = _linear_predictor(theta, X)
        return y * eta - np.logaddexp(0.0, eta)


# ------------------------------------------------------------------------------------------
# Gradient estimators: estimator(model, data, theta, random_state) -> estimate of
# grad log posterior at theta, shape theta.shape. ``prepare(model, data)`` returns the estimator
# ready for that model and data (``sample`` calls it; only the control variate needs it).
# ------------------------------------------------------------------------------------------

def _draw_indices(rng, N, n, shape, replace):
    """Minibatch indices of shape ``shape + (n,)``, each row uniform over {0..N-1}, with or
    without replacement (without: a uniformly random n-subset per row)."""
    if replace:
        return rng.integers(N, size=shape + (n,))
    if shape == ():
        return rng.choice(N, size=n, replace=False)
    rows = int(np.prod(shape))
    if n * n <= 2 * N:
        # Floyd's algorithm, vectorised over rows: n steps of O(rows * n) comparisons.
        idx = np.empty((rows, n), dtype=np.int64)
        for k, j in enumerate(range(N - n, N)):
            t = rng.integers(0, j + 1, size=rows)
            seen = (idx[:, :k] == t[:, None]).any(axis=1)
            idx[:, k] = np.where(seen, j, t)
    else:
        # The n smallest of N uniforms per row: O(rows * N).
        idx = np.argpartition(rng.random((rows, N)), n - 1, axis=1)[:, :n]
    return idx.reshape(shape + (n,))


class _Estimator:
    def prepare(self, model, data):
        """This estimator, ready for ``model`` and (checked) ``data``."""
        return self


@dataclasses.dataclass(frozen=True)
class FullGradient(_Estimator):
    """The exact full-data gradient of the log posterior (with an SGLD integrator: LMC/ULA)."""

    def __call__(self, model, data, theta, random_state=None):
        return model.grad_log_posterior(theta, data)


def _check_batch_size(batch_size, replace, N=None):
    batch_size = check_int("batch_size", batch_size, 1)
    if not isinstance(replace, (bool, np.bool_)):
        raise ValueError(f"replace must be True or False, got {replace!r}")
    if N is not None and not replace and batch_size > N:
        raise ValueError(f"batch_size={batch_size} exceeds the number of data N={N} "
                         "(sampling without replacement)")
    return batch_size


@dataclasses.dataclass(frozen=True)
class MinibatchGradient(_Estimator):
    """Minibatch estimate ``grad log p(theta) + (N/n) sum_{i in S} grad log p(x_i | theta)``.

    S holds ``batch_size`` = n indices drawn uniformly, with or without (default, as Baker et
    al.) replacement, afresh at each call and for each chain. Unbiased; its covariance is
    ``N^2/n C`` with replacement and ``N^2/n (N-n)/(N-1) C`` without, C the population
    covariance of the per-datum gradients at theta.
    """

    batch_size: int
    replace: bool = False

    def __post_init__(self):
        _check_batch_size(self.batch_size, self.replace)

    def prepare(self, model, data):
        _check_batch_size(self.batch_size, self.replace, _n_data(data))
        return self

    def __call__(self, model, data, theta, random_state=None):
        theta = np.asarray(theta, dtype=np.float64)
        N, n = _n_data(data), self.batch_size
        if not self.replace and n > N:
            _check_batch_size(n, self.replace, N)
        idx = _draw_indices(check_generator(random_state), N, n, theta.shape[:-1], self.replace)
        return (model.grad_log_prior(theta)
                + (N / n) * model.sum_grad_log_lik(theta, _take(data, idx)))


@dataclasses.dataclass(frozen=True, eq=False)
class ControlVariateGradient(_Estimator):
    """Control-variate estimate (SGLD-CV of Baker et al. 2019 = SGLDFP of Brosse et al. 2018)::

        grad log pi(c) + [grad log p(theta) - grad log p(c)]
                       + (N/n) sum_{i in S} [grad log p(x_i | theta) - grad log p(x_i | c)]

    with ``c = centre`` (d,) near the posterior mode (``find_centre``) and S as in
    ``MinibatchGradient``. Unbiased for any centre; its noise is exactly 0 at ``theta = c``.
    ``prepare(model, data)`` computes the full-data gradient at the centre (one pass over the
    data; ``sample`` calls it) unless ``centre_gradient`` (that gradient, (d,)) is given.
    ``sample`` starts the chain at the centre when no ``theta0`` is given.
    """

    centre: object
    batch_size: int
    replace: bool = False
    centre_gradient: Optional[object] = None

    def __post_init__(self):
        centre = check_finite("centre", self.centre)
        if centre.ndim != 1 or centre.size == 0:
            raise ValueError(f"centre must be a non-empty 1-d array (d,), got shape {centre.shape}")
        object.__setattr__(self, "centre", centre)
        _check_batch_size(self.batch_size, self.replace)
        if self.centre_gradient is not None:
            grad = check_finite("centre_gradient", self.centre_gradient)
            if grad.shape != centre.shape:
                raise ValueError(f"centre_gradient has shape {grad.shape}, centre has shape "
                                 f"{centre.shape}")
            object.__setattr__(self, "centre_gradient", grad)

    def prepare(self, model, data):
        _check_batch_size(self.batch_size, self.replace, _n_data(data))
        d = model.n_params(data)
        if self.centre.shape != (d,):
            raise ValueError(f"centre has shape {self.centre.shape}, the model has d={d} "
                             "parameters")
        if self.centre_gradient is not None:
            return self
        return dataclasses.replace(
            self, centre_gradient=model.grad_log_posterior(self.centre, data))

    def __call__(self, model, data, theta, random_state=None):
        if self.centre_gradient is None:
            raise ValueError("ControlVariateGradient needs the full gradient at the centre: "
                             "call prepare(model, data) first (sample does)")
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        N, n = _n_data(data), self.batch_size
        if not self.replace and n > N:
            _check_batch_size(n, self.replace, N)
        idx = _draw_indices(check_generator(random_state), N, n, theta.shape[:-1], self.replace)
        batch = _take(data, idx)
        # The centre copied to theta's shape and layout takes the same arithmetic path as
        # theta, so the difference is exactly 0 where theta == centre.
        centre = np.ascontiguousarray(np.broadcast_to(self.centre, theta.shape))
        diff = model.grad_log_lik(theta, batch) - model.grad_log_lik(centre, batch)
        correction = (model.grad_log_prior(theta) - model.grad_log_prior(centre)
                      + (N / n) * diff.sum(axis=-2))
        return self.centre_gradient + correction


# ------------------------------------------------------------------------------------------
# Integrators: init(theta, rng) -> LangevinState; step(state, grad, h, rng) -> LangevinState,
# where grad is the estimate of grad log posterior at state.theta and h the step size.
# ------------------------------------------------------------------------------------------

class LangevinState(NamedTuple):
    """Integrator state: ``theta`` (..., d) and, for SGHMC, ``momentum`` (same shape)."""
    theta: np.ndarray
    momentum: Optional[np.ndarray] = None


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

        r     <- (1 - h gamma) r + h * grad(theta) + sqrt(2 gamma h T) xi,   xi ~ N(0, I)
        theta <- theta + h r

    ``step_size`` h is a time step (float or schedule), ``friction`` gamma > 0 with
    ``h * gamma < 1``, ``temperature`` T >= 0. The stationary law of the diffusion is
    pi(theta) x N(0, T I) for r. In Chen et al.'s parametrisation (v = h r, learning rate eta,
    momentum decay alpha): ``eta = h^2``, ``alpha = h gamma``, with their noise estimate
    beta_hat = 0. The momentum starts as N(0, T I), or from the state passed to ``sample``.
    """

    step_size: object
    friction: float = 1.0
    temperature: float = 1.0

    def __post_init__(self):
        as_schedule(self.step_size)
        check_positive_scalar("friction", self.friction)
        _check_temperature(self.temperature)

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

    def step(self, state, grad, h, rng):
        gamma = self.friction
        r = (1.0 - h * gamma) * state.momentum + h * grad
        if self.temperature > 0:
            r = r + np.sqrt(2.0 * gamma * h * self.temperature) * rng.standard_normal(r.shape)
        return LangevinState(state.theta + h * r, r)


# ------------------------------------------------------------------------------------------
# Driver
# ------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, eq=False)
class SampleResult:
    """Output of ``sample``.

    chain : (n_kept, d) or (n_kept, n_chains, d)
        theta after steps thin, 2 thin, ..., n_kept * thin (n_kept = n_iter // thin); the
        starting point is not included.
    gradients : same shape as chain, or None
        The estimator's estimate of grad log posterior at each kept state (the estimate used by
        the following step; one extra estimate for the last step), if ``store_gradients``.
    seconds : float
        Wall time of ``sample``, including the estimator's setup (e.g. the full gradient at a
        control variate's centre).
    state : LangevinState
        The final state (pass it as ``theta0`` to continue the chains).
    """
    chain: np.ndarray
    gradients: Optional[np.ndarray]
    seconds: float
    state: LangevinState


def _check_theta0(theta0, d):
    theta0 = check_finite("theta0", theta0)
    if theta0.ndim not in (1, 2) or theta0.shape[-1] != d:
        raise ValueError(f"theta0 must have shape ({d},) or (n_chains, {d}), got {theta0.shape}")
    return theta0.copy()


def sample(model, data, estimator, integrator, n_iter, *, theta0=None, random_state=None,
           store_gradients=False, thin=1, verbose=0, resume=None, checkpoint=None,
           checkpoint_every=None):
    """Run ``n_iter`` steps of ``integrator`` driven by ``estimator``; returns ``SampleResult``.

    ``theta0``: (d,) for one chain or (n_chains, d) for independent chains run together; by
    default the estimator's centre (``ControlVariateGradient``) or zeros. Pass a previous
    result's ``state`` to continue its chains (with SGHMC's momentum; a step-size schedule
    restarts at t = 0). ``random_state``: None, int, SeedSequence or Generator
    (``simplexsg._random.check_generator``); the output is a function of it and the inputs. ``thin``: keep every ``thin``-th state. ``verbose`` > 0 shows
    a tqdm progress bar (extra ``simplexsg[progress]``). Step sizes follow the module docstring's
    convention. Bad input raises ValueError/TypeError naming the argument.

    Interruption: an exception inside the loop (Ctrl-C included) carries the run's
    ``SampleProgress`` after its last completed step as ``exc.sample_progress``; ``sample``
    with the same arguments and ``resume=progress`` finishes the run bit for bit as if it had
    not stopped. ``checkpoint(progress)`` is called every ``checkpoint_every`` steps.
    """
    start = time.perf_counter()
    data = model.check_data(data)
    n_iter = check_int("n_iter", n_iter, 1)
    thin = check_int("thin", thin, 1)
    if thin > n_iter:
        raise ValueError(f"thin={thin} exceeds n_iter={n_iter}: no state would be kept")
    d = model.n_params(data)
    rng = check_generator(random_state)
    steps = integrator.step_sizes(n_iter)
    estimator = estimator.prepare(model, data)
    momentum0 = None
    if isinstance(theta0, LangevinState):
        theta0, momentum0 = theta0
    if theta0 is None:
        theta0 = getattr(estimator, "centre", None)
        theta0 = np.zeros(d) if theta0 is None else theta0
    theta = _check_theta0(theta0, d)
    if momentum0 is not None:
        momentum0 = check_finite("momentum0", momentum0)
        if momentum0.shape != theta.shape:
            raise ValueError(f"the momentum of theta0 has shape {momentum0.shape}, theta has "
                             f"shape {theta.shape}")

    n_kept = n_iter // thin
    if checkpoint is not None:
        checkpoint_every = check_int("checkpoint_every", checkpoint_every, 1)
    if resume is None:
        chain = np.empty((n_kept,) + theta.shape)
        grads = np.empty_like(chain) if store_gradients else None
        state = integrator.init(theta, rng, momentum0)
        progress = (0, state, rng.bit_generator.state)
    else:
        chain, grads = resume.chain.copy(), None if resume.gradients is None else \
            resume.gradients.copy()
        if chain.shape != (n_kept,) + theta.shape or (grads is None) == store_gradients:
            raise ValueError("resume comes from a run with other n_iter, thin, chains or "
                             "store_gradients")
        state = resume.state
        rng.bit_generator.state = resume.rng_state
        progress = (resume.step, state, resume.rng_state)
    iterations = range(progress[0], n_iter)
    if verbose:
        from ._optional import tqdm
        iterations = tqdm()(iterations, desc=type(integrator).__name__, leave=False)
    try:
        for t in iterations:
            grad = estimator(model, data, state.theta, rng)
            if store_gradients and t and t % thin == 0 and t // thin <= n_kept:
                grads[t // thin - 1] = grad
            state = integrator.step(state, grad, steps[t], rng)
            if not np.isfinite(state.theta).all():
                raise FloatingPointError(
                    f"the chain diverged at step {t}: its state is not finite with step size "
                    f"h = {steps[t]:.3g}; use a smaller step_size")
            if (t + 1) % thin == 0:
                chain[(t + 1) // thin - 1] = state.theta
            progress = (t + 1, state, rng.bit_generator.state)     # one atomic rebinding
            if checkpoint is not None and (t + 1) % checkpoint_every == 0:
                checkpoint(SampleProgress(*progress, chain, grads))
    except BaseException as exc:
        exc.sample_progress = SampleProgress(*progress, chain, grads)
        raise
    if store_gradients and n_kept * thin == n_iter:
        grads[-1] = estimator(model, data, state.theta, rng)
    return SampleResult(chain, grads, time.perf_counter() - start, state)


@dataclasses.dataclass(frozen=True, eq=False)
class SampleProgress:
    """Where an unfinished ``sample`` run stands: ``step`` steps completed, the integrator
    ``state`` and the generator's ``rng_state`` after them, and the ``chain`` and
    ``gradients`` arrays (rows of the steps completed are final). ``sample(...,
    resume=progress)`` finishes the run."""
    step: int
    state: LangevinState
    rng_state: dict
    chain: np.ndarray
    gradients: Optional[np.ndarray]


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
    theta0 = np.zeros(d) if theta0 is None else _check_theta0(theta0, d)
    if theta0.ndim != 1:
        raise ValueError(f"theta0 must have shape ({d},), got {theta0.shape}")
    if method == "sgd":
        if step_size is None:
            raise ValueError("method='sgd' needs a step_size (float or schedule)")
        batch_size = check_int("batch_size", batch_size, 1)
        batch_size = min(batch_size, _n_data(data)) if not replace else batch_size
        if n_iter is None:
            n_iter = 10 * -(-_n_data(data) // batch_size)
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
