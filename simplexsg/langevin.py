"""Deprecated alias of ``simplexsg.sgmcmc`` (the SGLD family's parts, now one module each);
importing it warns. It will be removed in the release after next."""
import warnings

from .sgmcmc import *  # noqa: F401,F403
from .sgmcmc import __all__  # noqa: F401

warnings.warn("simplexsg.langevin is deprecated: import from simplexsg.sgmcmc",
              DeprecationWarning, stacklevel=2)
