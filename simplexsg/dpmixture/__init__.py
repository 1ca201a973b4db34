"""The Dirichlet-process mixture of multinomials: the estimator (``estimator``), its parameters'
checks (``validation``) and defaults (``defaults``), the training loop (``training``), the start
of a chain (``init``), the slice sampler's steps (``slice_sampler``) and the split-merge moves and
label shifts of its exact sampler (``split_merge``, ``label_shift``); the allocations run in this
process (``local``) or on Dask (``distributed``)."""
from .estimator import DPMixture
from .slice_sampler import log_multinomial_coefficient
from .split_merge import SplitMerge

__all__ = ["DPMixture", "SplitMerge", "log_multinomial_coefficient"]
