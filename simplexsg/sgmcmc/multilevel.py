"""Multilevel Monte Carlo for SGLD (Nagapetyan, Szpruch, Vollmer, Zygalakis & Giles,
"Multilevel Monte Carlo for scalable Bayesian computations", 2017): ``multilevel_estimate``.

It estimates ``E_pi[f(theta)]`` by the telescoping sum
``sum_{l=0}^{L} mean_i [f_l - f_{l-1}]^{(i)}`` (``f_{-1} := 0``) over levels l of SGLD with
step ``h_l = h_0 2^-l``; within a level the fine and coarse paths are coupled (they share
Brownian increments and minibatches), across levels and samples everything is independent.

**Conventions.**

- Step sizes: ``h`` is diffusion time (``simplexsg.sgmcmc``): one SGLD step is
  ``theta <- theta + h * grad_est(theta) + sqrt(2 h) xi``, the paper's map S_{h,tau,xi} (eq. 2).
- Shapes: d = ``model.n_params(data)``; samples of a level are run together, ``theta`` of
  shape ``(n_samples, d)``, minibatch indices ``(n_samples, n)``. ``f`` maps ``(n_samples, d)``
  to ``(n_samples,)`` (scalar f) or ``(n_samples, k)`` (vector f); estimates have shape ``()``
  or ``(k,)``.
- Cost unit: one per-datum gradient evaluation ``grad log p(x_i | theta)`` (the paper counts
  "evaluations of data items"; ``/ N`` gives epochs). An SGLD step with a minibatch of n costs n
  for every gradient (minibatch, control variate and Taylor: their terms at the centre are
  precomputed once per datum). The one-off setup (centre, per-datum gradients and Hessians at
  the centre) is reported separately as ``setup_cost`` and excluded from ``costs``, as in the
  paper (its Section 4).
"""
import dataclasses
import math
import numbers
import warnings
from typing import Optional

import numpy as np

from .._random import seed_sequence, substream
from .._validation import check_finite, check_int, check_positive_scalar
from .centre import find_centre
from .gradients import draw_indices
from .models import n_data, take

__all__ = ["MultilevelResult", "multilevel_estimate", "level_schedule"]

_GRADIENTS = ("minibatch", "cv", "taylor")
_COUPLINGS = ("synchronous", "antithetic")
_HORIZONS = ("growing", "fixed")


@dataclasses.dataclass(frozen=True, eq=False)
class MultilevelResult:
    """Output of ``multilevel_estimate``; level arrays are indexed by l = 0..L.

    estimate : () or (k,)
        ``sum_l means[l]``, the MLMC estimate of E[f] under the finest level's law.
    standard_error : like estimate
        ``sqrt(sum_l variances[l] / n_samples[l])``.
    means, variances : (L+1,) or (L+1, k)
        Sample mean and variance (ddof 1) of the level differences Delta_l (Delta_0 = f_0).
    costs : (L+1,)
        Cost of one sample of level l, in per-datum gradient evaluations (module docstring).
    n_samples : (L+1,) int
        Samples per level N_l.
    step_sizes : (L+1,)
        h_l = h_0 2^-l.
    n_steps : (L+1,) int
        Fine steps s_l = T_l / h_l of a level-l sample.
    total_cost : float
        ``sum_l n_samples[l] * costs[l]`` (setup excluded).
    setup_cost : float
        Per-datum evaluations of the one-off setup (0 for ``gradient="minibatch"``; N for the
        gradients at the centre, plus N for the Hessians with ``"taylor"``; the centre search
        itself is not counted).
    bias_estimate : float
        Giles' estimate of the remaining bias, ``max(|means[L]|, |means[L-1]| / 2)`` (first
        order weak error, alpha = 1; Euclidean norm for vector f); nan when L = 0.
    centre : (d,) or None
        The centre of the control-variate/Taylor gradient (None for ``"minibatch"``).
    """
    estimate: np.ndarray
    standard_error: np.ndarray
    means: np.ndarray
    variances: np.ndarray
    costs: np.ndarray
    n_samples: np.ndarray
    step_sizes: np.ndarray
    n_steps: np.ndarray
    total_cost: float
    setup_cost: float
    bias_estimate: float
    centre: Optional[np.ndarray]

    @property
    def n_levels(self):
        return len(self.n_samples)


