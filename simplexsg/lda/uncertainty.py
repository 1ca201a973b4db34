"""Posterior uncertainty of fitted topics: credible intervals of the top words' probabilities
from the kept topic samples, and independent chains with convergence diagnostics.

* ``topic_word_intervals(model, n, level)``: per topic, its ``n`` most probable words'
  posterior mean, standard deviation and equal-tailed credible interval over
  ``model.topic_samples_`` (``LDA(n_topic_samples=...)``).
* ``align_topics(reference, topics)``: the permutation matching one fit's topics to another's,
  by the Hungarian algorithm (Kuhn 1955; ``scipy.optimize.linear_sum_assignment``) on the
  Hellinger distances between topics.
* ``fit_chains(estimator, X, n_chains)``: independent fits (clones with seeds spawned from the
  estimator's ``random_state``), aligned to the first, with R-hat and ESS (``simplexsg.diagnostics``) of scalar
  summaries of their topic samples: each topic's entropy and, with ``X_heldout``, the
  held-out log likelihood per token.

Chains are separate fits rather than an ``n_chains`` parameter of ``LDA``: a fit is one
resumable chain (its state, transaction, checkpoints and warm starts are one chain's), and
independent chains share nothing, so clones run them without touching that machinery.
"""
from typing import NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from .. import metrics
from ..diagnostics import bulk_ess, split_rhat
from .._random import seed_sequence
from .inspection import _check_top_n, feature_names, top_word_ids


class TopicWordIntervals(NamedTuple):
    """Posterior summaries of each topic's top words; arrays (K, n), most probable first.

    ``word_ids`` (columns), ``words`` (str), ``mean``, ``sd`` (standard deviation, ddof=1),
    ``lower`` and ``upper`` (the equal-tailed ``level`` credible interval: the sample
    quantiles ``(1 - level) / 2`` and ``(1 + level) / 2``); ``level``; ``n_samples``: the
    samples they come from.
    """
    word_ids: np.ndarray
    words: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    level: float
    n_samples: int


def _check_samples(model):
    """The model's (S, K, W) topic samples; raises if it kept fewer than 2."""
    check_is_fitted(model, "components_")
    samples = getattr(model, "topic_samples_", None)
    if samples is None or len(samples) < 2:
        raise ValueError("posterior uncertainty needs at least 2 kept topic samples: fit with "
                         "n_topic_samples >= 2 (and at least 2 steps after burn_in_)")
    return samples


def _check_level(level):
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    return float(level)


