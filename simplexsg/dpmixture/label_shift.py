"""Label shifts for the exact sampler of the DP mixture: a component moves to the nearest empty
label below or above it, by Metropolis-Hastings on the labelled allocations z with the sticks
integrated out, as the split-merge moves (``split_merge``).

Stick-breaking weights are not exchangeable, so a chain on labelled allocations must also move
components between labels (label-switching moves: Papaspiliopoulos & Roberts 2008; Hastie,
Liverani & Richardson 2015). The split-merge moves cannot do it for a component far above the
others: a merge must leave its label within reach of the reverse split, among the empty labels
below the last occupied one and that one. On long rows a component of one row drawn given that
row is the one the row fits best, so its row does not leave it either; it stays at its high
label, with empty labels below it that inflate alpha, for thousands of sweeps
(docs/benchmarks/dp.rst, "Label shifts").

One proposal: down or up, with probability 1/2 each, for a component drawn uniformly among the
K occupied ones (at label c); down: to the largest empty label below c (none: no move); up: to
the smallest empty label above c. Down from c to b and up from b to c are each other's reverse
(the labels between them are occupied in both states) and K is the same in both, so the
proposal is symmetric, and the move is accepted with probability min(1, p(z') / p(z)), p the
labelled prior: the components' marginal likelihoods do not depend on their labels.
"""
import numpy as np

from .._ext._split_merge import shift_labels_in_place
from .split_merge import rows_from_label

__all__ = ["shift_labels"]


def shift_labels(z, alpha, rng, n_proposals):
    """``n_proposals`` label shifts (module docstring) on the labelled allocations z (int64,
    in place) at concentration ``alpha``; returns how many were accepted. A count that z does
    not decide keeps p(z | alpha, X) invariant. Three uniforms a proposal, drawn at once; the
    proposals run in the kernel ``shift_labels_in_place``."""
    n_labels = int(z.max()) + 2                    # room for a shift up past them
    occupancy = np.bincount(z, minlength=n_labels + n_proposals)   # and for a label a shift
    before = np.arange(occupancy.size)             # the label before of each label now
    down, picks, log_u = (rng.random(n_proposals) < 0.5, rng.random(n_proposals),
                          np.log(rng.random(n_proposals)))
    accepted, _ = shift_labels_in_place(occupancy, rows_from_label(occupancy),
                                        np.flatnonzero(occupancy), before, n_labels, alpha,
                                        down.view(np.uint8), picks, log_u)
    if accepted:
        label_of = np.empty_like(before)           # the inverse: the label now of each before
        label_of[before] = np.arange(before.size)
        z[:] = label_of[z]
    return accepted