def level_schedule(level, m, horizon="growing"):
    """Steps of a level-``level`` sample: ``(s_l, warm_up, s_{l-1})``.

    ``horizon="growing"`` (the paper's Section 4): ``T_l = m (l + 1) h_0``, so ``s_l = m (l+1) 2^l``
    fine steps, of which ``warm_up = s_l - 2 s_{l-1} = m 2^l`` run before the joint phase of
    ``s_{l-1}`` coarse steps (Algorithm 1, step 1: the fine path forgets its head start by
    contraction). ``horizon="fixed"``: ``T_l = m h_0``, ``s_l = m 2^l``, no warm-up.
    """
    if horizon == "growing":
        s = m * (level + 1) * 2 ** level
        s_coarse = m * level * 2 ** (level - 1) if level > 0 else 0
    else:
        s = m * 2 ** level
        s_coarse = m * 2 ** (level - 1) if level > 0 else 0
    return s, s - 2 * s_coarse, s_coarse


def _window(s, average):
    """States averaged over at the end of a path of s steps: 1 (end point) or floor(frac s)."""
    return 1 if average is None else max(1, int(math.floor(average * s)))


def _coarse_indices(rng, idx1, idx2, n, replace):
    """The coarse minibatch (rows, n) from the two fine ones (paper eq. 8: same law as each).

    With replacement: n of the 2n drawn indices, a uniform n-subset of positions (the 2n are
    iid uniform, so any n of them are). Without replacement: a uniform n-subset of the set
    union of the two fine minibatches (a uniform u-subset of {0..N-1} given its size u >= n, so
    a uniform n-subset of it is a uniform n-subset of the data).
    """
    both = np.concatenate([idx1, idx2], axis=-1)
    keys = rng.random(both.shape)
    if not replace:
        both.sort(axis=-1)
        keys[:, 1:][both[:, 1:] == both[:, :-1]] = 2.0      # a repeat: never among the n smallest
    pick = np.argsort(keys, axis=-1)[:, :n]
    return np.take_along_axis(both, pick, axis=-1)


def _per_datum_hessians(model, data, centre):
    """Hessians of log p(x_i | theta) at the centre, (N, d, d): the model's ``hess_log_lik``
    if it has one (exact for the regression models), else central finite differences of
    ``grad_log_lik`` (step 1e-5 (1 + |c_j|) per coordinate)."""
    if hasattr(model, "hess_log_lik"):
        return np.asarray(model.hess_log_lik(centre, data), dtype=np.float64)
    d = centre.shape[0]
    H = np.empty((n_data(data), d, d))
    for j in range(d):
        eps = 1e-5 * (1.0 + abs(centre[j]))
        e = np.zeros(d)
        e[j] = eps
        H[:, :, j] = (model.grad_log_lik(centre + e, data)
                      - model.grad_log_lik(centre - e, data)) / (2 * eps)
    return 0.5 * (H + np.swapaxes(H, 1, 2))


class _StepMap:
    """The SGLD step map S_{h,tau,xi} with externally supplied minibatch and noise."""

    def __init__(self, model, data, gradient, batch_size, centre):
        self.model, self.data, self.kind, self.n = model, data, gradient, batch_size
        self.N = n_data(data)
        if gradient != "minibatch":
            self.centre = centre
            # Per-datum terms at the centre, one row per datum, so one gather per step:
            # [grad log p(x_i | c) (d) | Hessian of log p(x_i | c), flattened (d * d)].
            table = model.grad_log_lik(centre, data)
            if gradient == "taylor":
                H0 = _per_datum_hessians(model, data, centre)
                table = np.concatenate([table, H0.reshape(self.N, -1)], axis=1)
            self.table = np.ascontiguousarray(table)
            self.table_sum = table.sum(axis=0)

    def grad(self, theta, idx):
        model, N, n = self.model, self.N, self.n
        total = model.grad_log_prior(theta)
        mb = model.sum_grad_log_lik(theta, take(self.data, idx))
        if self.kind == "minibatch":
            return total + (N / n) * mb
        d = theta.shape[-1]
        rows = np.take(self.table, idx, axis=0).sum(axis=-2)      # (..., d [+ d * d])
        mb = mb - rows[..., :d]
        total = total + self.table_sum[:d]
        if self.kind == "taylor":
            v = theta - self.centre
            H_sum = self.table_sum[d:].reshape(d, d)
            H_mb = rows[..., d:].reshape(rows.shape[:-1] + (d, d))
            total = total + v @ H_sum.T
            mb = mb - np.matmul(H_mb, v[..., None])[..., 0]
        return total + (N / n) * mb

    def step(self, theta, h, idx, xi):
        return theta + h * self.grad(theta, idx) + math.sqrt(2 * h) * xi


