"""The sampling driver: ``sample(model, data, estimator, integrator, n_iter)``."""
import dataclasses
import time
from typing import Optional

import numpy as np

from .._random import check_generator
from .._validation import check_finite, check_int
from .integrators import LangevinState

__all__ = ["SampleResult", "SampleProgress", "sample", "check_theta0"]


@dataclasses.dataclass(frozen=True, eq=False)
class SampleResult:
    """Output of ``sample``.

    chain : (n_kept, d) or (n_kept, n_chains, d)
        theta after steps thin, 2 thin, ..., n_kept * thin (n_kept = n_iter // thin); the
        starting point is not included.
    gradients : same shape as chain, or None
        The estimator's estimate of grad log posterior at each kept state (the estimate used by
        the following step; one extra estimate for the last step), if ``store_gradients``.
    seconds : float
        Wall time of ``sample``, including the estimator's setup (e.g. the full gradient at a
        control variate's centre).
    state : LangevinState
        The final state (pass it as ``theta0`` to continue the chains).
    """
    chain: np.ndarray
    gradients: Optional[np.ndarray]
    seconds: float
    state: LangevinState


def check_theta0(theta0, d):
    theta0 = check_finite("theta0", theta0)
    if theta0.ndim not in (1, 2) or theta0.shape[-1] != d:
        raise ValueError(f"theta0 must have shape ({d},) or (n_chains, {d}), got {theta0.shape}")
    return theta0.copy()


def sample(model, data, estimator, integrator, n_iter, *, theta0=None, random_state=None,
           store_gradients=False, thin=1, verbose=0, resume=None, checkpoint=None,
           checkpoint_every=None):
    """Run ``n_iter`` steps of ``integrator`` driven by ``estimator``; returns ``SampleResult``.

    ``theta0``: (d,) for one chain or (n_chains, d) for independent chains run together; by
    default the estimator's centre (``ControlVariateGradient``) or zeros. Pass a previous
    result's ``state`` to continue its chains (with SGHMC's momentum; a step-size schedule
    restarts at t = 0). ``random_state``: None, int, SeedSequence or Generator
    (``simplexsg._random.check_generator``); the output is a function of it and the inputs.
    ``thin``: keep every ``thin``-th state. ``verbose`` > 0 shows a tqdm progress bar (extra
    ``simplexsg[progress]``). Step sizes follow ``simplexsg.sgmcmc``'s convention. Bad input
    raises ValueError/TypeError naming the argument.

    Interruption: an exception inside the loop (Ctrl-C included) carries the run's
    ``SampleProgress`` after its last completed step as ``exc.sample_progress``; ``sample``
    with the same arguments and ``resume=progress`` finishes the run bit for bit as if it had
    not stopped. ``checkpoint(progress)`` is called every ``checkpoint_every`` steps.
    """
    start = time.perf_counter()
    data = model.check_data(data)
    n_iter = check_int("n_iter", n_iter, 1)
    thin = check_int("thin", thin, 1)
    if thin > n_iter:
        raise ValueError(f"thin={thin} exceeds n_iter={n_iter}: no state would be kept")
    d = model.n_params(data)
    rng = check_generator(random_state)
    steps = integrator.step_sizes(n_iter)
    estimator = estimator.prepare(model, data)
    momentum0 = aux0 = None
    if isinstance(theta0, LangevinState):
        theta0, momentum0, aux0 = theta0
    if theta0 is None:
        theta0 = getattr(estimator, "centre", None)
        theta0 = np.zeros(d) if theta0 is None else theta0
    theta = check_theta0(theta0, d)
    if momentum0 is not None:
        momentum0 = check_finite("momentum0", momentum0)
        if momentum0.shape != theta.shape:
            raise ValueError(f"the momentum of theta0 has shape {momentum0.shape}, theta has "
                             f"shape {theta.shape}")

    n_kept = n_iter // thin
    if checkpoint is not None:
        checkpoint_every = check_int("checkpoint_every", checkpoint_every, 1)
    if resume is None:
        chain = np.empty((n_kept,) + theta.shape)
        grads = np.empty_like(chain) if store_gradients else None
        state = integrator.init(theta, rng, momentum0)
        state = state._replace(aux=estimator.init_aux(model, data, theta, rng)
                               if aux0 is None else aux0)
        progress = (0, state, rng.bit_generator.state)
    else:
        chain, grads = resume.chain.copy(), None if resume.gradients is None else \
            resume.gradients.copy()
        if chain.shape != (n_kept,) + theta.shape or (grads is None) == store_gradients:
            raise ValueError("resume comes from a run with other n_iter, thin, chains or "
                             "store_gradients")
        state = resume.state
        rng.bit_generator.state = resume.rng_state
        progress = (resume.step, state, resume.rng_state)
    iterations = range(progress[0], n_iter)
    if verbose:
        from .._optional import tqdm
        iterations = tqdm()(iterations, desc=type(integrator).__name__, leave=False)
    try:
        for t in iterations:
            grad, aux = estimator.step_gradient(model, data, state, steps[t], integrator, rng)
            if store_gradients and t and t % thin == 0 and t // thin <= n_kept:
                grads[t // thin - 1] = grad
            state = integrator.step(state, grad, steps[t], rng)._replace(aux=aux)
            if not np.isfinite(state.theta).all():
                raise FloatingPointError(
                    f"the chain diverged at step {t}: its state is not finite with step size "
                    f"h = {steps[t]:.3g}; use a smaller step_size")
            if (t + 1) % thin == 0:
                chain[(t + 1) // thin - 1] = state.theta
            progress = (t + 1, state, rng.bit_generator.state)     # one atomic rebinding
            if checkpoint is not None and (t + 1) % checkpoint_every == 0:
                checkpoint(SampleProgress(*progress, chain, grads))
    except BaseException as exc:
        exc.sample_progress = SampleProgress(*progress, chain, grads)
        raise
    if store_gradients and n_kept * thin == n_iter:
        grads[-1] = estimator.step_gradient(model, data, state, steps[-1], integrator, rng)[0]
    return SampleResult(chain, grads, time.perf_counter() - start, state)


@dataclasses.dataclass(frozen=True, eq=False)
class SampleProgress:
    """Where an unfinished ``sample`` run stands: ``step`` steps completed, the integrator
    ``state`` and the generator's ``rng_state`` after them, and the ``chain`` and
    ``gradients`` arrays (rows of the steps completed are final). ``sample(...,
    resume=progress)`` finishes the run."""
    step: int
    state: LangevinState
    rng_state: dict
    chain: np.ndarray
    gradients: Optional[np.ndarray]
