"""Bayesian linear and logistic regression sampled by the SGLD family, as scikit-learn
estimators, with the docstring sections they share: thin faces over ``regression`` (sampling,
prediction), ``regression_defaults`` (step and minibatch sizes; its docstring gives their
accuracy) and ``standardise`` (the problem on the standardised scale)."""
import numpy as np
from scipy.special import expit
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import validate_data

from .._validation import POSITIVE, check_finite
from .centre import find_centre
from .models import LinearRegressionModel, LogisticRegressionModel
from .regression import CONSTRAINTS, _BayesianLinearModel
from .regression_defaults import NOISE_FLOOR
from .standardise import (LinearModelFlatIntercept, LogisticModelFlatIntercept,
                          residual_variance)

__all__ = ["BayesianLogisticRegression", "BayesianLinearRegression"]

#: The Parameters section of both classes' docstrings (the parameters of
#: ``regression._BayesianLinearModel``); ``BayesianLinearRegression`` adds ``noise_variance``.
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
        Accuracy of each sampler's defaults: ``simplexsg.sgmcmc.regression_defaults`` module
        docstring.
        "sgld" warns at fit time: at the default step and batch its standard deviations are
        about sqrt(1 + 0.05 N / n) times the posterior's (2.5x at n = N / 100).
    step_size : float, default None
        Step size h of the chain on the standardised scale
        (``simplexsg.sgmcmc.regression_defaults`` docstring). None: ``STEP_SCALE / L``; for
        "sghmc"
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

#: The Attributes section both classes' docstrings share.
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