def _level_block(stepper, f, theta0, level, size, h0, m, horizon, coupling, average, replace,
                 seed):
    """Delta_l for ``size`` independent samples of level ``level``: (size,) + f's shape."""
    rng = np.random.default_rng(seed)
    N, n, d = stepper.N, stepper.n, theta0.shape[0]
    s, warm, s_c = level_schedule(level, m, horizon)
    h = h0 * 2.0 ** -level
    draw = lambda: draw_indices(rng, N, n, (size,), replace)  # noqa: E731
    fine = np.tile(theta0, (size, 1))
    p_f = _window(s, average)
    acc_f = 0.0
    t = 0

    def fine_step(theta, idx, xi):
        nonlocal acc_f, t
        theta = stepper.step(theta, h, idx, xi)
        t += 1
        if t > s - p_f:
            acc_f = acc_f + f(theta)
        return theta

    for _ in range(warm):
        fine = fine_step(fine, draw(), rng.standard_normal((size, d)))
    if level == 0:
        return acc_f / p_f
    n_coarse = 2 if coupling == "antithetic" else 1
    coarse = [np.tile(theta0, (size, 1)) for _ in range(n_coarse)]
    p_c = _window(s_c, average)
    acc_c = [0.0] * n_coarse
    for k in range(1, s_c + 1):
        idx1, xi1 = draw(), rng.standard_normal((size, d))
        fine = fine_step(fine, idx1, xi1)
        idx2, xi2 = draw(), rng.standard_normal((size, d))
        fine = fine_step(fine, idx2, xi2)
        xi_c = (xi1 + xi2) / math.sqrt(2.0)
        if coupling == "antithetic":
            batches = (idx1, idx2)
        else:
            batches = (_coarse_indices(rng, idx1, idx2, n, replace),)
        for j in range(n_coarse):
            coarse[j] = stepper.step(coarse[j], 2 * h, batches[j], xi_c)
            if k > s_c - p_c:
                acc_c[j] = acc_c[j] + f(coarse[j])
    return acc_f / p_f - sum(acc_c) / (n_coarse * p_c)


def _check_f_output(value, size):
    value = np.asarray(value, dtype=np.float64)
    if value.ndim not in (1, 2) or value.shape[0] != size:
        raise ValueError(f"f must map theta of shape (n_samples, d) to (n_samples,) or "
                         f"(n_samples, k); for n_samples={size} it returned shape {value.shape}")
    return value


def _check_choice(name, value, options):
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


