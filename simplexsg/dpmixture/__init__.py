"""The Dirichlet-process mixture of multinomials: the estimator (``estimator``) and the
split-merge move of its exact sampler (``split_merge``)."""
from .estimator import DPMixture, log_multinomial_coefficient
from .split_merge import SplitMerge

__all__ = ["DPMixture", "SplitMerge", "log_multinomial_coefficient"]
