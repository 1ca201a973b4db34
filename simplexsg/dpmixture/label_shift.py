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

from .split_merge import log_labelled_prior_change, rows_from_label

__all__ = ["shift_labels"]


def shift_labels(z, alpha, rng, n_proposals):
    """``n_proposals`` label shifts (module docstring) on the labelled allocations z (int64,
    in place) at concentration ``alpha``; returns how many were accepted. A count that z does
    not decide keeps p(z | alpha, X) invariant. Three uniforms a proposal, drawn at once."""
    occupancy = np.bincount(z, minlength=z.max() + 2)        # room for a shift up past them
    rows_from = rows_from_label(occupancy)
    occupied = np.flatnonzero(occupancy)
    before = np.arange(occupancy.size)             # the label before of each label now
    down, picks, log_u = (rng.random(n_proposals) < 0.5, rng.random(n_proposals),
                          np.log(rng.random(n_proposals)))
    accepted = 0
    for t in range(n_proposals):
        c = int(occupied[int(picks[t] * occupied.size)])
        step = -1 if down[t] else 1
        b = c + step
        while 0 <= b < occupancy.size and occupancy[b]:
            b += step
        if b < 0:
            continue
        if b == occupancy.size:                     # one past every label: grow by one
            occupancy, rows_from = np.append(occupancy, 0), np.append(rows_from, 0.0)
            before = np.append(before, b)
        n = occupancy[c]
        if log_u[t] >= log_labelled_prior_change(occupancy, rows_from, alpha, c, b, float(n)):
            continue
        accepted += 1
        occupancy[b], occupancy[c] = n, 0
        low, high = min(b, c), max(b, c)
        rows_from[low + 1:high + 1] += n if b > c else -n
        occupied[np.searchsorted(occupied, c)] = b
        occupied.sort()
        before[b], before[c] = before[c], before[b]
    if accepted:
        label_of = np.empty_like(before)           # the inverse: the label now of each before
        label_of[before] = np.arange(before.size)
        z[:] = label_of[z]
    return accepted
