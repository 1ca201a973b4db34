"""Deprecated alias of ``simplexsg.sgmcmc.zv`` (zero-variance postprocessing); importing it
warns. It will be removed in the release after next."""
import warnings

from .sgmcmc.zv import ZVEstimate, zv_estimate, zv_features  # noqa: F401

__all__ = ["ZVEstimate", "zv_estimate", "zv_features"]

warnings.warn("simplexsg.postprocess is deprecated: import from simplexsg.sgmcmc",
              DeprecationWarning, stacklevel=2)
