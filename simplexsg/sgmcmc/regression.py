"""The fitting shared by the Bayesian regression estimators (``simplexsg.sgmcmc.estimators``).

Thin wrappers over ``simplexsg.sgmcmc`` (models, gradient estimators, integrators, ``sample``)
and ``simplexsg.sgmcmc.zv`` (ZV). ``fit`` standardises the data (each column of X, and y for
the linear model, centred with ``fit_intercept`` and scaled; the classes' docstrings state the
prior on that scale) and the chain samples the standardised parameter ``theta = (beta, b)``:
the coefficients of the standardised columns and, with ``fit_intercept``, the intercept as the
coefficient of a column of ones, under a flat prior. Everything reported (``coef_``,
``intercept_``, their samples, ``centre_``, predictions) is mapped back to the original scale;
``step_size_`` and the quantities below are those of the standardised chain.

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
  the former default (h = sqrt(0.1 / L), friction = 0.1 / h) was ``1 + N f / (2 n)``: 50x the
  posterior variance at n = N / 100. It now applies Chen et al.'s (2014) correction: the
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
import copy
import numbers
import os
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._fitting import (array_digest, check_unchanged, fit_plan, restore_on_error,
                        result_params, write_checkpoint)
from .._random import seed_sequence
from .._validation import POSITIVE, check_checkpoint, check_int, int_from, validate_params
from .driver import sample
from .gradients import (ControlVariateGradient, MinibatchGradient, NoiseTrackingGradient,
                        noise_estimate_from_aux)
from .integrators import SGD, SGHMC, SGLD
from .standardise import Standardisation
from .zv import zv_estimate

SAMPLERS = ("sgld", "sgldcv", "sghmc", "sgd")

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

# Rows of X per block in prediction, so the (rows, n_samples) temporaries stay small.
_PREDICT_ROWS = 1024



#: ``_BayesianLinearModel._parameter_constraints``, checked once at the start of ``fit``
#: (``_BayesianLinearModel._check_params``, with what they cannot state); the subclasses add
#: their own parameters (``BayesianLinearRegression``: ``noise_variance``).
CONSTRAINTS = {
    "prior_scale": [POSITIVE],                 # within (1e-150, 1e150): _check_params
    "fit_intercept": ["boolean"],
    "sampler": [StrOptions(set(SAMPLERS))],
    "step_size": [POSITIVE, None],
    "batch_size": [int_from(1), Interval(RealNotInt, 0, 1, closed="right"), None],
    "n_iter": [int_from(1)],
    "burn_in": [int_from(0), None],
    "thin": [int_from(1)],
    "friction": [POSITIVE, None],
    "zv": ["boolean"],
    "warm_start": ["boolean"],
    "checkpoint_every": [int_from(1), None],  # with checkpoint_path: _check_params
    "checkpoint_path": [str, os.PathLike, None],
    "random_state": [int_from(0), np.random.RandomState, np.random.SeedSequence,
                     np.random.Generator, None],
    "verbose": ["verbose"],
}


def _resolve_batch_size(batch_size, n_data, fraction=BATCH_FRACTION):
    """Rows per minibatch: an int (capped at N), a fraction in (0, 1] of N, or None (default:
    ``fraction`` of N, at least MIN_BATCH rows)."""
    if batch_size is None:
        return min(n_data, max(MIN_BATCH, int(np.ceil(fraction * n_data))))
    if isinstance(batch_size, numbers.Integral) and not isinstance(batch_size, bool):
        return min(n_data, check_int("batch_size", batch_size, 1))
    if isinstance(batch_size, numbers.Real) and not isinstance(batch_size, bool) \
            and 0 < batch_size <= 1:
        return max(1, int(np.ceil(batch_size * n_data)))
    raise ValueError(f"batch_size must be an int >= 1, a fraction in (0, 1] or None, "
                     f"got {batch_size!r}")



#: Largest |X| entry ``fit`` and the predictions take: squares and products of entries must
#: stay finite.
_MAX_ABS_X = 1e100


def _check_magnitude(X):
    """X (validated, float64) if its entries are at most _MAX_ABS_X in absolute value."""
    largest = float(np.max(np.abs(X), initial=0.0))
    if largest > _MAX_ABS_X:
        raise ValueError(f"X has entries up to {largest:.3g}: above {_MAX_ABS_X:g} the "
                         "log-posterior's gradients and curvature, and the predictions, "
                         "overflow float64; rescale X (e.g. StandardScaler)")
    return X


def _largest_hessian_eigenvalue(prior_precision, design, weights):
    """Largest eigenvalue of prior_precision I + design^T diag(weights) design, for design
    (N, p) and weights a scalar or (N,)."""
    root = np.sqrt(np.reshape(weights, (-1, 1)))
    return prior_precision + np.linalg.norm(root * design, 2) ** 2


_PARAMETERS = """\
    prior_scale : float, default 1.0
        Standard deviation of the Gaussian prior N(0, prior_scale^2) of every standardised
        coefficient (Prior, above). The intercept's prior is flat whatever prior_scale.
    fit_intercept : bool, default True
        Fit an intercept, with a flat prior; the columns of X (and y) are centred before they
        are scaled. False: the linear predictor is x . coef, and nothing is centred.
    sampler : {"sgldcv", "sgld", "sghmc", "sgd"}, default "sgldcv"
        "sgldcv": SGLD with the control-variate gradient centred at the posterior mode (closed
        form for the linear model, L-BFGS on the full data for the logistic one; the chain
        starts there). "sgld": SGLD with minibatch gradients. "sghmc": SGHMC with minibatch
        gradients. "sgd": constant-step SGD with minibatch gradients, no noise (its iterates
        are not posterior samples; a baseline). The last three start at theta = 0 on the
        standardised scale: coefficients 0 and, for the linear model, the intercept at y's
        mean.
        Accuracy of each sampler's defaults: ``simplexsg.sgmcmc.regression`` module docstring.
        "sgld" warns at fit time: at the default step and batch its standard deviations are
        about sqrt(1 + 0.05 N / n) times the posterior's (2.5x at n = N / 100).
    step_size : float, default None
        Step size h of the chain on the standardised scale (module docstring). None:
        ``STEP_SCALE / L``; for "sghmc"
        ``min(sqrt(STEP_SCALE / L), sqrt(2 SGHMC_NOISE_FRACTION SGHMC_DECAY / Sigma_max))``,
        small enough for its gradient-noise correction.
    batch_size : int or float, default None
        Rows per minibatch, drawn without replacement: an int (capped at the number of rows N)
        or a fraction of N in (0, 1]. None: 1% of N (5% for "sghmc"), at least 32 rows.
    n_iter : int, default 2000
        Steps of the sampler, burn-in included.
    burn_in : int, default None
        Steps discarded at the start. None: 0 for "sgldcv" (its start at the mode replaces
        burn-in), ``n_iter // 2`` otherwise.
    thin : int, default 1
        Keep every ``thin``-th state after burn-in.
    friction : float, default None
        SGHMC's friction gamma (``h * gamma < 1``). None: ``SGHMC_DECAY / h``. Ignored by the
        other samplers. "sghmc" subtracts its online estimate of the minibatch gradient noise
        from the injected noise (Chen et al.'s B_hat), which works while
        ``h Sigma / (2 gamma) <= 1``.
    zv : bool, default False
        Estimate ``coef_`` and ``intercept_`` by first-degree zero-variance control variates
        (``simplexsg.sgmcmc.zv_estimate``, coefficient ``-Var(z)^-1 Cov(z, theta)``) from
        the kept states and the sampler's gradient estimates at them. Needs more kept samples
        than n_features + 2; not available for "sgd", which does not target the posterior.
    warm_start : bool, default False
        When the last ``fit`` was interrupted (``interrupted_``: Ctrl-C, an error, or a model
        loaded from a checkpoint), ``fit`` on the same data and parameters resumes it: the
        result equals the uninterrupted fit bit for bit. After a finished fit, ``fit`` runs a
        new chain of ``n_iter`` steps from the last state (same centre). False: a new fit.
    checkpoint_every : int or None, default None
        Every so many steps, write the model as it would be if interrupted then to
        ``checkpoint_path`` (``joblib``, atomically); ``joblib.load`` it and
        ``.set_params(warm_start=True).fit(X, y)`` to resume.
    checkpoint_path : str or path-like, default None
    random_state : None, int, or numpy SeedSequence, Generator or RandomState
        Same value and data, same samples, bit for bit.
    verbose : int, default 0
        > 0: a progress bar (needs tqdm).
"""

_ATTRIBUTES = """\
    coef_samples_ : (n_kept, n_features) kept coefficient samples (n_kept = n_iter // thin
        - burn_in // thin): those after steps thin, 2 thin, ... that exceed burn_in.
    intercept_samples_ : (n_kept,) kept intercept samples (only if ``fit_intercept``).
    coef_ : (n_features,) posterior-mean coefficients (the ZV estimate if ``zv``).
    intercept_ : float, posterior-mean intercept (the ZV estimate if ``zv``); 0.0 without one.
    centre_ : (n_features [+ 1],) the control variate's centre, the posterior mode, as
        (coef, intercept) on the original scale (only for "sgldcv").
    interrupted_ : True after a fit stopped by an exception while sampling: the samples are
        those of the completed steps past the burn-in (before any, the current state alone),
        and ``warm_start=True`` resumes.
    step_size_, batch_size_, burn_in_ : the resolved values (the step on the standardised
        scale); friction_ for "sghmc".
    n_features_in_ : int.
    fit_seconds_ : wall time of ``fit`` (mode finding, sampling and ZV included).
"""


class _BayesianLinearModel(BaseEstimator):
    """Sampling and prediction shared by the estimators. Subclasses define
    ``_validate_training_data(X, y) -> (X, y)``, ``_SCALE_Y`` (whether y is standardised),
    ``_model(prior_precision, data)`` (a ``simplexsg.sgmcmc`` model of the standardised
    ``data``), ``_centre_of(model, data)`` (its posterior mode) and ``_curvature(model, eta)``
    (the default step's curvature)."""

    #: Parameters a resumed fit may change (``simplexsg._fitting.result_params``): they
    #: change neither the chain nor its length; ``random_state`` is replaced by the stored
    #: ``random_state_``.
    _resumable_params = frozenset({"verbose", "warm_start", "checkpoint_every",
                                   "checkpoint_path", "random_state"})

    def __init__(self, *, prior_scale=1.0, fit_intercept=True, sampler="sgldcv", step_size=None,
                 batch_size=None, n_iter=2000, burn_in=None, thin=1, friction=None, zv=False,
                 warm_start=False, checkpoint_every=None, checkpoint_path=None,
                 random_state=None, verbose=0):
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.sampler = sampler
        self.step_size = step_size
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.friction = friction
        self.zv = zv
        self.warm_start = warm_start
        self.checkpoint_every = checkpoint_every
        self.checkpoint_path = checkpoint_path
        self.random_state = random_state
        self.verbose = verbose

    # ---------------------------------------------------------------- parameters
    _parameter_constraints = CONSTRAINTS

    def _check_params(self):
        """Validate the parameters (``_parameter_constraints``, then the checks between
        parameters and what the constraints cannot state, each error naming the parameters);
        return those that do not depend on the data, resolved, as a dict. Changes nothing."""
        validate_params(self)
        if self.zv and self.sampler == "sgd":
            raise ValueError("zv=True needs a sampler that targets the posterior; 'sgd' adds "
                             "no noise")
        n_iter, thin = int(self.n_iter), int(self.thin)
        default_burn_in = 0 if self.sampler == "sgldcv" else n_iter // 2
        burn_in = default_burn_in if self.burn_in is None else int(self.burn_in)
        if n_iter // thin <= burn_in // thin:
            raise ValueError(f"no sample is kept: n_iter={n_iter}, burn_in={burn_in}, "
                             f"thin={thin} (burn_in must be well below n_iter)")
        scale = float(self.prior_scale)
        if not 1e-150 < scale < 1e150:
            raise ValueError(f"prior_scale must lie in (1e-150, 1e150) (its precision "
                             f"prior_scale**-2 is a float64), got {scale!r}")
        return dict(
            prior_precision=scale ** -2,
            n_iter=n_iter, thin=thin, burn_in=burn_in,
            checkpoint_every=check_checkpoint(self.checkpoint_every, self.checkpoint_path),
            warm_start=bool(self.warm_start),
            step_size=None if self.step_size is None else float(self.step_size),
            friction=None if self.friction is None else float(self.friction),
        )

    def _integrator(self, params, model, design, centre):
        """The integrator with its resolved step size (and friction for SGHMC), and the
        warning ``fit`` gives about its accuracy (or None); module docstring."""
        # The likelihood's curvature in x . theta at the centre, or its supremum (no centre).
        w = self._curvature(model, None if centre is None else design @ centre)
        L = _largest_hessian_eigenvalue(params["prior_precision"], design, w)
        N, n = design.shape[0], self.batch_size_
        # Largest eigenvalue of the minibatch gradient's covariance, (N^2 f / n) x per-datum
        # Fisher information, bounded by (N^2 f / n) x (likelihood curvature L - prior) / N.
        noise = (L - params["prior_precision"]) * N / n * ((N - n) / (N - 1) if N > 1 else 0.0)
        h = params["step_size"]
        if h is None:
            h = STEP_SCALE / L
            if self.sampler == "sghmc":
                h = np.sqrt(STEP_SCALE / L)
                if noise > 0:
                    h = min(h, np.sqrt(2 * SGHMC_NOISE_FRACTION * SGHMC_DECAY / noise))
        self.step_size_ = float(h)
        message = None
        if self.sampler == "sghmc":
            friction = SGHMC_DECAY / h if params["friction"] is None else params["friction"]
            self.friction_ = float(friction)
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
            return SGHMC(h, friction=friction, noise_estimate=noise_estimate_from_aux), message
        if self.sampler == "sgld":
            factor = (1 + h * noise / 2) / (1 - h * L / 2) if h * L < 2 else np.inf
            if factor > WARN_SD_FACTOR ** 2:
                message = (f"sampler='sgld' with step_size={h:.3g} and batch_size={n} of {N} "
                           "rows: the minibatch gradient noise inflates the chain's variance "
                           f"by up to about {factor:.3g}x (standard deviations "
                           f"{np.sqrt(factor):.3g}x the posterior's; Brosse, Durmus & Moulines "
                           "2018). Use sampler='sgldcv' (accurate at this cost) or 'sghmc', or "
                           "a larger batch_size with a smaller step_size: the variance factor "
                           "is about (1 + h Sigma_max / 2) / (1 - h L / 2) with Sigma_max = "
                           f"{noise:.3g} and L = {L:.3g} (simplexsg.sgmcmc.regression docstring)")
        return (SGD(h) if self.sampler == "sgd" else SGLD(h)), message

    # ---------------------------------------------------------------- fitting
    def fit(self, X, y):
        """Sample the posterior of theta given X (n_samples, n_features) and y (n_samples,).

        Bad input raises before the model changes, and so does a diverging chain
        (FloatingPointError). Any other exception while sampling (Ctrl-C included) keeps the
        samples of the completed steps (``interrupted_`` True); with ``warm_start=True`` the
        next ``fit`` on the same data resumes the run, bit for bit.

        Parameters
        ----------
        X : array-like (n_samples, n_features)
            Finite features (|X| up to 1e100).
        y : array-like (n_samples,)
            Targets: two classes (logistic) or finite numbers (linear).

        Returns
        -------
        self
        """
        start = time.perf_counter()
        saved = dict(self.__dict__)
        run = self._start_fit(X, y)
        try:
            if run["warning"] is not None:
                warnings.warn(run["warning"], UserWarning, stacklevel=2)
            result = sample(*run["args"], **run["options"])
        except BaseException as exc:
            progress = getattr(exc, "sample_progress", None)
            if progress is None or isinstance(exc, FloatingPointError):
                self.__dict__.clear()             # nothing to keep, or a diverged chain
                self.__dict__.update(saved)
            else:
                self._keep_progress(progress)
            raise
        skip = self.burn_in_ // self._run_info["thin"]
        self._set_samples(result.chain[skip:],
                          None if result.gradients is None else result.gradients[skip:])
        self._last_state, self._progress, self.interrupted_ = result.state, None, False
        self.fit_seconds_ = time.perf_counter() - start
        if self.sampler == "sghmc" and result.state.aux is not None:
            # The correction's room, measured: the last estimate of the gradient noise.
            ratio = (self.step_size_ * np.linalg.eigvalsh(result.state.aux).max()
                     / (2 * self.friction_))
            if ratio > WARN_SD_FACTOR ** 2:
                warnings.warn(
                    f"sampler='sghmc': the minibatch gradient noise measured at the end of the "
                    f"run is {ratio:.3g} times the noise the friction injects, more than the "
                    "correction can remove, so the chain's standard deviations may be up to "
                    f"{np.sqrt(ratio):.3g}x the posterior's. If the chain had not reached the "
                    "posterior yet (n_iter too small), run longer; otherwise use a smaller "
                    "step_size, a larger friction or a larger batch_size", UserWarning,
                    stacklevel=2)
        return self

    @restore_on_error
    def _start_fit(self, X, y):
        """Validate; plan a new run, the interrupted one resumed, or the chain continued
        (``warm_start``). Returns the arguments of ``sample``."""
        params = self._check_params()
        plan = fit_plan(self, params["warm_start"], "_last_state")
        resume, extend = plan == "resume", plan == "continue"
        X, y = self._validate_training_data(X, y)
        _check_magnitude(X)
        fingerprint = {"data": array_digest(X, y), **result_params(self)}
        if resume:
            check_unchanged(self._fingerprint, fingerprint, keys=list(fingerprint))
        elif extend and X.shape[1] != self.coef_.shape[0]:
            raise ValueError(f"warm_start continues a chain of {self.coef_.shape[0]} features; "
                             f"X has {X.shape[1]}")
        if not (resume or extend):
            for name in [key for key in vars(self) if key.endswith("_") and key not in (
                    "n_features_in_", "feature_names_in_", "classes_")]:
                delattr(self, name)                # the previous fit's
            # The scale of the parameters the chain samples: fixed for the chain's life, so a
            # resumed or continued chain keeps it.
            self._scaling = Standardisation(X, y, self.fit_intercept, self._SCALE_Y)
            self._centre = None
        n, d = X.shape
        n_kept = params["n_iter"] // params["thin"] - params["burn_in"] // params["thin"]
        n_params = d + bool(self.fit_intercept)
        if self.zv and n_kept <= n_params + 1:
            raise ValueError(f"zv=True fits {n_params} coefficients and needs more than "
                             f"{n_params + 1} kept samples, got {n_kept}: raise n_iter")
        data = self._scaling.data(X, y)
        model = self._model(params["prior_precision"], data)
        self.batch_size_ = _resolve_batch_size(
            self.batch_size, n,
            SGHMC_BATCH_FRACTION if self.sampler == "sghmc" else BATCH_FRACTION)
        self.burn_in_ = params["burn_in"]
        if not (resume or extend):
            self.random_state_ = seed_sequence(self.random_state)
        if self.sampler == "sgldcv" and self._centre is None:
            self._centre = self._centre_of(model, data)
            coef, intercept = self._scaling.original(self._centre)
            self.centre_ = np.append(coef, intercept) if self.fit_intercept else coef
        centre = self._centre if self.sampler == "sgldcv" else None
        if centre is not None:
            estimator = ControlVariateGradient(centre, self.batch_size_)
        elif self.sampler == "sghmc":
            estimator = NoiseTrackingGradient(self.batch_size_)
        else:
            estimator = MinibatchGradient(self.batch_size_)
        integrator, warning = self._integrator(params, model, data[0], centre)
        options = dict(random_state=self.random_state_, store_gradients=self.zv,
                       thin=params["thin"], verbose=self.verbose,
                       theta0=self._last_state if extend else None,
                       resume=self._progress if resume else None)
        if params["checkpoint_every"] is not None:
            options.update(checkpoint=self._checkpoint,
                           checkpoint_every=params["checkpoint_every"])
        self._fingerprint, self.interrupted_ = fingerprint, True
        self._run_info = {"thin": params["thin"]}
        return {"args": (model, data, estimator, integrator, params["n_iter"]),
                "options": options, "warning": warning}

    def _set_samples(self, theta, gradients=None):
        """coef_samples_, coef_ (and the intercept's) from the kept states ``theta``; the ZV
        estimate when ``gradients`` (at those states) are given."""
        mean = zv_estimate(theta, gradients).mean if gradients is not None else theta.mean(axis=0)
        coef_samples, intercept_samples = self._scaling.original(theta)
        self.coef_samples_ = np.ascontiguousarray(coef_samples)
        coef, intercept = self._scaling.original(mean)
        self.coef_, self.intercept_ = coef, float(intercept)
        if self.fit_intercept:
            self.intercept_samples_ = intercept_samples

    def _keep_progress(self, progress):
        """The model after the last completed step of an unfinished run: its kept samples so
        far (or, before any is kept, the current state as the only one); no ZV."""
        self._progress, self._last_state, self.interrupted_ = progress, progress.state, True
        thin = self._run_info["thin"]
        kept = progress.chain[self.burn_in_ // thin:progress.step // thin]
        self._set_samples(kept if len(kept) else progress.state.theta[None])

    def _checkpoint(self, progress):
        """Write the model as it would be if interrupted now (``joblib``, atomically)."""
        snapshot = copy.copy(self)
        snapshot.__dict__ = dict(self.__dict__)
        snapshot._keep_progress(progress)
        write_checkpoint(snapshot, self.checkpoint_path)

    # ---------------------------------------------------------------- prediction
    def _validated(self, X):
        check_is_fitted(self, "coef_samples_")
        return _check_magnitude(validate_data(self, X, dtype=np.float64, reset=False))

    def _linear_predictor_samples(self, X):
        """Blocks (rows, n_kept) of x . theta_k over the kept samples, for validated X."""
        intercepts = getattr(self, "intercept_samples_", 0.0)
        for start in range(0, X.shape[0], _PREDICT_ROWS):
            yield X[start:start + _PREDICT_ROWS] @ self.coef_samples_.T + intercepts
