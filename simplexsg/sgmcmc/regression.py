"""The fitting shared by the Bayesian regression estimators (``simplexsg.sgmcmc.estimators``):
their base class's parameters, ``fit`` (a new run, an interrupted one resumed or a finished
one continued, checkpoints), the kept samples and the prediction blocks.

Thin wrappers over ``simplexsg.sgmcmc`` (models, gradient estimators, integrators, ``sample``)
and ``simplexsg.sgmcmc.zv`` (ZV). ``fit`` standardises the data (each column of X, and y for
the linear model, centred with ``fit_intercept`` and scaled; the classes' docstrings state the
prior on that scale) and the chain samples the standardised parameter ``theta = (beta, b)``:
the coefficients of the standardised columns and, with ``fit_intercept``, the intercept as the
coefficient of a column of ones, under a flat prior. Everything reported (``coef_``,
``intercept_``, their samples, ``centre_``, predictions) is mapped back to the original scale;
``step_size_`` is that of the standardised chain. The default step and minibatch sizes and
their accuracy: ``simplexsg.sgmcmc.regression_defaults``.
"""
import copy
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
from .._validation import POSITIVE, check_checkpoint, int_from, validate_params
from .driver import sample
from .gradients import ControlVariateGradient, MinibatchGradient, NoiseTrackingGradient
from .regression_defaults import choose_integrator, measured_noise_warning, resolve_batch_size
from .standardise import Standardisation
from .zv import zv_estimate

SAMPLERS = ("sgld", "sgldcv", "sghmc", "sgd")

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
            message = measured_noise_warning(self.step_size_, self.friction_, result.state.aux)
            if message is not None:
                warnings.warn(message, UserWarning, stacklevel=2)
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
        self.batch_size_ = resolve_batch_size(self.batch_size, n, self.sampler)
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
        # The likelihood's curvature in x . theta at the centre, or its supremum (no centre).
        curvature = self._curvature(model, None if centre is None else data[0] @ centre)
        integrator, self.step_size_, friction, warning = choose_integrator(
            self.sampler, params["prior_precision"], data[0], curvature, self.batch_size_,
            params["step_size"], params["friction"])
        if friction is not None:
            self.friction_ = friction
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
