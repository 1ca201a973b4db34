"""simplexsg: stochastic-gradient MCMC on sparse probability simplexes."""
from . import schedules, simplex
from .simplex import SCIR, SGRLD

__version__ = "0.1.0.dev0"
__all__ = ["SCIR", "SGRLD", "schedules", "simplex", "__version__"]
