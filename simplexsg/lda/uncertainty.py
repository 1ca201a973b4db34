"""Posterior uncertainty of fitted topics: credible intervals of the top words' probabilities
from the kept topic samples, and independent chains with convergence diagnostics.

* ``topic_word_intervals(model, n, level)``: per topic, its ``n`` most probable words'
  posterior mean, standard deviation and equal-tailed credible interval over
  ``model.topic_samples_`` (``LDA(n_topic_samples=...)``).
* ``align_topics(reference, topics)``: the permutation matching one fit's topics to another's,
  by the Hungarian algorithm (Kuhn 1955; ``scipy.optimize.linear_sum_assignment``) on the
  Hellinger distances between topics.
* ``split_rhat(draws)``, ``bulk_ess(draws)``: rank-normalised split-R-hat and bulk effective
  sample size (Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021, "Rank-normalization,
  folding, and localization: an improved R-hat", Bayesian Analysis 16(2)).
* ``fit_chains(estimator, X, n_chains)``: independent fits (clones with seeds spawned from the
  estimator's ``random_state``), aligned to the first, with R-hat and ESS of scalar
  summaries of their topic samples: each topic's entropy and, with ``X_heldout``, the
  held-out log likelihood per token.

Chains are separate fits rather than an ``n_chains`` parameter of ``LDA``: a fit is one
resumable chain (its state, transaction, checkpoints and warm starts are one chain's), and
independent chains share nothing, so clones run them without touching that machinery.
"""
from typing import NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.special import ndtri
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from .. import metrics
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


def _split(draws):
    """(M, N) draws as (2M, N // 2) half-chains (the middle draw of an odd N dropped)."""
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim != 2 or draws.shape[1] < 4:
        raise ValueError(f"draws must be (n_chains, n_draws) with n_draws >= 4, got shape "
                         f"{draws.shape}")
    if not np.isfinite(draws).all():
        raise ValueError("draws must be finite")
    half = draws.shape[1] // 2
    return np.concatenate([draws[:, :half], draws[:, -half:]])


def _rank_normalise(draws):
    """Normal scores of the pooled ranks: ``Phi^-1((r - 3/8) / (S + 1/4))`` (Vehtari et al.
    2021, eq. 14), average ranks for ties."""
    ranks = rankdata(draws, method="average").reshape(draws.shape)
    return ndtri((ranks - 0.375) / (draws.size + 0.25))


def _variances(chains):
    """(W, var_plus): the mean within-chain variance and the pooled estimate
    ``(N - 1) / N W + B / N`` of the (M, N) ``chains``."""
    n = chains.shape[1]
    within = chains.var(axis=1, ddof=1).mean()
    between = n * chains.mean(axis=1).var(ddof=1)
    return within, (n - 1) / n * within + between / n


def _rhat(chains):
    within, var_plus = _variances(chains)
    return float(np.sqrt(var_plus / within)) if within > 0 else (
        1.0 if var_plus == 0 else float("inf"))


def split_rhat(draws):
    """Rank-normalised split-R-hat of draws (n_chains, n_draws), n_draws >= 4: the larger of
    the bulk R-hat (rank-normalised half-chains) and the tail R-hat (the same of the draws
    folded about their median), Vehtari et al. 2021, Section 4.2. About 1 when the chains
    mix; they suggest requiring < 1.01."""
    chains = _split(draws)
    folded = np.abs(chains - np.median(chains))
    return max(_rhat(_rank_normalise(chains)), _rhat(_rank_normalise(folded)))


def _autocovariance(chains):
    """(M, N) autocovariances of each chain at lags 0 .. N - 1 (by FFT, biased: divided by
    N)."""
    n = chains.shape[1]
    centred = chains - chains.mean(axis=1, keepdims=True)
    spectrum = np.fft.rfft(centred, n=2 * n, axis=1)
    return np.fft.irfft(spectrum * np.conj(spectrum), n=2 * n, axis=1)[:, :n] / n


def bulk_ess(draws):
    """Bulk effective sample size of draws (n_chains, n_draws), n_draws >= 4: the ESS of the
    rank-normalised half-chains, ``M N / tau`` with the autocorrelations combined across
    chains and truncated by Geyer's initial monotone sequence (Vehtari et al. 2021,
    Section 3.2 and eq. 10)."""
    chains = _rank_normalise(_split(draws))
    m, n = chains.shape
    within, var_plus = _variances(chains)
    if var_plus == 0:
        return float(m * n)
    rho = 1.0 - (within - _autocovariance(chains).mean(axis=0)) / var_plus
    rho[0] = 1.0
    pairs = rho[:n - n % 2].reshape(-1, 2).sum(axis=1)      # Geyer's P_k = rho_2k + rho_2k+1
    ends = np.flatnonzero(pairs <= 0)
    pairs = pairs[:ends[0] if ends.size else len(pairs)]
    pairs = np.minimum.accumulate(pairs)                     # initial monotone sequence
    tau = max(-1.0 + 2.0 * pairs.sum(), 1.0 / np.log10(m * n))
    return float(m * n / tau)


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
