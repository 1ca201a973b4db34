"""The LDA estimator's parameters checked the scikit-learn way, once at the start of ``fit`` and
``partial_fit`` (``check_params``): first ``CONSTRAINTS`` (the estimators'
``_parameter_constraints``, checked by scikit-learn's ``_validate_params``: an
``InvalidParameterError`` naming the parameter), then what constraints cannot state (checks
between parameters or against the estimator's class, each message naming the parameters), then
the defaults (``simplexsg.lda.defaults.resolve_params``)."""
import os
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._validation import check_checkpoint, check_n_jobs, int_from, validate_params
from .alpha_priors import GammaPrior
from ..schedules import Polynomial
from .defaults import MIN_STEP_SIZE, SAMPLER_DEFAULTS, resolve_params


_POSITIVE = Interval(Real, 0, None, closed="neither")

#: ``LDA._parameter_constraints``.
CONSTRAINTS = {
    "n_components": [int_from(1)],
    "sampler": [StrOptions(set(SAMPLER_DEFAULTS))],
    "doc_topic_prior": [_POSITIVE, None],
    "topic_word_prior": [_POSITIVE, None],
    "batch_size": [int_from(1), None],
    "step_size": [_POSITIVE, None],
    "step_offset": [_POSITIVE, None],
    "step_decay": [Interval(Real, 0, 1, closed="both"), None],
    "n_gibbs": [int_from(1)],
    "gibbs_burn_in": [int_from(0), None],
    "max_iter": [int_from(1), None],
    "burn_in": [int_from(0), None],
    "total_samples": [int_from(1), None],
    "local_topics": [StrOptions({"mean", "sample"})],
    "rao_blackwell": ["boolean"],
    "learn_doc_topic_prior": ["boolean", StrOptions({"symmetric", "per_topic"})],
    "doc_topic_prior_prior": ["array-like"],
    "local_warm_start": ["boolean"],
    "max_time": [_POSITIVE, None],
    "tol": [Interval(Real, 0, 1, closed="left"), None],
    "n_iter_no_change": [int_from(1)],
    "shuffle_buffer": [int_from(0), None],
    "dtype": "no_validation",          # check_params: whatever numpy reads as float32 or float64
    "warm_start": "no_validation",     # check_params, in the words of the other estimators
    "checkpoint_every": [int_from(1), None],
    "checkpoint_path": [str, os.PathLike, None],
    "n_jobs": [Integral, None],
    "client": [None, HasMethods(["submit", "gather"])],
    "random_state": [int_from(0), np.random.RandomState, np.random.SeedSequence,
                     np.random.Generator, None],
    "verbose": ["verbose"],
    "evaluate_every": [int_from(-1)],
    "n_topic_samples": [int_from(0)],
}


def check_params(estimator):
    """Validate the parameters of ``estimator`` (an ``LDA``); return them resolved, as the
    training reads them (``simplexsg.lda.training.Trainer``'s ``params``). Raises
    ``InvalidParameterError`` (a ValueError and a TypeError) or ValueError naming the
    parameter; changes nothing."""
    params = validate_params(estimator)
    name_of = type(estimator).__name__
    fixed = getattr(type(estimator), "_fixed_sampler", None)
    if fixed is not None and params["sampler"] != fixed:
        raise ValueError(f"{name_of} samples with {fixed!r}; use "
                         f"LDA(sampler={params['sampler']!r}) for another sampler")
    resolved = resolve_params(params)
    n_gibbs, gibbs_burn_in = int(params["n_gibbs"]), resolved["gibbs_burn_in"]
    if gibbs_burn_in >= n_gibbs:
        raise ValueError(f"gibbs_burn_in ({gibbs_burn_in}) must be < n_gibbs ({n_gibbs})")
    if resolved["step_size"] < MIN_STEP_SIZE:
        raise ValueError(f"step_size must be at least {MIN_STEP_SIZE:g}, got "
                         f"{resolved['step_size']}: SCIR's Poisson rate theta e^-h / (1 - e^-h) "
                         "would overflow")
    if params["n_topic_samples"] == 1:
        raise ValueError("n_topic_samples must be 0 or at least 2: a standard deviation needs "
                         "two samples")
    try:
        dtype = np.dtype(params["dtype"])
    except TypeError:
        dtype = None
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be numpy.float64 or numpy.float32, got {params['dtype']!r}")
    if not isinstance(params["warm_start"], (bool, np.bool_)):
        raise ValueError(f"warm_start must be True or False, got {params['warm_start']!r}")
    if params["client"] is not None and params["local_warm_start"]:
        raise ValueError("local_warm_start keeps each token's topic between visits; with a "
                         "client that state would live on the workers and be lost with one: "
                         "use local_warm_start=False (the default)")
    prior = params["doc_topic_prior_prior"]
    if len(prior) != 2:
        raise ValueError("doc_topic_prior_prior must be a pair (shape, rate) of a Gamma prior on "
                         f"alpha, got {prior!r}")
    try:
        alpha_prior = GammaPrior(*prior)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"doc_topic_prior_prior (shape, rate): {exc}") from None

    def optional(name, convert=int):
        return None if params[name] is None else convert(params[name])

    return dict(
        n_components=int(params["n_components"]), alpha=resolved["alpha"],
        beta=resolved["beta"], n_gibbs=n_gibbs, gibbs_burn_in=gibbs_burn_in,
        schedule=Polynomial(resolved["step_size"], resolved["step_offset"],
                            resolved["step_decay"]),
        learn_alpha=resolved["learn_alpha"], alpha_prior=alpha_prior, dtype=dtype,
        n_jobs=check_n_jobs(params["n_jobs"]),
        evaluate_every=max(0, int(params["evaluate_every"])),
        n_iter_no_change=int(params["n_iter_no_change"]),
        n_topic_samples=int(params["n_topic_samples"]),
        max_time=optional("max_time", float), tol=optional("tol", float),
        checkpoint_every=check_checkpoint(params["checkpoint_every"], params["checkpoint_path"]),
        checkpoint_path=params["checkpoint_path"],
        **{name: bool(params[name]) for name in ("rao_blackwell", "local_warm_start",
                                                  "warm_start")},
        **{name: optional(name) for name in ("batch_size", "max_iter", "burn_in",
                                             "total_samples", "shuffle_buffer")})
