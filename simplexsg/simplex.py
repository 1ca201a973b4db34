"""SCIR and SGRLD steps for simplex parameters held as positive "gamma" variables.

State convention: ``theta`` is a positive array of shape ``(..., d)``; the simplex value is its
normalisation along the last axis, ``to_simplex(theta)``. Each row targets
``Dirichlet(prior + counts)``, where ``counts`` are estimated full-data counts
(N/n times the minibatch counts), of ``theta``'s shape.

Step-size convention: ``h`` is the diffusion time of one step of
``d theta = (a - theta) dt + sqrt(2 theta) dW`` (the CIR process whose stationary law is
Gamma(a, 1)). SCIR simulates that time exactly; SGRLD takes one Euler step of the same length,
i.e. drift ``h * (...)`` and noise variance ``2 h theta``. This is the ``epsilon`` of the SCIR
authors' code and ``epsilon / 2`` of Patterson & Teh (2013). In Welling & Teh's convention
(drift ``h/2 * grad``, noise variance ``h``) it is ``h_WT = 2 h``; ``simplexsg.sgmcmc`` uses
this h.
"""
import numpy as np

from ._ext._bitgen import bitgen_addresses
from ._ext._simplex import FLOOR_VALUE, scir_rows, sgrld_rows
from ._random import check_generator
from ._validation import check_nonnegative
from .schedules import as_schedule

#: Smallest value a sampler returns: the smallest normal double. See ``_ext/_simplex.pyx``.
FLOOR = FLOOR_VALUE
#: Coordinates per random stream of ``scir_transition`` (the unit of its parallelism).
STREAM_BLOCK = 1 << 16
# The Poisson rate theta e^-h / (1 - e^-h) must stay far below numpy's Poisson limit (~9e18).
_MAX_POISSON_RATE = 1e17


def to_simplex(theta):
    """Normalise ``theta`` (..., d) along its last axis: the simplex value."""
    theta = np.asarray(theta, dtype=np.float64)
    return theta / theta.sum(axis=-1, keepdims=True)