def topic_word_intervals(model, n=10, level=0.9):
    """Mean, standard deviation and equal-tailed ``level`` credible interval of each topic's
    ``n`` top words' probabilities over ``model.topic_samples_``.

    The top words are those of ``components_`` (``top_words``). The samples are the chain's,
    thinned: their spread includes the stochastic gradient's minibatch noise (exact at full
    batch with ``local_topics="sample"``), and the interval's ends are sample quantiles, so
    with S samples the outer ``(1 - level) S / 2`` on each side decide them. Returns
    ``TopicWordIntervals``.
    """
    samples = _check_samples(model)
    level = _check_level(level)
    ids = top_word_ids(model, _check_top_n(model, n))
    values = np.take_along_axis(samples, ids[None], axis=2).astype(np.float64)   # (S, K, n)
    lower, upper = np.quantile(values, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return TopicWordIntervals(ids, feature_names(model)[ids], values.mean(axis=0),
                              values.std(axis=0, ddof=1), lower, upper, level, len(samples))


def hellinger_distances(a, b):
    """(K_a, K_b) Hellinger distances between the rows of a (K_a, W) and b (K_b, W), rows on
    the simplex: ``sqrt(1 - sum_w sqrt(a_kw b_lw))``, in [0, 1]."""
    affinity = np.sqrt(np.asarray(a, dtype=np.float64)) @ np.sqrt(np.asarray(b, np.float64)).T
    return np.sqrt(np.clip(1.0 - affinity, 0.0, None))


def align_topics(reference, topics):
    """The permutation ``p`` (K,) that matches ``topics`` to ``reference`` (both (K, W), rows
    on the simplex): ``topics[p]`` is ``reference``'s order, the one minimising the summed
    Hellinger distances (the Hungarian algorithm, Kuhn 1955)."""
    reference, topics = np.asarray(reference), np.asarray(topics)
    if reference.ndim != 2 or reference.shape != topics.shape:
        raise ValueError(f"reference and topics must be (K, W) arrays of one shape, got "
                         f"{reference.shape} and {topics.shape}")
    _, permutation = linear_sum_assignment(hellinger_distances(reference, topics))
    return permutation


def topic_entropies(topics):
    """Entropy (nats) of each topic: (..., K, W) -> (..., K)."""
    topics = np.asarray(topics, dtype=np.float64)
    return -np.sum(topics * np.log(np.where(topics > 0, topics, 1.0)), axis=-1)


def heldout_log_likelihood(samples, alpha, X_heldout):
    """Document-completion log likelihood per token of X_heldout (``simplexsg.metrics``, the
    deterministic fixed-point fold-in, the same split for every sample) under each topic
    sample of (S, K, W): (S,)."""
    observed, heldout = metrics.completion_split(X_heldout, random_state=0)
    scores = [metrics.document_completion_score(topics / topics.sum(axis=1, keepdims=True),
                                                alpha, observed, heldout)
              for topics in np.asarray(samples, dtype=np.float64)]
    return np.array([s.log_likelihood / s.n_tokens for s in scores])


class Chains(NamedTuple):
    """Independent fits and their convergence diagnostics (``fit_chains``).

    ``models``: the fitted clones, chain 0 first (topics in their own order); ``permutations``
    (n_chains, K): ``models[c].components_[permutations[c]]`` is in chain 0's topic order;
    ``summaries``: name -> draws, ``"topic_entropy"`` (n_chains, S, K) in chain 0's order
    and, with ``X_heldout``, ``"heldout_log_likelihood"`` (n_chains, S), over each chain's
    last S kept samples (S: the fewest any chain kept); ``rhat`` and ``ess``: name -> the
    rank-normalised split-R-hat and bulk ESS (``"topic_entropy"``: one per topic, (K,)).
    """
    models: list
    permutations: np.ndarray
    summaries: dict
    rhat: dict
    ess: dict


def _diagnostics(draws):
    """(R-hat, ESS) of (n_chains, S) draws, or of (n_chains, S, K) per last-axis entry."""
    if draws.ndim == 2:
        return split_rhat(draws), bulk_ess(draws)
    pairs = [_diagnostics(draws[..., k]) for k in range(draws.shape[-1])]
    return tuple(np.array(values) for values in zip(*pairs))


def fit_chains(estimator, X, n_chains=4, *, X_heldout=None, **fit_params):
    """Fit ``n_chains`` independent clones of ``estimator`` on X and compare them.

    Chain c is ``clone(estimator)`` with ``random_state`` the c-th child of the estimator's
    seed (``SeedSequence.spawn``), so the chains draw from independent streams and the
    whole is reproducible from one seed. Each chain's topics are matched to chain 0's by
    ``align_topics``; the summaries of every kept topic sample (so the estimator needs
    ``n_topic_samples >= 4``) are compared across chains by ``split_rhat`` and ``bulk_ess``.

    Parameters
    ----------
    estimator : LDA
        Unfitted parameters to clone (``n_topic_samples >= 4``).
    X : the training documents, as ``LDA.fit`` takes them.
    n_chains : int >= 2, default 4
    X_heldout : counts, optional
        Documents whose completion log likelihood per token is a summary too.
    **fit_params : passed to each ``fit`` (e.g. ``id2word``).

    Returns
    -------
    Chains
    """
    if isinstance(n_chains, bool) or not isinstance(n_chains, (int, np.integer)) or n_chains < 2:
        raise ValueError(f"n_chains must be an int >= 2, got {n_chains!r}")
    if estimator.get_params()["n_topic_samples"] < 4:
        raise ValueError("fit_chains compares the chains' kept topic samples: set "
                         "n_topic_samples >= 4 on the estimator")
    seeds = seed_sequence(estimator.random_state).spawn(int(n_chains))
    models = [clone(estimator).set_params(random_state=seed).fit(X, **fit_params)
              for seed in seeds]
    n_draws = min(len(_check_samples(model)) for model in models)
    if n_draws < 4:
        raise ValueError(f"a chain kept {n_draws} topic samples; R-hat needs at least 4 per "
                         "chain: more steps after burn-in or a larger n_topic_samples")
    permutations = np.array([align_topics(models[0].components_, m.components_)
                             for m in models])
    samples = [m.topic_samples_[-n_draws:][:, p] for m, p in zip(models, permutations)]
    summaries = {"topic_entropy": np.array([topic_entropies(s) for s in samples])}
    if X_heldout is not None:
        summaries["heldout_log_likelihood"] = np.array([   # order-free: each chain's own
            heldout_log_likelihood(m.topic_samples_[-n_draws:], m.doc_topic_prior_, X_heldout)
            for m in models])
    diagnostics = {name: _diagnostics(draws) for name, draws in summaries.items()}
    return Chains(models, permutations, summaries,
                  {name: value[0] for name, value in diagnostics.items()},
                  {name: value[1] for name, value in diagnostics.items()})
