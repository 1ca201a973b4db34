"""Helpers of the tests (no test functions here), importable from every test module as
``helpers.NAME`` (``pythonpath = ["tests"]`` in pyproject.toml's pytest options):

- ``stats``: the Monte Carlo tolerance ``Z`` and batch-means standard errors;
- ``dp_exact``: the exact posterior of a DP mixture on tiny data, and a collapsed Gibbs sampler;
- ``sgmcmc_exact``: exact moments of minibatch gradients and stationary covariances of linear
  chains (closed forms of the SG-MCMC tests);
- ``dask_faults``: a local Dask cluster and faults injected into its executors;
- ``guards``, ``sklearn_checks``, ``examples_loader``: a hang guard, scikit-learn's estimator
  checks, the scripts of ``examples/`` as modules.

``ROOT`` is the repository's root folder.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
