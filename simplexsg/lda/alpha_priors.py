"""The priors of LDA's doc-topic Dirichlet parameter alpha, as densities in u = log alpha.

Each prior is on alpha, independent per entry (one entry for a symmetric alpha, K for one per
topic): ``GammaPrior(shape a, rate b)`` (default a = b = 1, i.e. an exponential with mean 1:
proper, and its density in alpha is within a factor 2.7 of flat over 0.01 .. 1) or
``LogNormalPrior(mean, sd)`` (u ~ N(mean, sd^2)). Densities in u include the Jacobian
d alpha / d u = alpha: the Gamma prior is ``a u - b exp(u)`` + const in u. Every method takes u
of shape (p,) and is vectorised over its entries.
"""
import dataclasses
import numbers

import numpy as np

from .._validation import check_positive_scalar

__all__ = ["GammaPrior", "LogNormalPrior", "check_prior"]


@dataclasses.dataclass(frozen=True)
class GammaPrior:
    """alpha ~ Gamma(shape, rate) per entry; in u = log alpha, ``shape * u - rate * exp(u)``."""

    shape: float = 1.0
    rate: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "shape", check_positive_scalar("prior shape", self.shape))
        object.__setattr__(self, "rate", check_positive_scalar("prior rate", self.rate))

    def log_density(self, u):
        """Sum over the entries of u of the log density in u, up to a constant."""
        return float(np.sum(self.shape * u - self.rate * np.exp(u)))

    def grad(self, u):
        """Gradient of ``log_density`` in u, shaped as u."""
        return self.shape - self.rate * np.exp(u)

    def hessian_diag(self, u):
        """Diagonal of the Hessian of the log density (the entries are independent)."""
        return -self.rate * np.exp(u)


@dataclasses.dataclass(frozen=True)
class LogNormalPrior:
    """alpha log-normal per entry: u = log alpha ~ N(mean, sd^2). Defaults: median alpha 0.1
    (LDA's default), sd 2 (alpha within 0.002 .. 5.5 at 2 sd)."""

    mean: float = float(np.log(0.1))
    sd: float = 2.0

    def __post_init__(self):
        if isinstance(self.mean, bool) or not isinstance(self.mean, numbers.Real) \
                or not np.isfinite(self.mean):
            raise ValueError(f"prior mean must be a finite number, got {self.mean!r}")
        object.__setattr__(self, "mean", float(self.mean))
        object.__setattr__(self, "sd", check_positive_scalar("prior sd", self.sd))

    def log_density(self, u):
        """Sum over the entries of u of the log density in u, up to a constant."""
        return float(np.sum(-0.5 * ((u - self.mean) / self.sd) ** 2))

    def grad(self, u):
        """Gradient of ``log_density`` in u, shaped as u."""
        return -(u - self.mean) / self.sd ** 2

    def hessian_diag(self, u):
        """Diagonal of the Hessian of the log density (the entries are independent)."""
        return np.full(np.shape(u), -1.0 / self.sd ** 2)


def check_prior(prior):
    """``prior`` itself if a GammaPrior or LogNormalPrior; a pair (shape, rate) as a
    GammaPrior. TypeError otherwise."""
    if isinstance(prior, (GammaPrior, LogNormalPrior)):
        return prior
    if isinstance(prior, (tuple, list)) and len(prior) == 2:
        return GammaPrior(*prior)
    raise TypeError("prior must be a GammaPrior, a LogNormalPrior or a pair (shape, rate) of a "
                    f"Gamma prior, got {prior!r}")