class BayesianLogisticRegression(ClassifierMixin, _BayesianLinearModel):
    __doc__ = f"""Binary Bayesian logistic regression sampled by SGLD-CV, SGLD, SGHMC or SGD.

    P(y = classes_[1] | x) = sigmoid(x . coef + intercept). ``predict_proba`` averages the
    sigmoid over the posterior samples (not the sigmoid of the posterior mean); ``predict``
    picks the more probable class. ``zv`` changes ``coef_`` and ``intercept_`` only, not
    ``predict_proba``. Step sizes and their defaults: ``simplexsg.sgmcmc.regression_defaults``
    module docstring.

    **Prior**, on the standardised scale. ``fit`` standardises the columns of X,
    ``u_j = (x_j - m_j) / s_j``, with m_j and s_j the mean and standard deviation of the
    training column (``fit_intercept=False``: m_j = 0 and s_j its root mean square; a constant
    column has s_j its largest |entry|, 1 if all 0). The model is
    P(y = classes_[1] | u) = sigmoid(u . beta + b), with beta_j iid N(0, prior_scale^2) and the
    intercept b flat (unpenalised, as in scikit-learn's linear models); on the original scale,
    ``coef_j = beta_j / s_j`` a priori N(0, (prior_scale / s_j)^2) and the intercept flat.
    Default prior_scale = 1, weakly informative whatever the units of X: a change of one
    standard deviation in a feature a priori moves the log-odds by about 1 (rarely more than
    2). With ``fit_intercept`` the posterior mode is the fit of
    scikit-learn's ``make_pipeline(StandardScaler(), LogisticRegression(C=prior_scale**2))``
    (whose intercept is unpenalised) on the original scale, and the results do not change (up
    to rounding) when a column of X is shifted or multiplied by a positive number.

    Parameters
    ----------
{_PARAMETERS}
    Attributes
    ----------
{_ATTRIBUTES}    classes_ : (2,) the class labels, sorted; y = classes_[1] is the positive class.
    """

    def _validate_training_data(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        kind = type_of_target(y, input_name="y")
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"Unknown label type: {kind}; y must hold class labels, got "
                             f"{np.unique(y)[:5]}")
        self.classes_, y = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise ValueError("Only binary classification is supported: y must have exactly 2 "
                             f"classes, got {len(self.classes_)} class(es): {self.classes_[:5]}")
        return X, y.astype(np.float64)

    _SCALE_Y = False

    def _model(self, prior_precision, data):
        cls = LogisticModelFlatIntercept if self.fit_intercept else LogisticRegressionModel
        return cls(prior_precision=prior_precision)

    def _centre_of(self, model, data):
        return find_centre(model, data)

    def _curvature(self, model, eta):
        """-d^2/d eta^2 log p(y | eta) at eta = x . theta, (N,); its supremum 1/4 for None."""
        return 0.25 if eta is None else expit(eta) * expit(-eta)

    def predict_proba(self, X):
        """Posterior predictive probabilities of ``classes_``: the mean over the kept samples
        theta_k of sigmoid(x . theta_k).

        Parameters
        ----------
        X : array-like (n_samples, n_features)
            Finite features (|X| up to 1e100).

        Returns
        -------
        ndarray (n_samples, 2), rows summing to 1
        """
        X = self._validated(X)
        p = np.concatenate([expit(eta).mean(axis=1) for eta in self._linear_predictor_samples(X)])
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """The more probable class under ``predict_proba`` (ties to classes_[0]).

        Parameters
        ----------
        X : array-like (n_samples, n_features)
            Finite features (|X| up to 1e100).

        Returns
        -------
        ndarray (n_samples,) of ``classes_`` labels
        """
        positive = self.predict_proba(X)[:, 1] > 0.5
        return self.classes_[positive.astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class BayesianLinearRegression(RegressorMixin, _BayesianLinearModel):
    __doc__ = f"""Bayesian linear regression sampled by SGLD-CV, SGLD, SGHMC or SGD.

    y ~ N(x . coef + intercept, noise_variance). The posterior is Gaussian, known in closed
    form, which makes this estimator a check of the samplers. ``predict`` is the
    posterior-mean prediction ``X @ coef_ + intercept_`` (ZV-corrected if ``zv``). Step sizes
    and their defaults: ``simplexsg.sgmcmc.regression_defaults`` module docstring.

    **Prior**, on the standardised scale. ``fit`` standardises the columns of X and y,
    ``u_j = (x_j - m_j) / s_j`` and ``z = (y - m_y) / s_y``, with m and s the means and
    standard deviations of the training columns and of y (``fit_intercept=False``: m = 0 and s
    the root mean square; a constant column or y has s its largest |entry|, 1 if all 0). The
    model is z ~ N(u . beta + b, noise_variance / s_y^2), with beta_j iid N(0, prior_scale^2)
    and the intercept b flat (unpenalised, as in scikit-learn's linear models); on the
    original scale, ``coef_j = beta_j s_y / s_j`` a priori N(0, (prior_scale s_y / s_j)^2) and
    the intercept flat. Default prior_scale = 1, weakly informative whatever the units of X
    and y: a change of one standard deviation in a feature a priori moves y by about one
    standard deviation of y (rarely more than two). With ``fit_intercept`` the
    posterior mode is the fit of scikit-learn's ``make_pipeline(StandardScaler(),
    Ridge(alpha=noise_variance_ / (prior_scale s_y)^2))`` on the original scale, and with
    ``noise_variance=None`` the results do not change (up to rounding) when a column of X or
    y is shifted or multiplied by a positive number.

    Parameters
    ----------
    noise_variance : float, default None
        Variance of y around x . coef + intercept, in y's units squared, fixed while sampling.
        None: the residual variance of the least-squares fit, RSS / (N - p), p the number of
        columns (intercept included), but at least ``NOISE_FLOOR`` (1e-6) times s_y^2 (y's
        variance; its mean square without ``fit_intercept``): a plug-in estimate, whose
        uncertainty the posterior ignores. The floor keeps the posterior proper when the
        least-squares fit is exact (residuals 0). Needs N > p.
{_PARAMETERS}
    Attributes
    ----------
{_ATTRIBUTES}    noise_variance_ : float, the noise variance used, in y's units squared.
    """

    _parameter_constraints = {**CONSTRAINTS, "noise_variance": [POSITIVE, None]}

    def __init__(self, *, prior_scale=1.0, noise_variance=None, fit_intercept=True,
                 sampler="sgldcv", step_size=None, batch_size=None, n_iter=2000, burn_in=None,
                 thin=1, friction=None, zv=False, warm_start=False, checkpoint_every=None,
                 checkpoint_path=None, random_state=None, verbose=0):
        super().__init__(prior_scale=prior_scale, fit_intercept=fit_intercept, sampler=sampler,
                         step_size=step_size, batch_size=batch_size, n_iter=n_iter,
                         burn_in=burn_in, thin=thin, friction=friction, zv=zv,
                         warm_start=warm_start, checkpoint_every=checkpoint_every,
                         checkpoint_path=checkpoint_path, random_state=random_state,
                         verbose=verbose)
        self.noise_variance = noise_variance

    def _validate_training_data(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        return X, check_finite("y", y)      # y_numeric lets strings through: refused here

    _SCALE_Y = True

    def _model(self, prior_precision, data):
        y_scale = self._scaling.y_scale
        if self.noise_variance is None:
            variance = max(residual_variance(*data), NOISE_FLOOR)
        else:
            given = float(self.noise_variance)    # validated by _check_params
            with np.errstate(over="ignore", under="ignore", divide="ignore"):
                variance = float(np.float64(given) / np.float64(y_scale) ** 2)
            if not 0 < variance < np.inf or not 0 < 1 / variance < np.inf:
                raise ValueError(f"noise_variance={given!r} is {variance:.3g} times the "
                                 f"variance of y ({y_scale ** 2:.3g}), out of float64's range "
                                 "on the standardised scale; pass a value nearer y's variance")
        self.noise_variance_ = variance * y_scale ** 2
        cls = LinearModelFlatIntercept if self.fit_intercept else LinearRegressionModel
        return cls(prior_precision=prior_precision, noise_precision=1.0 / variance)

    def _centre_of(self, model, data):
        """The exact posterior mode (= mean) of the Gaussian posterior."""
        return model.posterior(data)[0]

    def _curvature(self, model, eta):
        """-d^2/d eta^2 log p(z | eta) = the noise precision on the standardised scale."""
        return model.noise_precision

    def predict(self, X, return_std=False):
        """Posterior-mean prediction; with ``return_std``, also the posterior predictive
        standard deviation sqrt(Var_k(x . theta_k) + noise_variance_).

        Parameters
        ----------
        X : array-like (n_samples, n_features)
            Finite features (|X| up to 1e100).
        return_std : bool, default False

        Returns
        -------
        ndarray (n_samples,), and with ``return_std`` a second ndarray (n_samples,)
        """
        X = self._validated(X)
        mean = X @ self.coef_ + self.intercept_
        if not return_std:
            return mean
        var = np.concatenate([eta.var(axis=1) for eta in self._linear_predictor_samples(X)])
        return mean, np.sqrt(var + self.noise_variance_)

    def score(self, X, y, sample_weight=None):
        """Coefficient of determination R^2 of ``predict(X)`` against y (scikit-learn's
        ``RegressorMixin.score``; NaN for fewer than 2 rows). y is checked first, so that its
        errors name it: finite, and small enough that its sums of squares stay finite.

        Parameters
        ----------
        X : array-like (n_samples, n_features)
            Finite features (|X| up to 1e100).
        y : array-like (n_samples,)
            Finite targets.
        sample_weight : array-like (n_samples,), optional

        Returns
        -------
        float
        """
        y = check_finite("y", y)
        limit = np.sqrt(np.finfo(np.float64).max / (4 * max(y.size, 1)))
        largest = float(np.max(np.abs(y), initial=0.0))
        if largest > limit:
            raise ValueError(f"y has entries up to {largest:.3g}: above {limit:.3g} the sums of "
                             "squares of R^2 overflow float64; rescale y")
        return super().score(X, y, sample_weight)
