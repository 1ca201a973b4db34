"""Word-anchored splits: the births that end a minibatch sampler's pilot and, on short rows,
the exact chain's warm-up.

On short rows the pilot's exact chain leaves small clusters merged into larger ones: a split
proposal launched from two random rows of a component, and refined by restricted Gibbs scans,
collapses onto one side (a row of six words says too little to pull others away from the
component that holds most of the block), so a true cluster of a few hundred rows inside one of
thousands is rarely proposed. A cluster of text rows is marked by words that its rows hold and
its host's rarely do. ``anchored_splits`` tries, in each component of at least
``ANCHOR_MIN_ROWS`` rows, the split of the rows that hold a word against the rest, for the
``ANCHOR_WORDS`` words held by the most of its rows within ``ANCHOR_ROW_SHARES``, each refined by
``ANCHOR_SCANS`` restricted Gibbs scans (``_ext._split_merge.restricted_scans``), and makes the
best of them if it raises the joint density of the allocations and the rows, components and
sticks integrated out (``split_merge.log_labelled_prior_change`` plus the sides' Dirichlet-
multinomials less the block's); the two new components are tried again, until no component
gains. These are greedy moves, as a memoized variational method's births (Hughes & Sudderth
2013): they end the pilot, which starts the chain, or the exact chain's warm-up, and are not
a step of a chain that samples the posterior ("Word-anchored splits" in
docs/benchmarks/dp.rst).
"""
from time import perf_counter

import numpy as np

from .defaults import ANCHOR_MIN_ROWS, ANCHOR_ROW_SHARES, ANCHOR_SCANS, ANCHOR_WORDS
from .split_merge import SplitMerge, _Blocks, log_labelled_prior_change

__all__ = ["anchored_splits"]


def anchored_splits(X, z, base, alpha, rng, deadline=None):
    """Split the components of the allocations ``z`` (int64 (n,), labels of the CSR count rows
    X, written in place) by word-anchored splits while one raises the joint density
    (module docstring) under Dirichlet(``base``) components and concentration ``alpha``;
    ``rng`` (a numpy Generator) draws each split's pair of rows and its scans' uniforms;
    ``deadline`` (a ``perf_counter`` time, or None): no component is tried after it. A split
    gives its new side the label after the last occupied one. Returns the number of splits
    made."""
    move = SplitMerge(X, base, scans=ANCHOR_SCANS)
    blocks = _Blocks(z)
    move.screen.set_all(blocks.order, blocks.bounds)
    queue = sorted((label for label, rows in blocks.rows.items() if rows.size >= ANCHOR_MIN_ROWS),
                   key=lambda label: (-blocks.rows[label].size, label))
    made = 0
    while queue and (deadline is None or perf_counter() < deadline):
        label = queue.pop(0)
        best = _best_split(move, blocks, label, alpha, rng)
        if best is not None:
            moved, target = best
            blocks.move(z, moved, target, label)
            for changed in (label, target):
                move.screen.set(changed, blocks.rows[changed])
                if blocks.rows[changed].size >= ANCHOR_MIN_ROWS:
                    queue.append(changed)
            made += 1
    return made


def _best_split(move, blocks, label, alpha, rng):
    """(rows moved (sorted), their new label) of the anchored split of component ``label``
    that raises the joint density most, or None when none raises it."""
    rows = blocks.rows[label]
    X = move.X[rows]
    held = np.bincount(X.indices, minlength=X.shape[1])     # rows holding each word
    low, high = ANCHOR_ROW_SHARES[0] * rows.size, ANCHOR_ROW_SHARES[1] * rows.size
    by_rows = np.argsort(-held, kind="stable")
    words = by_rows[(held[by_rows] >= low) & (held[by_rows] <= high)][:ANCHOR_WORDS]
    entry_rows = np.repeat(np.arange(rows.size), np.diff(X.indptr))
    target = int(blocks.labels_to_choose[-1])
    block_marginal = move.screen.log_marginal(label)
    best_gain, best = 0.0, None
    for word in words.tolist():
        holds = np.zeros(rows.size, dtype=bool)
        holds[entry_rows[X.indices == word]] = True
        without, with_ = np.flatnonzero(~holds), np.flatnonzero(holds)
        i = int(rows[without[rng.integers(without.size)]])
        k = int(rows[with_[rng.integers(with_.size)]])
        kept = (rows != i) & (rows != k)
        others, side = rows[kept], holds[kept].astype(np.int8)  # the launch: the word's rows
        _, marginals = move.scan_pass(i, k, others, side, None,  # on k's side
                                      rng.random((ANCHOR_SCANS, others.size)))
        n_moved = 1 + int(np.count_nonzero(side))
        gain = (marginals.sum() - block_marginal
                + log_labelled_prior_change(blocks.occupancy, blocks.rows_from, alpha, label,
                                            target, n_moved))
        if gain > best_gain:
            best_gain, best = gain, (np.sort(np.concatenate([[k], others[side == 1]])), target)
    return best
