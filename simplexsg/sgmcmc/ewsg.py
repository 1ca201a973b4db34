"""EWSG: exponentially weighted stochastic gradients (Li, Wang, Zha & Tao, "Improving sampling
accuracy of stochastic gradient MCMC methods via non-uniform subsampling of gradients",
arXiv:2002.08949), as a ``GradientEstimator`` for ``SGHMC`` (the paper's main case) and
``SGLD`` (its App. E, overdamped variant).

**Conventions** (``simplexsg.sgmcmc``'s): ``G_S(theta) = grad log p(theta) + (N/b) sum_{i in S}
grad log p(x_i | theta)`` estimates the gradient of the log posterior from a b-tuple S of data
indices (= -n grad V_I in the paper, V_i = -log p(x_i|theta) - log p(theta)/N, b = 1). One step
of SGHMC with friction gamma and temperature T draws ``r' = (1 - h gamma) r + h G_S + sqrt(2
gamma h T) xi``, so given S the quantity ``x = r' - (1 - h gamma) r`` is N(h G_S, s^2 I) with
``s^2 = 2 gamma h T`` (the paper's sigma^2 h). SGLD draws ``theta' = theta + h G_S + sqrt(2 h T)
xi``: ``x = theta' - theta`` is N(h G_S, s^2 I), ``s^2 = 2 h T``.

**Weights** (the paper's eq. 4, App. D for b > 1, App. E for SGLD)::

    p(S) propto exp(phi_S),   phi_S = weight_scale * ||x - h G_S(theta)||^2 / (2 s^2),

with x fixed by ``x_rule``:

- ``"momentum"`` (SGHMC; the paper's recommendation r' = r, Sec. 4.4): ``x = h gamma r``, so
  ``phi_S = weight_scale * h ||gamma r - G_S||^2 / (4 gamma T)``;
- ``"zero"``: ``x = 0`` (for SGLD: theta' = theta, the mode of the increment's density,
  ``phi_S = weight_scale * h ||G_S||^2 / (4 T)``);
- ``"auto"`` (default): ``"momentum"`` with SGHMC, ``"zero"`` with SGLD.

*Which sign* (the text of the paper available to us lost its formulas). ``weight_scale = 1``
(default) is the literal kernel matching of Sec. 4.2: the SG kernel ``sum_S p(S) N(x; h G_S,
s^2)`` equals the full-gradient kernel ``N(x; h G, s^2)`` formally when ``p(S) propto
N(x; h G, s^2) / N(x; h G_S, s^2)``, i.e. ``+||x - h G_S||^2`` in the exponent and a
full-gradient term common to all S -- the term the paper says it keeps in eq. 4 only "due to
the needs in proofs" and drops in the normalisation (Sec. 4.4). With x = h gamma r it prefers
gradients pointing against the momentum: extra damping that offsets the heating by gradient
noise. This reading reproduces the paper's Sec. 5.1 claim: on its 2-D Gaussian
(``benchmarks/ewsg.py``) EWSG has a lower KL than SGHMC at equal gradient evaluations.
``weight_scale = -1`` is the opposite reading, ``p(S) propto N(x; h G_S, s^2)`` (the posterior
of the index given x); it is the one consistent with our reading of Theorem 2 (smaller trace of
covariance than uniform subsampling for small x; ``tests/sgmcmc/test_ewsg.py`` shows that +1
increases it there), but with x = h gamma r it selects gradients that cancel the friction, and on
the same 2-D Gaussian its KL is 10-30 times SGHMC's. Neither sign satisfies Theorem 5's hypothesis
E[c_J] = 0 away from symmetric states (the tests measure an O(h) change of the mean recursion).
``weight_scale = 0`` is uniform subsampling; other values temper the weights. The weights are
state-dependent, so the estimate is biased (as the paper says).

**Index chain** (the paper's Algorithm 1; App. D for b > 1). The current b-tuple S (drawn with
replacement; uniform at the start) persists across steps in ``LangevinState.aux``, shape
``(b,)`` for theta (d,) or ``(n_chains, b)`` for theta (n_chains, d). Each step re-evaluates
G_S at the new theta, then runs ``n_proposals`` = M Metropolis-Hastings steps, each proposing a
fresh uniform b-tuple S' and accepting it with probability ``min(1, exp(phi_S' - phi_S))``; the
estimate returned is G at the final S. The stationary law of the chain (theta frozen) is p.
**Cost**: (M + 1) b per-datum gradient evaluations per step (``evaluations_per_step``).
With ``weight_scale = 0`` or ``n_proposals = 0`` the estimator is uniform subsampling with
replacement, exactly: each step draws a fresh b-tuple ``draw_indices(rng, N, b, shape, True)``
(the random stream of ``MinibatchGradient(b, replace=True)``), costs b evaluations and keeps
no chain (M = 0 is SGHMC/SGLD, as in the paper's Fig. 1c).

Called directly, ``estimator(model, data, theta, rng)`` has no integrator state and returns
the uniform estimate; the weighting happens in ``step_gradient``, i.e. inside ``sample``.
"""
import dataclasses
import numbers

import numpy as np

from .._random import check_generator
from .._validation import check_int
from .gradients import GradientEstimator, draw_indices
from .models import n_data, take

__all__ = ["ExponentiallyWeightedGradient"]

_X_RULES = ("auto", "momentum", "zero")


