"""simplexsg: stochastic-gradient MCMC on sparse probability simplexes."""
from . import datasets, metrics, schedules, sgmcmc, simplex
from .dpmixture import DPMixture
from .lda import LDA, SCIRLDA, SGRLDLDA
from .sgmcmc.estimators import BayesianLinearRegression, BayesianLogisticRegression
from .simplex import SCIR, SGRLD

__version__ = "0.1.0.dev0"
__all__ = ["BayesianLinearRegression", "BayesianLogisticRegression", "DPMixture", "LDA",
           "SCIRLDA", "SGRLDLDA", "SCIR", "SGRLD", "datasets", "metrics", "schedules", "sgmcmc",
           "simplex", "__version__"]