def multilevel_estimate(model, data, f, *, h0=None, max_level=4, m=5, horizon="growing",
                        gradient="taylor", coupling="antithetic", batch_size=None,
                        replace=False, average=None, n_samples=None, target_rmse=None,
                        budget=None, adaptive_levels=False, n_pilot=100, centre=None,
                        theta0=None, chunk_size=4096, random_state=None):
    """Multilevel SGLD estimate of ``E_pi[f(theta)]`` (Nagapetyan et al. 2017, Algorithms 1-2).

    Parameters
    ----------
    model, data : a ``simplexsg.sgmcmc`` model and its data (checked by ``model.check_data``).
    f : callable
        ``f(theta)`` for theta (n_samples, d) -> (n_samples,) or (n_samples, k).
    h0 : float > 0, default 1 / N
        Step size of level 0 (the paper's h_0 = 1/N); level l uses h_l = h0 2^-l.
    max_level : int >= 0, default 4
        Finest level L (levels 0..L). With ``adaptive_levels`` the largest level allowed.
    m : int >= 1, default 5
        Horizon unit: T_l = m (l+1) h0 (``horizon="growing"``, the paper's choice, m = 5) or
        T_l = m h0 (``"fixed"``). A level-l sample runs s_l = T_l / h_l fine steps from theta0
        (``level_schedule``); its value is f at the end point, or averaged (``average``).
    horizon : "growing" or "fixed"
        "growing": the fine path first runs T_l - T_{l-1} alone, then T_{l-1} jointly with
        the coarse path(s) (shifting coupling, Algorithm 1); "fixed": all levels share T.
    gradient : "taylor" (default), "cv" or "minibatch"
        "minibatch": the plain estimate ``grad log p + (N/n) sum_S grad log p(x_i|.)``;
        "cv": SGLD-CV's control variate around ``centre``; "taylor": the second-order
        (Taylor) control variate of the paper's eq. 11 (full gradient and Hessian at the
        centre, minibatch on the remainder). All are unbiased.
    coupling : "antithetic" (default, Algorithm 2) or "synchronous" (Algorithm 1)
        Both share Brownian increments (coarse xi = (xi_1 + xi_2) / sqrt 2). "synchronous":
        one coarse path whose minibatch is drawn from the two fine ones (eq. 8);
        "antithetic": two coarse paths using the first and the second fine minibatch, Delta_l
        = f_fine - (f_c+ + f_c-)/2. Expected Var Delta_l = O(h_l) and O(h_l^2) respectively.
    batch_size : int >= 1, default ceil(N^(1/3)) (the paper's choice)
    replace : bool, default False
        Minibatches drawn with or without replacement (``draw_indices``).
    average : None or float in (0, 1], default None
        None: f at the end point. A fraction q: path averaging (Section 3.3), the mean of f over
        the last floor(q s) states of the fine path and floor(q s_{l-1}) of the coarse path(s);
        the paper uses q = 1/2.
    n_samples, target_rmse, budget : give exactly one
        ``n_samples``: samples per level, a sequence of max_level + 1 ints >= 2 (no pilot).
        Otherwise the paper is silent (it says only that N_l follows the level variance), and
        the standard MLMC rule of Giles (2008, 2015) is used: ``n_pilot`` samples per level
        estimate V_l (the trace for vector f) and C_l, then
        ``N_l = ceil(2 target_rmse^-2 sqrt(V_l / C_l) sum_k sqrt(V_k C_k))`` (half the MSE to
        variance), or for a total ``budget`` (cost units) ``N_l = floor(budget sqrt(V_l / C_l)
        / sum_k sqrt(V_k C_k))``, both at least ``n_pilot`` (pilot samples are kept).
    adaptive_levels : bool, default False
        With ``target_rmse``: start with 3 levels and add levels (up to ``max_level``) until
        ``bias_estimate <= target_rmse / sqrt 2`` (Giles 2008); warns if max_level is reached.
    n_pilot : int >= 2, default 100
    centre : (d,) array, optional
        Centre of the "cv"/"taylor" gradient; default ``find_centre(model, data)`` (L-BFGS
        posterior mode; the paper uses the MAP by Newton-Raphson).
    theta0 : (d,) array, optional
        Start of every path; default the centre (the MAP) for all gradients, as in the paper.
    chunk_size : int >= 1, default 4096
        Samples of a level run together (memory ~ chunk_size x batch_size x d).
    random_state : None, int, SeedSequence or Generator
        The result is a function of it (``simplexsg._random.seed_sequence``): level l's j-th
        chunk of its r-th round draws from ``substream(seed, l, r, j)``.

    Returns
    -------
    MultilevelResult

    Bad input raises ValueError (TypeError for a wrong ``random_state`` type) naming it.
    """
    data = model.check_data(data)
    N, d = n_data(data), model.n_params(data)
    if not callable(f):
        raise ValueError(f"f must be callable, got {type(f).__name__}")
    h0 = 1.0 / N if h0 is None else check_positive_scalar("h0", h0)
    max_level = check_int("max_level", max_level, 0)
    m = check_int("m", m, 1)
    _check_choice("horizon", horizon, _HORIZONS)
    _check_choice("gradient", gradient, _GRADIENTS)
    _check_choice("coupling", coupling, _COUPLINGS)
    batch_size = (int(math.ceil(N ** (1 / 3) - 1e-9)) if batch_size is None
                  else check_int("batch_size", batch_size, 1))
    if not isinstance(replace, (bool, np.bool_)):
        raise ValueError(f"replace must be True or False, got {replace!r}")
    if not replace and batch_size > N:
        raise ValueError(f"batch_size={batch_size} exceeds the number of data N={N} "
                         "(sampling without replacement)")
    if average is not None:
        if (isinstance(average, bool) or not isinstance(average, numbers.Real)
                or not 0 < average <= 1):
            raise ValueError(f"average must be None or a fraction in (0, 1], got {average!r}")
        average = float(average)
    given = [name for name, v in (("n_samples", n_samples), ("target_rmse", target_rmse),
                                  ("budget", budget)) if v is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of n_samples, target_rmse and budget; got "
                         + (", ".join(given) if given else "none"))
    if n_samples is not None:
        counts = np.asarray(n_samples)
        if counts.shape != (max_level + 1,):
            raise ValueError(f"n_samples must have max_level + 1 = {max_level + 1} entries, "
                             f"got shape {counts.shape}")
        counts = [check_int(f"n_samples[{l}]", int(c) if float(c).is_integer() else c, 2)
                  for l, c in enumerate(counts.tolist())]
    if target_rmse is not None:
        target_rmse = check_positive_scalar("target_rmse", target_rmse)
    if budget is not None:
        budget = check_positive_scalar("budget", budget)
    if not isinstance(adaptive_levels, (bool, np.bool_)):
        raise ValueError(f"adaptive_levels must be True or False, got {adaptive_levels!r}")
    if adaptive_levels and target_rmse is None:
        raise ValueError("adaptive_levels needs target_rmse")
    n_pilot = check_int("n_pilot", n_pilot, 2)
    chunk_size = check_int("chunk_size", chunk_size, 1)
    seed = seed_sequence(random_state)

    setup_cost = 0.0
    if gradient != "minibatch":
        if centre is None:
            centre = find_centre(model, data)
        centre = check_finite("centre", centre)
        if centre.shape != (d,):
            raise ValueError(f"centre must have shape ({d},), got {centre.shape}")
        setup_cost = float(N if gradient == "cv" else 2 * N)
    else:
        centre = None if centre is None else check_finite("centre", centre)
    if theta0 is None:
        theta0 = centre if centre is not None else find_centre(model, data)
    theta0 = check_finite("theta0", theta0)
    if theta0.shape != (d,):
        raise ValueError(f"theta0 must have shape ({d},), got {theta0.shape}")
    _check_f_output(f(theta0[None, :]), 1)

    stepper = _StepMap(model, data, gradient, batch_size,
                       centre if gradient != "minibatch" else None)
    n_paths = 3 if coupling == "antithetic" else 2

    def cost(level):
        s, _, s_c = level_schedule(level, m, horizon)
        return float(batch_size * (s + (n_paths - 1) * s_c))

    draws = []      # per level: list of arrays (n, k)
    rounds = []

    def run(level, n_more):
        if level == len(draws):
            draws.append([])
            rounds.append(0)
        r = rounds[level]
        rounds[level] += 1
        for j, start in enumerate(range(0, n_more, chunk_size)):
            size = min(chunk_size, n_more - start)
            out = _level_block(stepper, f, theta0, level, size, h0, m, horizon, coupling,
                               average, replace, substream(seed, level, r, j))
            out = _check_f_output(out, size)
            draws[level].append(out.reshape(size, -1))

    def stats(level):
        x = np.concatenate(draws[level])
        return len(x), x.mean(axis=0), x.var(axis=0, ddof=1)

    if n_samples is not None:
        for level, c in enumerate(counts):
            run(level, c)
    else:
        n_levels = min(3, max_level + 1) if adaptive_levels else max_level + 1
        for level in range(n_levels):
            run(level, n_pilot)
        while True:
            C = np.array([cost(l) for l in range(n_levels)])
            V = np.array([max(stats(l)[2].sum(), 1e-300) for l in range(n_levels)])
            have = np.array([stats(l)[0] for l in range(n_levels)])
            root = np.sqrt(V * C).sum()
            if target_rmse is not None:
                want = np.ceil(2.0 / target_rmse ** 2 * np.sqrt(V / C) * root)
            else:
                want = np.floor(budget * np.sqrt(V / C) / root)
            for level in range(n_levels):
                extra = int(want[level] - have[level])
                if extra > 0:
                    run(level, extra)
            if not adaptive_levels:
                break
            means = [stats(l)[1] for l in range(n_levels)]
            bias = max(np.linalg.norm(means[-1]), np.linalg.norm(means[-2]) / 2)
            if bias <= target_rmse / math.sqrt(2):
                break
            if n_levels == max_level + 1:
                warnings.warn(f"multilevel_estimate: bias estimate {bias:.3g} exceeds "
                              f"target_rmse / sqrt 2 = {target_rmse / math.sqrt(2):.3g} at "
                              f"max_level={max_level}", RuntimeWarning, stacklevel=2)
                break
            run(n_levels, n_pilot)
            n_levels += 1

    L = len(draws)
    got = [stats(l) for l in range(L)]
    counts_out = np.array([g[0] for g in got], dtype=np.int64)
    means = np.array([g[1] for g in got])
    variances = np.array([g[2] for g in got])
    scalar = np.asarray(f(theta0[None, :])).ndim == 1
    if scalar:
        means, variances = means[:, 0], variances[:, 0]
    estimate = means.sum(axis=0)
    se = np.sqrt((variances / (counts_out if scalar else counts_out[:, None])).sum(axis=0))
    costs = np.array([cost(l) for l in range(L)])
    bias = (float(max(np.linalg.norm(means[-1]), np.linalg.norm(means[-2]) / 2))
            if L > 1 else float("nan"))
    return MultilevelResult(
        estimate=estimate, standard_error=se, means=means, variances=variances, costs=costs,
        n_samples=counts_out, step_sizes=h0 * 2.0 ** -np.arange(L),
        n_steps=np.array([level_schedule(l, m, horizon)[0] for l in range(L)], dtype=np.int64),
        total_cost=float((counts_out * costs).sum()), setup_cost=setup_cost,
        bias_estimate=bias, centre=centre)
