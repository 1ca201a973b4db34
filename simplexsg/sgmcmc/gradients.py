"""Gradient estimators: ``estimator(model, data, theta, random_state)`` estimates the gradient
of the log posterior of ``model`` given ``data`` at ``theta``, shape ``theta.shape``.

``prepare(model, data)`` returns the estimator ready for that model and data (``sample`` calls
it once per run); ``step_gradient(model, data, state, h, integrator, rng) -> (grad, aux)`` is
what the driver calls each step: by default the estimate at ``state.theta``. An estimator whose
choice of data depends on the integrator's state or on its own past (EWSG's index chain)
overrides it and ``init_aux``, and keeps that past in ``state.aux``, so that a chain resumed
from its state continues bit for bit.
"""
import dataclasses
from typing import Optional

import numpy as np

from .._random import check_generator
from .._validation import check_finite, check_int
from .models import n_data, take

__all__ = ["GradientEstimator", "FullGradient", "MinibatchGradient", "ControlVariateGradient",
           "NoiseTrackingGradient", "StoredControlVariate", "draw_indices",
           "noise_estimate_from_aux"]


def draw_indices(rng, N, n, shape, replace):
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


class GradientEstimator:
    """Base of the gradient estimators (module docstring)."""

    def prepare(self, model, data):
        """This estimator, ready for ``model`` and (checked) ``data``."""
        return self

    def init_aux(self, model, data, theta, rng):
        """The estimator's state carried between steps (``LangevinState.aux``) at the start of
        a run: None for a memoryless estimator."""
        return None

    def step_gradient(self, model, data, state, h, integrator, rng):
        """``(grad, aux)``: the estimate the driver's next step of size ``h`` of
        ``integrator`` uses, at ``state.theta`` (``LangevinState``), and the estimator's new
        state. By default the estimate at ``state.theta`` and ``state.aux`` unchanged."""
        return self(model, data, state.theta, rng), state.aux


@dataclasses.dataclass(frozen=True)
class FullGradient(GradientEstimator):
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
class MinibatchGradient(GradientEstimator):
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
        _check_batch_size(self.batch_size, self.replace, n_data(data))
        return self

    def __call__(self, model, data, theta, random_state=None):
        theta = np.asarray(theta, dtype=np.float64)
        N, n = n_data(data), self.batch_size
        if not self.replace and n > N:
            _check_batch_size(n, self.replace, N)
        idx = draw_indices(check_generator(random_state), N, n, theta.shape[:-1], self.replace)
        return (model.grad_log_prior(theta)
                + (N / n) * model.sum_grad_log_lik(theta, take(data, idx)))


@dataclasses.dataclass(frozen=True, eq=False)
class ControlVariateGradient(GradientEstimator):
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
        _check_batch_size(self.batch_size, self.replace, n_data(data))
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
        N, n = n_data(data), self.batch_size
        if not self.replace and n > N:
            _check_batch_size(n, self.replace, N)
        idx = draw_indices(check_generator(random_state), N, n, theta.shape[:-1], self.replace)
        batch = take(data, idx)
        # The centre copied to theta's shape and layout takes the same arithmetic path as
        # theta, so the difference is exactly 0 where theta == centre.
        centre = np.ascontiguousarray(np.broadcast_to(self.centre, theta.shape))
        diff = model.grad_log_lik(theta, batch) - model.grad_log_lik(centre, batch)
        correction = (model.grad_log_prior(theta) - model.grad_log_prior(centre)
                      + (N / n) * diff.sum(axis=-2))
        return self.centre_gradient + correction


