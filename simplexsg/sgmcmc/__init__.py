"""The SGLD family for unconstrained parameters, built from swappable parts (as BlackJAX's
``sgmcmc``): ``sample(model, data, estimator, integrator, n_iter)`` runs ``integrator`` driven
by ``estimator``'s estimates of the gradient of the log posterior of ``model`` given ``data``.

- ``models``: ``Model`` (interface), ``GaussianLocationModel``, ``LinearRegressionModel``,
  ``LogisticRegressionModel``;
- ``gradients``: ``FullGradient`` (LMC), ``MinibatchGradient`` (SGLD),
  ``ControlVariateGradient`` (SGLD-CV = SGLDFP), centred by ``centre.find_centre``, and
  ``StoredControlVariate`` for data whose rows change while the chain runs;
- ``ewsg``: ``ExponentiallyWeightedGradient`` (EWSG: a Metropolis-Hastings chain over the data
  indices, for SGHMC and SGLD);
- ``integrators``: ``SGLD``, ``SGHMC``, ``SGD``;
- ``driver``: ``sample`` (chains, thinning, resume, checkpoints);
- ``multilevel``: ``multilevel_estimate`` (multilevel Monte Carlo over coupled SGLD chains);
- ``zv``: zero-variance postprocessing of a chain and its gradient estimates.
- ``estimators``: ``BayesianLinearRegression`` and ``BayesianLogisticRegression``, scikit-learn
  estimators over these parts (``regression``: their shared fitting; ``regression_defaults``:
  their default steps and minibatches and the accuracy of those; ``standardise``: the problem
  on the standardised scale).

**Step-size convention** (every integrator here): the step of size ``h`` is the Euler step of
time ``h`` of the Langevin diffusion ``d theta = grad log pi(theta) dt + sqrt(2) dW``::

    SGLD:  theta <- theta + h * grad_est(theta) + sqrt(2 h) * xi,      xi ~ N(0, I)

Conversions: Brosse et al.'s gamma = h, the MLMC paper's h = h and EWSG's
h = h; Welling & Teh's and Baker et al.'s epsilon (drift ``epsilon/2 * grad``, noise variance
``epsilon``) is ``2 h``, so pass ``step_size = epsilon / 2``. The step size ``h`` of
``simplexsg.simplex`` (SCIR/SGRLD) is the same diffusion time as this ``h``.
"""
from .centre import find_centre
from .driver import SampleProgress, SampleResult, sample
from .ewsg import ExponentiallyWeightedGradient
from .gradients import (ControlVariateGradient, FullGradient, GradientEstimator,
                        MinibatchGradient)
from .integrators import SGD, SGHMC, SGLD, LangevinState
from .models import (GaussianLocationModel, LinearRegressionModel, LogisticRegressionModel,
                     Model)
from .multilevel import MultilevelResult, multilevel_estimate
from .zv import ZVEstimate, zv_estimate, zv_features

__all__ = ["Model", "GaussianLocationModel", "LinearRegressionModel", "LogisticRegressionModel",
           "GradientEstimator", "FullGradient", "MinibatchGradient", "ControlVariateGradient",
           "ExponentiallyWeightedGradient", "find_centre",
           "LangevinState", "SGLD", "SGHMC", "SGD", "SampleResult", "SampleProgress", "sample",
           "MultilevelResult", "multilevel_estimate", "ZVEstimate", "zv_estimate",
           "zv_features"]
