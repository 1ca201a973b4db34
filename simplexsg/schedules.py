"""Step-size schedules: callables mapping the step counter t = 0, 1, ... to a step size h_t > 0."""
from dataclasses import dataclass

from ._validation import check_positive_scalar


@dataclass(frozen=True)
class Constant:
    """h_t = h."""

    h: float

    def __post_init__(self):
        check_positive_scalar("h", self.h)

    def __call__(self, t):
        return float(self.h)


@dataclass(frozen=True)
class Polynomial:
    """h_t = h (1 + t / tau)^(-kappa), the decreasing schedule of Patterson & Teh and Baker et al."""

    h: float
    tau: float = 1.0
    kappa: float = 0.0

    def __post_init__(self):
        check_positive_scalar("h", self.h)
        check_positive_scalar("tau", self.tau)
        if not 0 <= self.kappa <= 1:
            raise ValueError(f"kappa must lie in [0, 1], got {self.kappa}")

    def __call__(self, t):
        return float(self.h * (1.0 + t / self.tau) ** (-self.kappa))


def as_schedule(step_size, name="step_size"):
    """A schedule for ``step_size``: a positive float becomes ``Constant``; a schedule passes."""
    if callable(step_size):
        return step_size
    return Constant(check_positive_scalar(name, step_size))
