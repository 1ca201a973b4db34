"""Latent Dirichlet allocation by stochastic-gradient MCMC on the topics (SCIR or SGRLD).

Each step takes a minibatch of documents, runs the local Gibbs kernel on their topic assignments
with the topics fixed, and moves every topic row with SCIR or SGRLD using the estimated
full-data counts ``(D / batch) * mean n_kw``. Modules:

* ``estimator``: ``LDA``, scikit-learn's face (parameters, fitted state, ``fit``), with
  ``variants`` (``SCIRLDA``, ``SGRLDLDA``: ``sampler`` fixed), ``validation`` (the parameters'
  checks), ``inputs`` (corpora read and checked, memory checks), ``start`` (a fit's start: the
  data read, the fit planned, a new chain's state), ``inference`` (``transform``, ``score``,
  ``perplexity``) and ``fitted`` (the methods that read the fitted topics);
* ``training``: the loop (minibatch source -> local step -> global step -> averaging);
* ``gibbs``: the local step's Gibbs sampler (token arrays, the Cython sweeps' wrapper,
  fold-in); ``local``: where it runs (an executor returning sparse counts);
* ``global_step``: SCIR or SGRLD on every topic row; ``alpha``: the SGLD-CV sampler of the
  doc-topic prior (``learn_doc_topic_prior``);
* ``defaults`` (the defaults, resolved in one place), ``monitor`` (the convergence check),
  ``run`` (a fit's resumable plan);
* ``inspection`` (top words, gensim-style topic text, coherence), ``export`` (a gensim
  ``LdaModel``, pyLDAvis's inputs) and ``uncertainty`` (credible intervals of the top words,
  independent chains aligned and diagnosed), ``plots`` (matplotlib figures): functions of a
  fitted model.
"""
from .estimator import LDA
from .variants import SCIRLDA, SGRLDLDA

__all__ = ["LDA", "SCIRLDA", "SGRLDLDA"]