@dataclasses.dataclass(frozen=True)
class ExponentiallyWeightedGradient(GradientEstimator):
    """EWSG gradient estimator (module docstring): a Metropolis-Hastings chain over b-tuples of
    data indices with target ``exp(weight_scale ||x - h G_S||^2 / (2 s^2))``.

    batch_size : int >= 1
        b, indices per minibatch (with replacement).
    n_proposals : int >= 0
        M, MH proposals per step (the paper's index-chain length; 1 is its default). 0: uniform.
    weight_scale : float
        Multiplies the exponent of the weights: 1 is the paper's eq. 4 (kernel matching), 0
        uniform subsampling, -1 the opposite-sign reading (module docstring).
    x_rule : "auto", "momentum" or "zero"
        How x is fixed (module docstring); "momentum" needs SGHMC.
    """

    batch_size: int = 1
    n_proposals: int = 1
    weight_scale: float = 1.0
    x_rule: str = "auto"

    def __post_init__(self):
        check_int("batch_size", self.batch_size, 1)
        check_int("n_proposals", self.n_proposals, 0)
        w = self.weight_scale
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not np.isfinite(w):
            raise ValueError(f"weight_scale must be a finite real number, got {w!r}")
        if self.x_rule not in _X_RULES:
            raise ValueError(f"x_rule must be one of {_X_RULES}, got {self.x_rule!r}")

    @property
    def uniform(self):
        """True when the estimator is plain uniform subsampling (weight_scale or M is 0)."""
        return self.weight_scale == 0 or self.n_proposals == 0

    @property
    def evaluations_per_step(self):
        """Per-datum gradient evaluations per step: (M + 1) b, or b when ``uniform``."""
        return self.batch_size * (1 if self.uniform else self.n_proposals + 1)

    def _uniform_estimate(self, model, data, theta, rng):
        N, b = n_data(data), self.batch_size
        idx = draw_indices(rng, N, b, theta.shape[:-1], True)
        return (model.grad_log_prior(theta)
                + (N / b) * model.sum_grad_log_lik(theta, take(data, idx))), idx

    def __call__(self, model, data, theta, random_state=None):
        theta = np.asarray(theta, dtype=np.float64)
        return self._uniform_estimate(model, data, theta, check_generator(random_state))[0]

    def init_aux(self, model, data, theta, rng):
        """A uniform b-tuple per chain, (b,) or (n_chains, b); None when ``uniform``."""
        if self.uniform:
            return None
        return draw_indices(rng, n_data(data), self.batch_size, np.shape(theta)[:-1], True)

    def _x_and_variance(self, state, h, integrator):
        """x (broadcastable to theta) and s^2 of the kernel given the index (module doc)."""
        temperature = getattr(integrator, "temperature", None)
        friction = getattr(integrator, "friction", None)
        underdamped = friction is not None and state.momentum is not None
        if temperature is None or (not underdamped and state.momentum is not None):
            raise ValueError("ExponentiallyWeightedGradient needs an SGHMC or SGLD integrator, "
                             f"got {type(integrator).__name__}")
        if not temperature > 0:
            raise ValueError("ExponentiallyWeightedGradient needs temperature > 0 (its weights "
                             "divide by the noise variance) unless weight_scale or n_proposals "
                             "is 0")
        rule = self.x_rule
        if rule == "auto":
            rule = "momentum" if underdamped else "zero"
        if rule == "momentum" and not underdamped:
            raise ValueError('x_rule="momentum" needs SGHMC (a momentum); use "zero" with SGLD')
        if underdamped:
            variance = 2.0 * friction * h * temperature
            x = h * friction * state.momentum if rule == "momentum" else 0.0
        else:
            variance, x = 2.0 * h * temperature, 0.0
        return x, variance

    def step_gradient(self, model, data, state, h, integrator, rng):
        theta = np.asarray(state.theta, dtype=np.float64)
        if self.uniform:
            return self._uniform_estimate(model, data, theta, rng)
        x, variance = self._x_and_variance(state, h, integrator)
        N, b, M = n_data(data), self.batch_size, self.n_proposals
        shape = theta.shape[:-1]
        idx = np.asarray(state.aux)
        if state.aux is None or idx.shape != shape + (b,) or idx.dtype.kind not in "iu" \
                or idx.min() < 0 or idx.max() >= N:
            raise ValueError(f"the state's aux must hold the index chain: integers in [0, {N}) "
                             f"of shape {shape + (b,)}, got "
                             f"{None if state.aux is None else (idx.shape, idx.dtype)}")
        scale = self.weight_scale / (2.0 * variance)
        prior = model.grad_log_prior(theta)
        current = prior + (N / b) * model.sum_grad_log_lik(theta, take(data, idx))
        proposals = rng.integers(N, size=(M,) + shape + (b,))
        uniforms = rng.random((M,) + shape)
        # All M proposals evaluated in one call: theta's chain axes broadcast with (M, ...).
        grads = prior + (N / b) * model.sum_grad_log_lik(theta, take(data, proposals))
        phi = scale * np.sum((x - h * current) ** 2, axis=-1)
        phis = scale * np.sum((x - h * grads) ** 2, axis=-1)
        for m in range(M):
            accept = uniforms[m] < np.exp(np.minimum(phis[m] - phi, 0.0))
            phi = np.where(accept, phis[m], phi)
            current = np.where(accept[..., None], grads[m], current)
            idx = np.where(accept[..., None], proposals[m], idx)
        return current, idx

    def log_weights(self, model, data, state, h, integrator, indices):
        """phi_S (up to a constant) for the b-tuples ``indices`` (..., b) at ``state``: the log
        of the index chain's target pmf, for tests and diagnostics."""
        theta = np.asarray(state.theta, dtype=np.float64)
        x, variance = self._x_and_variance(state, h, integrator)
        N, b = n_data(data), self.batch_size
        G = (model.grad_log_prior(theta)
             + (N / b) * model.sum_grad_log_lik(theta, take(data, np.asarray(indices))))
        return self.weight_scale / (2.0 * variance) * np.sum((x - h * G) ** 2, axis=-1)
