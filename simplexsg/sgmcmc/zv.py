"""Postprocessing of SG-MCMC output: zero-variance (ZV) control variates.

ZV (Mira et al. 2013; SGLD-ZV of Baker et al. 2019, Algorithm 2) estimates E_pi[g(theta)] from
chain states theta_k and gradient estimates of log pi at them (``simplexsg.sgmcmc.sample(...,
store_gradients=True)``). With ``z = -grad / 2`` (Baker et al.'s ``z = grad f / 2``,
f = -log pi), the Stein features

- degree 1: ``z_j``;
- degree 2: also ``theta_j z_j - 1/2`` and ``theta_k z_j + theta_j z_k`` (j < k)

have mean 0 under pi when the gradient is exact or unbiased, and the corrected values are
``g_k + c^T psi_k`` with ``c = -Var(psi)^-1 Cov(psi, g)``. **Sign**: the paper prints the
coefficient without the minus sign; the minus sign is the variance-minimising one (and the
authors' code uses it). The sign convention of z does not change the
estimate. For a Gaussian pi with exact gradients, degree 1 gives the exact mean of each
coordinate and degree 2 the exact mean of any quadratic g, whatever the chain's law.

Apply ZV to unconstrained parameters only: for positive or simplex parameters the Stein
identity can fail through boundary terms (Mira, Solgi & Imparato 2013 assume the target
vanishes on the boundary of its support).
"""
from typing import NamedTuple

import numpy as np

from .._validation import as_float_array

__all__ = ["ZVEstimate", "zv_features", "zv_estimate"]


class ZVEstimate(NamedTuple):
    """Output of ``zv_estimate``.

    values : (K,) or (K, m)
        ZV-corrected value of g at each sample (same shape as g).
    mean : float or (m,)
        Their mean: the ZV estimate of E_pi[g].
    coef : (p,) or (p, m)
        Fitted coefficients ``-Var(psi)^-1 Cov(psi, g)`` of the p features.
    """
    values: np.ndarray
    mean: np.ndarray
    coef: np.ndarray


def _check_finite_2d(name, value):
    arr = as_float_array(name, value)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-d array (n_samples, d), got shape "
                         f"{arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{name} has a non-finite value ({arr[i, j]}) at sample {i}, "
                         f"coordinate {j}")
    return arr


def zv_features(samples, gradients, degree=1):
    """Stein features psi (K, p) of ``samples`` (K, d) with ``gradients`` (K, d) of log pi.

    Degree 1: p = d columns ``z_j``; degree 2: then d columns ``theta_j z_j - 1/2`` and
    d (d-1)/2 columns ``theta_k z_j + theta_j z_k`` (j < k, row-major), with ``z = -grad / 2``.
    """
    theta = _check_finite_2d("samples", samples)
    grad = _check_finite_2d("gradients", gradients)
    if grad.shape != theta.shape:
        raise ValueError(f"gradients has shape {grad.shape}, samples has shape {theta.shape}")
    if degree not in (1, 2) or isinstance(degree, bool):
        raise ValueError(f"degree must be 1 or 2, got {degree!r}")
    z = -0.5 * grad
    if degree == 1:
        return z
    j, k = np.triu_indices(theta.shape[1], 1)
    cross = theta[:, k] * z[:, j] + theta[:, j] * z[:, k]
    return np.hstack([z, theta * z - 0.5, cross])


def zv_estimate(samples, gradients, g=None, degree=1):
    """ZV-corrected values and mean estimate of E_pi[g(theta)]; returns ``ZVEstimate``.

    Parameters
    ----------
    samples : (K, d) chain states (pool several chains by stacking them).
    gradients : (K, d) estimates of grad log pi at ``samples`` (exact or unbiased; the
        control-variate estimator works far better than plain minibatch gradients).
    g : None (each coordinate, g = samples), an array (K,) or (K, m), or a callable mapping
        ``samples`` to such an array.
    degree : 1 or 2, the degree of the polynomial in the Stein operator.

    The coefficients are ``-Var(psi)^-1 Cov(psi, g)`` with sample moments, computed by least
    squares on the centred features (minimum-norm if Var(psi) is singular).
    """
    psi = zv_features(samples, gradients, degree)
    n_samples, p = psi.shape
    if g is None:
        values = np.array(samples, dtype=np.float64)
    else:
        values = g(np.asarray(samples, dtype=np.float64)) if callable(g) else g
        values = as_float_array("g", values)
    if values.ndim not in (1, 2) or values.shape[0] != n_samples:
        raise ValueError(f"g must have shape ({n_samples},) or ({n_samples}, m), got "
                         f"{values.shape}")
    if not np.isfinite(values).all():
        raise ValueError("g has a non-finite value at sample "
                         f"{int(np.argwhere(~np.isfinite(values))[0][0])}")
    if n_samples <= p + 1:
        raise ValueError(f"ZV of degree {degree} fits {p} coefficients and needs more than "
                         f"{p + 1} samples, got {n_samples}")
    psi_c = psi - psi.mean(axis=0)
    g_c = values - values.mean(axis=0)
    coef = -np.linalg.lstsq(psi_c, g_c, rcond=None)[0]
    corrected = values + psi @ coef
    return ZVEstimate(corrected, corrected.mean(axis=0), coef)
