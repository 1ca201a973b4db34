"""The standardised problem the regression estimators sample (``simplexsg.sgmcmc.estimators``):
the affine map between the data's scale and the standardised one, and the Gaussian-prior
models with a flat intercept."""
import numpy as np

from .models import LinearRegressionModel, LogisticRegressionModel


def standardise(A, centred):
    """(offset (k,), scale (k,), standardised A) for the columns of A (N, k), N >= 1: offset
    the column means if ``centred``, else 0; scale the root mean square about the offset, or
    for a column constant up to rounding (scale at most N eps of its largest |entry|) that
    largest |entry| (1 for a column of zeros). Computed on A divided by its columns' largest
    |entry|, so that nothing overflows."""
    largest = np.max(np.abs(A), axis=0)
    unit = np.where(largest > 0, largest, 1.0)
    A = A / unit
    offset = A.mean(axis=0) if centred else np.zeros(A.shape[1])
    A -= offset
    spread = np.sqrt(np.mean(A ** 2, axis=0))
    spread = np.where(spread <= A.shape[0] * np.finfo(np.float64).eps, 1.0, spread)
    return offset * unit, spread * unit, A / spread


class Standardisation:
    """The affine map from the standardised problem the chain samples to the original scale.

    Columns u_j = (x_j - x_offset_j) / x_scale_j and target z = (y - y_offset) / y_scale
    (logistic: y_offset 0, y_scale 1). theta = (beta, b) maps to
    ``coef = beta * y_scale / x_scale`` and ``intercept = y_offset + y_scale b - coef . x_offset``
    (``b`` and ``y_offset`` are 0 without ``fit_intercept``, when the offsets are 0).
    """

    def __init__(self, X, y, fit_intercept, scale_y):
        self.fit_intercept = bool(fit_intercept)
        self.x_offset, self.x_scale, _ = standardise(X, self.fit_intercept)
        self.y_offset, self.y_scale = 0.0, 1.0
        if scale_y:
            offset, scale, _ = standardise(y[:, None], self.fit_intercept)
            self.y_offset, self.y_scale = float(offset[0]), float(scale[0])
            if self.y_scale > np.sqrt(np.finfo(np.float64).max):
                raise ValueError(f"y has entries up to {float(np.max(np.abs(y))):.3g}: its "
                                 "variance, the noise variance's scale, overflows float64; "
                                 "rescale y")
        with np.errstate(over="ignore", invalid="ignore"):
            ratio = self.y_scale / self.x_scale
            finite = np.isfinite(ratio).all() and np.isfinite(ratio * self.x_offset).all()
        if not finite:
            raise ValueError(f"the scales of y ({self.y_scale:.3g}) and of the columns of X "
                             f"({self.x_scale.min():.3g} to {self.x_scale.max():.3g}) are too "
                             "far apart: the coefficients on the original scale overflow "
                             "float64; rescale X or y")

    def data(self, X, y):
        """The standardised design (N, d [+ 1], with its column of ones) and target."""
        U = (X - self.x_offset) / self.x_scale
        if self.fit_intercept:
            U = np.hstack([U, np.ones((len(U), 1))])
        return U, (y - self.y_offset) / self.y_scale

    def original(self, theta):
        """(coef (..., d), intercept (...)) for standardised states theta (..., d [+ 1])."""
        d = len(self.x_scale)
        coef = theta[..., :d] * (self.y_scale / self.x_scale)
        if not self.fit_intercept:
            return coef, np.zeros(theta.shape[:-1])
        return coef, self.y_offset + self.y_scale * theta[..., d] - coef @ self.x_offset


class FlatIntercept:
    """Mixin for a ``simplexsg.sgmcmc`` Gaussian-prior model whose last coordinate (the
    intercept) has a flat prior instead: its prior gradient is 0 and it is left out of the
    log prior."""

    def grad_log_prior(self, theta):
        grad = super().grad_log_prior(theta)
        grad[..., -1] = 0.0
        return grad

    def log_prior(self, theta):
        return super().log_prior(np.asarray(theta, dtype=np.float64)[..., :-1])


class LinearModelFlatIntercept(FlatIntercept, LinearRegressionModel):
    def posterior(self, data):
        """Exact posterior mean (d,) and covariance (d, d), the last coordinate flat."""
        X, y = self.check_data(data)
        precision = np.full(X.shape[1], float(self.prior_precision))
        precision[-1] = 0.0
        H = np.diag(precision) + self.noise_precision * X.T @ X
        cov = np.linalg.inv(H)
        return np.linalg.solve(H, self.noise_precision * X.T @ y), 0.5 * (cov + cov.T)


class LogisticModelFlatIntercept(FlatIntercept, LogisticRegressionModel):
    pass


def residual_variance(design, y):
    """RSS / (N - p) of the least-squares fit of y (N,) on design (N, p)."""
    n, p = design.shape
    if n <= p:
        raise ValueError("noise_variance=None estimates it from the least-squares "
                         f"residuals, which needs more rows than columns: n_samples={n}, "
                         f"{p} columns; pass noise_variance")
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    return float(np.sum((y - design @ coef) ** 2) / (n - p))