class StoredControlVariate:
    """SGLD-CV over data whose rows arrive and change while the chain runs (e.g. LDA's
    documents, whose topic counts are resampled at each visit): a table of the per-datum
    gradients at the centre c and their running sum G over the stored rows.

    Rows are slots ``0 .. n_rows - 1``; the model's data live with the caller, who passes the
    rows' batch (``models`` convention) to ``store``, ``set_centre`` and ``estimate``. With
    ``n_seen`` rows stored, the full-data gradient over ``n_total`` rows is estimated by
    scaling the stored rows to ``n_total``; on the rows S (n indices, repeats allowed)::

        grad log p(theta) + (n_total / n_seen) G + (n_total / n) sum_{i in S} [g_i(theta) - g_i(c)]

    unbiased for the scaled full gradient over S drawn uniformly from the stored rows, and exact
    (bit for bit: the table holds the same bits as ``model.grad_log_lik(c, batch)``) at c.
    Replacing a row updates G by subtraction and addition: O(n p) per call, memory O(n_rows p).
    """

    def __init__(self, n_rows, n_params, n_total):
        self.n_total = n_total
        self.centre = None
        self.table = np.zeros((n_rows, n_params))
        self.seen = np.zeros(n_rows, dtype=bool)
        self.n_seen = 0
        self.running_sum = np.zeros(n_params)

    def store(self, model, idx, batch):
        """Store (or replace) the distinct rows ``idx`` whose data are ``batch``."""
        if self.centre is not None:
            grads = model.grad_log_lik(self.centre, batch)
            self.running_sum += grads.sum(axis=0) - self.table[idx].sum(axis=0)
            self.table[idx] = grads
        self.n_seen += int((~self.seen[idx]).sum())
        self.seen[idx] = True

    def set_centre(self, model, centre, batch_seen):
        """Move the centre to ``centre``; ``batch_seen``: the data of every stored row, in row
        order. Recomputes the table and G: O(n_seen p)."""
        self.centre = np.array(centre, dtype=np.float64)
        table = np.zeros_like(self.table)
        table[self.seen] = model.grad_log_lik(self.centre, batch_seen)
        self.table = table
        self.running_sum = table[self.seen].sum(axis=0)

    def estimate(self, model, theta, idx, batch):
        """The estimate at ``theta`` from the stored rows ``idx`` with data ``batch``."""
        now = model.sum_grad_log_lik(theta, batch)
        at_centre = self.table[idx].sum(axis=0)
        return (model.grad_log_prior(theta) + (self.n_total / self.n_seen) * self.running_sum
                + (self.n_total / len(idx)) * (now - at_centre))


@dataclasses.dataclass(frozen=True)
class NoiseTrackingGradient(MinibatchGradient):
    """``MinibatchGradient`` that also keeps, in ``LangevinState.aux``, an online estimate of
    the covariance of its estimate, for SGHMC's gradient-noise correction
    (``SGHMC(noise_estimate=noise_estimate_from_aux)``; Chen et al. 2014).

    Each step's estimate is the within-minibatch covariance of the n per-datum gradients
    (divisor n - 1) times ``N (N - n) / n`` (without replacement; ``N^2 / n`` with), unbiased for
    the covariance of the minibatch gradient at theta; ``aux`` is its exponential average,
    ``aux <- aux + memory * (new - aux)`` (None before the first step), (..., d, d).
    """

    memory: float = 0.05

    def __post_init__(self):
        super().__post_init__()
        if not 0 < self.memory <= 1:
            raise ValueError(f"memory must lie in (0, 1], got {self.memory!r}")

    def step_gradient(self, model, data, state, h, integrator, rng):
        theta = np.asarray(state.theta, dtype=np.float64)
        N, n = n_data(data), self.batch_size
        idx = draw_indices(rng, N, n, theta.shape[:-1], self.replace)
        per_datum = model.grad_log_lik(theta, take(data, idx))          # (..., n, d)
        total = per_datum.sum(axis=-2)
        grad = model.grad_log_prior(theta) + (N / n) * total
        if n < 2:
            return grad, state.aux
        centred = per_datum - (total / n)[..., None, :]
        scale = (N * N if self.replace else N * (N - n)) / (n * (n - 1.0))
        cov = scale * np.matmul(np.swapaxes(centred, -1, -2), centred)
        previous = state.aux
        return grad, cov if previous is None else previous + self.memory * (cov - previous)


def noise_estimate_from_aux(state):
    """The gradient-noise covariance estimate ``NoiseTrackingGradient`` keeps in ``state.aux``
    (None before the first step)."""
    return state.aux
