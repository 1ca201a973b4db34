"""Latent Dirichlet allocation by stochastic-gradient MCMC on the topics (SCIR or SGRLD).

Each step takes a minibatch of documents, runs the local Gibbs kernel on their topic assignments
with the topics fixed (``simplexsg.gibbs``), and moves every topic row with the simplex sampler
(``simplexsg.simplex``) using the estimated full-data counts ``(D / batch) * mean n_kw``.
"""
from .estimator import LDA, SCIRLDA, SGRLDLDA

__all__ = ["LDA", "SCIRLDA", "SGRLDLDA"]
