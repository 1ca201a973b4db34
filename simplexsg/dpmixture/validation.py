"""The DP mixture's parameters checked the scikit-learn way, once at the start of ``fit`` and
``partial_fit`` (``check_params``): first ``CONSTRAINTS`` (the estimator's
``_parameter_constraints``, checked by scikit-learn's ``_validate_params``: an
``InvalidParameterError`` naming the parameter), then what constraints cannot state (a bool
for a number, the pair ``alpha_prior``, ``checkpoint_every`` with its path, ``n_jobs=0``), each
message naming the parameter, then the defaults (``simplexsg.dpmixture.defaults``)."""
import os
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._validation import (POSITIVE, check_checkpoint, check_n_jobs, check_positive_scalar,
                           int_from, validate_params)
from ..schedules import as_schedule
from .defaults import (SAMPLER_DEFAULTS, Params, auto_sampler, default_max_iter,
                       resolve_split_merge, resolve_tol)

#: ``DPMixture._parameter_constraints``.
CONSTRAINTS = {
    "sampler": [StrOptions({"auto", *SAMPLER_DEFAULTS})],
    "base_concentration": [POSITIVE],
    "alpha_prior": ["array-like"],               # a pair (shape, rate): check_params
    "initial_components": [int_from(1)],
    "batch_size": [int_from(1)],
    "step_size": [POSITIVE, callable, None],    # a number or a schedule
    "stick_step_size": [POSITIVE, callable, None],
    "max_iter": [int_from(1), None],
    "max_time": [POSITIVE, None],
    "tol": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"}), None],
    "n_iter_no_change": [int_from(1)],
    "total_samples": [int_from(1), None],
    "warm_start": ["boolean"],
    "checkpoint_every": [int_from(1), None],    # with checkpoint_path: check_params
    "checkpoint_path": [str, os.PathLike, None],
    "n_jobs": [Integral, None],                  # not 0: check_params
    "random_state": [int_from(0), np.random.RandomState, np.random.SeedSequence,
                     np.random.Generator, None],
    "verbose": ["verbose"],
    "evaluate_every": [int_from(0)],
    "split_merge": ["boolean", StrOptions({"auto"}), int_from(0)],
    "restricted_scans": [int_from(0)],
    "init": [StrOptions({"pilot", "random"})],
    "init_rows": [int_from(1), None],
    "shuffle_buffer": [int_from(0), None],
    "client": [None, HasMethods(["submit", "gather"])],
}


def check_params(estimator, n_rows=None, continuing=False, n_entries=None):
    """Validate the parameters of ``estimator`` (a ``DPMixture``); return them resolved
    (``Params``), with the sampler of "auto" resolved for a data set of ``n_rows`` rows and
    ``n_entries`` stored counts (None: a stream of minibatches, ``partial_fit``), or the
    chain's own (``sampler_``) when ``continuing``. Raises ``InvalidParameterError`` (a
    ValueError and a TypeError), ValueError or TypeError naming the parameter; changes
    nothing."""
    validate_params(estimator)
    try:
        a, b = estimator.alpha_prior
    except (TypeError, ValueError):
        raise ValueError("alpha_prior must be a pair (shape, rate), "
                         f"got {estimator.alpha_prior!r}") from None
    alpha_shape = check_positive_scalar("alpha_prior shape", a)
    alpha_rate = check_positive_scalar("alpha_prior rate", b)
    n_jobs = check_n_jobs(estimator.n_jobs)
    checkpoint_every = check_checkpoint(estimator.checkpoint_every, estimator.checkpoint_path)
    # the defaults (simplexsg.dpmixture.defaults)
    sampler = estimator.sampler if estimator.sampler != "auto" else auto_sampler(
        n_rows, n_entries, getattr(estimator, "sampler_", None) if continuing else None)
    tol = resolve_tol(estimator.tol, sampler)
    max_iter = (default_max_iter(sampler, estimator.tol) if estimator.max_iter is None
                else int(estimator.max_iter))
    default, steps = SAMPLER_DEFAULTS[sampler], {}
    if default["cls"] is not None:       # the step sizes, in this order
        for name in ("step_size", "stick_step_size"):
            value = getattr(estimator, name)
            steps[name] = as_schedule(default[name] if value is None else value, name)

    def optional(name, convert=int):
        value = getattr(estimator, name)
        return None if value is None else convert(value)

    return Params(
        sampler=sampler, init=estimator.init, warm_start=bool(estimator.warm_start),
        base=float(estimator.base_concentration), alpha_shape=alpha_shape,
        alpha_rate=alpha_rate, initial_components=int(estimator.initial_components),
        batch_size=int(estimator.batch_size), max_iter=max_iter,
        max_time=optional("max_time", float), tol=tol,
        n_iter_no_change=int(estimator.n_iter_no_change), n_jobs=n_jobs,
        evaluate_every=int(estimator.evaluate_every),
        split_merge=resolve_split_merge(estimator.split_merge),
        restricted_scans=int(estimator.restricted_scans),
        shuffle_buffer=optional("shuffle_buffer"), init_rows=optional("init_rows"),
        total_samples=optional("total_samples"), checkpoint_every=checkpoint_every,
        **steps)