def _row_streams(rng, n_rows, d):
    """Bit generators for the rows of an (n_rows, d) array, and rows per generator: up to
    ``STREAM_BLOCK`` coordinates draw from ``rng``'s bit generator; more are cut into blocks of
    rows of about that size, each drawing from a PCG64 seeded by ``rng``, so that ``n_jobs``
    threads can run the blocks without changing the result."""
    rows_per_block = max(1, STREAM_BLOCK // d)
    n_blocks = max(1, -(-n_rows // rows_per_block))
    streams = ([rng.bit_generator] if n_blocks == 1 else
               [np.random.PCG64(seed) for seed in rng.integers(2 ** 63, size=n_blocks)])
    return streams, rows_per_block


def scir_transition(theta, shape, h, random_state=None, n_jobs=1):
    """Exact CIR transition over time ``h`` of every coordinate, with CIR parameter ``shape``.

    ``theta`` (..., d) >= 0 and ``shape`` (same shape) > 0 are trusted (see ``SCIR.step`` for the
    checked entry point). Returns a new array; see the module docstring of ``_ext/_simplex.pyx``
    for the log-space draw and the floor applied to tiny values. Randomness: ``_row_streams``.
    """
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    rate = np.exp(-h) / -np.expm1(-h)
    if theta.size and theta.max() * rate > _MAX_POISSON_RATE:
        raise ValueError(f"step size h={h} is too small for theta up to {theta.max():.3g}: the "
                         "CIR Poisson rate theta*exp(-h)/(1-exp(-h)) exceeds 1e17")
    d = theta.shape[-1] if theta.ndim else 1
    rows = theta.reshape(-1, d)
    rng = check_generator(random_state)
    streams, rows_per_block = _row_streams(rng, rows.shape[0], d)
    out = np.empty_like(theta)
    with rng.bit_generator.lock:
        scir_rows(rows, np.ascontiguousarray(shape, dtype=np.float64).reshape(-1, d), float(h),
                  bitgen_addresses(streams), rows_per_block, out.reshape(-1, d), n_jobs)
    return out


def sgrld_transition(theta, prior, counts, h, random_state=None, n_jobs=1):
    """One expanded-mean SGRLD step (Patterson & Teh 2013) of every row, mirrored at 0.

    ``theta <- |theta + h (prior - theta + counts - n * phi) + sqrt(2 h theta) xi|``, with
    ``phi = to_simplex(theta)``, ``n = counts.sum(-1)`` and ``xi ~ N(0, I)``; values are floored
    at ``FLOOR`` so that no row becomes all-zero. The Cython kernel (``_ext/_simplex.pyx``) is
    also the SGRLD move of LDA's fused global step. Randomness: ``_row_streams``.
    """
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    d = theta.shape[-1]
    rows = theta.reshape(-1, d)
    counts = np.broadcast_to(np.asarray(counts, dtype=np.float64), theta.shape).reshape(-1, d)
    shape = np.ascontiguousarray(np.broadcast_to(prior, theta.shape), dtype=np.float64)
    rng = check_generator(random_state)
    streams, rows_per_block = _row_streams(rng, rows.shape[0], d)
    out = np.empty_like(theta)
    with rng.bit_generator.lock:
        sgrld_rows(rows, shape.reshape(-1, d) + counts, counts.sum(axis=1), float(h),
                   bitgen_addresses(streams), rows_per_block, out.reshape(-1, d), n_jobs)
    return out


class _SimplexSampler:
    """Shared validation, schedule and step counter of the simplex samplers.

    ``step_size`` is a float > 0 or a schedule from ``simplexsg.schedules`` (a callable of the
    step counter ``t``); a number is checked here, at construction (``ValueError`` naming
    ``step_size`` if it is not finite and > 0, ``TypeError`` if it is not a number), a schedule's
    values at each step. ``t`` counts the steps taken and advances with each ``step``.
    ``n_jobs``: threads for large arrays (SCIR); the result does not depend on it.
    """

    def __init__(self, step_size=0.1, n_jobs=1):
        as_schedule(step_size, "step_size")
        self.step_size = step_size
        self.n_jobs = n_jobs
        self.t = 0

    def step_size_at(self, t):
        """The step size h_t the schedule gives at step ``t``."""
        h = as_schedule(self.step_size)(t)
        if not np.isfinite(h) or h <= 0:
            raise ValueError(f"step_size must be > 0 and finite; the schedule gave {h} at t={t}")
        return h

    def step(self, theta, prior, counts, random_state=None):
        """Advance ``theta`` (..., d) by one step towards Dirichlet(prior + counts) per row.

        ``prior`` (Dirichlet parameter, > 0) is a scalar or broadcasts to ``theta``; ``counts``
        (>= 0, estimated full-data counts) has ``theta``'s shape. ``random_state``: pass one
        ``numpy.random.Generator`` to every step of a chain. Returns a new array and advances
        ``t``; raises ``ValueError`` naming the argument on bad input, leaving ``t`` unchanged.
        """
        theta = check_nonnegative("theta", theta)
        prior = check_nonnegative("prior", prior, strictly_positive=True)
        counts = check_nonnegative("counts", counts)
        if theta.ndim == 0 or theta.shape[-1] == 0:
            raise ValueError(f"theta must have a non-empty last axis, got shape {theta.shape}")
        if counts.shape != theta.shape:
            raise ValueError(f"counts has shape {counts.shape}, theta has shape {theta.shape}")
        try:
            prior = np.broadcast_to(prior, theta.shape)
        except ValueError:
            raise ValueError(f"prior of shape {prior.shape} does not broadcast to theta's "
                             f"shape {theta.shape}") from None
        new = self.advance(theta, prior, counts, self.t, random_state)
        self.t += 1
        return new

    def advance(self, theta, prior, counts, t, random_state=None):
        """``step`` at step ``t`` of the schedule without its checks, for callers whose arrays
        are the sampler's own (a chain's state and counts, e.g. the DP mixture's components):
        ``theta`` (..., d) float64 >= 0, ``prior`` > 0 broadcasting to it, ``counts`` >= 0 of
        its shape, trusted; ``t`` is not advanced. Checking every coordinate of a large state
        at each step costs as much as part of the step. Returns a new array; ``ValueError``
        for a schedule's bad value at ``t``."""
        return self._transition(theta, prior, counts, self.step_size_at(t), random_state)

    def __repr__(self):
        return f"{type(self).__name__}(step_size={self.step_size!r}, n_jobs={self.n_jobs!r})"


class SCIR(_SimplexSampler):
    """Stochastic Cox-Ingersoll-Ross sampler (Baker, Fearnhead, Fox & Nemeth 2018).

    Each coordinate follows the exact CIR transition over time h_t with parameter
    ``a_hat = prior + counts``, so there is no discretisation error; with exact counts the
    chain's stationary law is Gamma(a, 1) per coordinate and Dirichlet(a) on the simplex.
    """

    def _transition(self, theta, prior, counts, h, random_state):
        return scir_transition(theta, prior + counts, h, random_state, self.n_jobs)


class SGRLD(_SimplexSampler):
    """Stochastic gradient Riemannian Langevin dynamics, expanded-mean parameterisation
    (Patterson & Teh 2013), with the same step-size convention as SCIR (module docstring).
    """

    def _transition(self, theta, prior, counts, h, random_state):
        if (theta.sum(axis=-1) <= 0).any():
            raise ValueError("theta has a row that sums to 0; SGRLD needs a positive row sum")
        return sgrld_transition(theta, prior, counts, h, random_state, self.n_jobs)
