"""The split-merge move of the DP mixture's exact sampler against the exact posterior of the
labelled allocations of a tiny data set, enumerated.

Five rows, labels 0..B-1 with B = 11, alpha = 0.5: a row's label is B or more with posterior
probability of order (alpha / (1 + alpha))^B = 6e-6, so the B^5 = 161,051 enumerated states
carry all but ~3e-5 of the mass. The enumeration is checked against the partition posterior of
``tests/helpers/dp_exact.py`` (the DP's exchangeable partition probabilities: an independent
formula).
"""
import itertools
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import betaln, gammaln
from scipy.stats import chi2
from sklearn.metrics import adjusted_rand_score

from simplexsg._ext._split_merge import (ComponentScreen, label_counts, log_pair_probability,
                                         pass_tables, restricted_scans, sequential_allocation,
                                         shift_labels_in_place)
from simplexsg.dpmixture import split_merge
from simplexsg.dpmixture.label_shift import shift_labels
from simplexsg.dpmixture.local import kernel_layout
from simplexsg.dpmixture.split_merge import (SplitMerge, log_labelled_prior,
                                             log_labelled_prior_change, rising_factorials,
                                             rows_from_label)

from helpers.dp_exact import BETA6, X6, exact_dp_posterior
from helpers.guards import hang_guard

X5, ALPHA, B = X6[:5], 0.5, 11
#: Draws from the exact posterior, each moved once; the chi-square test's level.
N_DRAWS, LEVEL = 60_000, 1e-3


def enumerate_labelled(X, alpha, base, n_labels):
    """Every labelled allocation with labels below ``n_labels`` (states, log-probabilities
    normalised over them), vectorised: stick factors B(1 + n_j, alpha + M_j) / B(1, alpha) and
    Dirichlet-multinomial blocks."""
    n, d = X.shape
    states = np.array(list(itertools.product(range(n_labels), repeat=n)))
    one_hot = np.eye(n_labels)[states]                          # (S, n, B)
    sizes = one_hot.sum(axis=1)                                 # (S, B)
    after = np.cumsum(sizes[:, ::-1], axis=1)[:, ::-1] - sizes  # rows with larger labels
    log_p = np.sum(betaln(1 + sizes, alpha + after) - betaln(1, alpha), axis=1)
    sums = np.einsum("snb,nd->sbd", one_hot, X)                 # (S, B, d) block counts
    log_p += np.sum(gammaln(d * base) - gammaln(d * base + sums.sum(axis=2))
                    + np.sum(gammaln(base + sums) - gammaln(base), axis=2), axis=1)
    return states, log_p - np.logaddexp.reduce(log_p)


@pytest.fixture(scope="module")
def labelled():
    return enumerate_labelled(X5, ALPHA, BETA6, B)


def state_number(z):
    """The index of the labelled allocation z among ``enumerate_labelled``'s states (their
    order is ``itertools.product``'s: z's labels as the digits of a number in base B), -1 for
    a label of B or more, outside the enumeration."""
    return int(np.ravel_multi_index(z, (B,) * z.size)) if z.max() < B else -1


def partition_key(state):
    """The set partition of a labelled state, as a sorted tuple of blocks."""
    blocks = {}
    for row, label in enumerate(state):
        blocks.setdefault(label, []).append(row)
    return tuple(sorted(tuple(block) for block in blocks.values()))


def test_enumeration_matches_the_partition_posterior(labelled):
    """Summing the labelled posterior over the labellings of each partition gives the partition
    posterior of the exchangeable partition probability function (to the truncation, 1e-4)."""
    states, log_p = labelled
    exact = exact_dp_posterior(X5, BETA6, ALPHA)
    summed = {}
    for state, p in zip(states, np.exp(log_p)):
        key = partition_key(state)
        summed[key] = summed.get(key, 0.0) + p
    for part, p in zip(exact.partitions, exact.partition_probs):
        assert summed[tuple(sorted(map(tuple, part)))] == pytest.approx(p, abs=1e-4)


def dirichlet_multinomial(counts, base):
    """log DirMult(counts | Dirichlet(base)) without the multinomial coefficient."""
    d = counts.size
    return (gammaln(d * base) - gammaln(d * base + counts.sum())
            + np.sum(gammaln(base + counts) - gammaln(base)))


@pytest.mark.parametrize("rows_a, rows_b", [([0, 1], [2, 4]), ([3], []), ([0, 2, 3], [1]),
                                             ([3], [1])])
def test_a_components_marginal_from_its_summed_counts(rows_a, rows_b):
    """A component's log marginal from the rows' summed counts is the Dirichlet-multinomial,
    one block or the union of two; a merge's gain from two components' summed counts
    (overlapping categories or not) is the union's Dirichlet-multinomial less each block's,
    whether the rising factorials come from the table or past its end; a component recorded
    again, or forgotten, is its new self."""
    X = np.array([[3, 0, 1, 0, 0, 2], [0, 0, 4, 1, 0, 0], [1, 1, 0, 0, 0, 5],
                  [0, 2, 0, 0, 7, 0], [2, 0, 0, 3, 1, 0]], dtype=np.float64)
    csr = sp.csr_array(X)
    sums = [X[rows].sum(axis=0) for rows in (rows_a, rows_b)]
    exact = dirichlet_multinomial(sums[0] + sums[1], BETA6)
    for table in (3, 100):            # counts past the table's end, and none
        screen = ComponentScreen(csr.indptr.astype(np.int64), csr.indices.astype(np.int64),
                                 csr.data, X.shape[1], BETA6, rising_factorials(BETA6, table))
        screen.set(7, np.array([4], dtype=np.int64))    # recorded, then replaced
        for label, rows in ((7, rows_a), (2, rows_b), (0, rows_a + rows_b)):
            if rows:
                screen.set(label, np.array(rows, dtype=np.int64))
        assert screen.log_marginal(0) == pytest.approx(exact, rel=1e-13)
        assert screen.log_marginal(7) == pytest.approx(dirichlet_multinomial(sums[0], BETA6),
                                                       rel=1e-13)
        if rows_b:       # a merge's gain: the union's marginal less each block's own
            gain = exact - sum(dirichlet_multinomial(v, BETA6) for v in sums)
            assert screen.merged_gain(7, 2) == pytest.approx(gain, rel=1e-12, abs=1e-12)
        screen.drop(7)
        with pytest.raises(KeyError, match="no component 7"):
            screen.log_marginal(7)


@pytest.mark.parametrize("seed", range(6))
def test_a_merges_gain_between_components_of_few_and_many_categories(seed):
    """Where one component holds 8 times the other's categories or more, the gain seeks the
    smaller's among the larger's instead of walking both: the same gain (the union's
    Dirichlet-multinomial less each block's), either way round, whether the small one's
    categories lie before, among or past the large one's."""
    rng = np.random.default_rng(seed)
    d = 300
    X = np.zeros((4, d))
    X[0, rng.choice(np.arange(40, 260), size=int(rng.integers(150, 220)), replace=False)] = (
        rng.integers(1, 30, size=1))[0] + rng.integers(0, 5, size=1)[0]
    X[0, X[0] > 0] += rng.integers(0, 9, size=np.count_nonzero(X[0]))
    X[1, rng.choice(d, size=int(rng.integers(1, 12)), replace=False)] = 2.0   # anywhere
    X[2, rng.choice(40, size=3, replace=False)] = 5.0                          # before
    X[3, 260 + rng.choice(40, size=4, replace=False)] = 1.0                    # past
    csr = sp.csr_array(X)
    screen = ComponentScreen(csr.indptr.astype(np.int64), csr.indices.astype(np.int64),
                             csr.data, d, BETA6, rising_factorials(BETA6, 64))
    for label in range(4):
        screen.set(label, np.array([label], dtype=np.int64))
    for small in (1, 2, 3):
        gain = (dirichlet_multinomial(X[0] + X[small], BETA6)
                - dirichlet_multinomial(X[0], BETA6) - dirichlet_multinomial(X[small], BETA6))
        assert screen.merged_gain(0, small) == pytest.approx(gain, rel=1e-12, abs=1e-9)
        assert screen.merged_gain(small, 0) == screen.merged_gain(0, small)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_every_component_recorded_at_once_is_each_recorded_alone(n_jobs):
    """``set_all`` on z's rows sorted by label records each occupied label as ``set`` does,
    on one thread or two (the same log marginals, totals and merge gains, to the bit), holds
    no label left empty, and forgets the components recorded before."""
    rng = np.random.default_rng(3)
    X = sp.random(300, 40, density=0.2, random_state=4, format="csr",
                  data_rvs=lambda n: rng.integers(1, 9, n)).astype(np.float64)
    z = rng.integers(0, 30, X.shape[0])
    z[z == 5] = 6                                     # a label left empty
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, X.shape[1], BETA6,
            rising_factorials(BETA6, 5))
    each, at_once = ComponentScreen(*args), ComponentScreen(*args)
    at_once.set(40, np.array([1, 2], dtype=np.int64))       # forgotten by set_all
    occupancy = np.bincount(z)
    order = np.argsort(z, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(occupancy)])
    at_once.set_all(order, bounds, n_jobs)
    labels = np.flatnonzero(occupancy)
    for j in labels:
        each.set(j, np.flatnonzero(z == j))
        assert at_once.log_marginal(j) == each.log_marginal(j)
        assert at_once.total(j) == each.total(j) == X[z == j].sum()
    assert at_once.merged_gain(labels[0], labels[-1]) == each.merged_gain(labels[0], labels[-1])
    for j in (5, 40):
        with pytest.raises(KeyError, match=f"no component {j}"):
            at_once.log_marginal(j)


def test_the_screen_refuses_a_component_it_does_not_hold():
    """A merge between a recorded component and one never recorded is an error that names
    the component, not a read of memory that is not there."""
    csr = sp.csr_array(X5)
    screen = ComponentScreen(csr.indptr.astype(np.int64), csr.indices.astype(np.int64),
                             csr.data.astype(np.float64), X5.shape[1], BETA6,
                             rising_factorials(BETA6, 10))
    screen.set(0, np.array([0], dtype=np.int64))
    z, occupancy = np.array([0, 1], dtype=np.int64), np.array([1, 1], dtype=np.int64)
    with pytest.raises(KeyError, match="no component 1"):
        screen.screen(np.random.default_rng(0).bit_generator, z, occupancy,
                      rows_from_label(occupancy), 2, 2, 0, 0.0, 0.0, ALPHA, False, 0.05, 0.05,
                      0.5, np.inf, 0.0, 1, 0.0, 0, 0.0)


@pytest.mark.parametrize("forced", [False, True])
@pytest.mark.parametrize("mean_count", [1.5, 40.0])
def test_a_sequential_allocation_gives_its_sides_marginals(forced, mean_count):
    """The sides' log marginals the allocation returns, from its predictives by the chain rule,
    equal the Dirichlet-multinomial of each side's summed counts, drawn or given sides alike,
    for small counts and for counts whose table of rising factorials grows past a thousand."""
    X = sp.csr_matrix(np.random.default_rng(7).poisson(mean_count, size=(40, 9))
                      .astype(np.float64))
    others = np.arange(2, 40, dtype=np.int64)
    side = np.random.default_rng(8).integers(2, size=others.size).astype(np.int8)
    marginals = np.empty(2)
    sequential_allocation(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, 9, 0,
                          1, others, np.random.default_rng(9).random(others.size), side, forced,
                          BETA6, marginals)
    dense = X.toarray()
    for s, anchor in ((0, 0), (1, 1)):
        block = dense[np.r_[anchor, others[side == s]]].sum(axis=0)
        assert marginals[s] == pytest.approx(dirichlet_multinomial(block, BETA6), rel=1e-12)


@pytest.mark.parametrize("tables", [False, True])
def test_passes_over_counts_of_billions_give_their_sides_marginals(tables):
    """Counts of about 10^9 in a category, past any table of rising factorials a pass would
    build (a table of their size would not fit in memory): the sequential allocation's and
    the restricted scans' marginals are still each side's Dirichlet-multinomial, their log q
    finite, with or without the shared tables."""
    X = sp.csr_matrix(np.random.default_rng(31).poisson(1e9, size=(12, 5)).astype(np.float64))
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, 5, 0, 1)
    given = pass_tables(5 * BETA6, 1000, 100, BETA6, 1000) if tables else None
    others, dense = np.arange(2, 12, dtype=np.int64), X.toarray()
    side, marginals, scan_marginals = np.empty(10, dtype=np.int8), np.empty(2), np.empty(2)
    log_q = sequential_allocation(*args, others, np.random.default_rng(32).random(10), side,
                                  False, BETA6, marginals, tables=given)
    scanned = side.copy()
    scan_q = restricted_scans(*args, others, np.random.default_rng(33).random((1, 10)),
                              scanned, scanned, False, BETA6, scan_marginals, tables=given)
    assert np.isfinite(log_q) and np.isfinite(scan_q)
    for sides, got in ((side, marginals), (scanned, scan_marginals)):
        for s, anchor in ((0, 0), (1, 1)):
            block = dense[np.r_[anchor, others[sides == s]]].sum(axis=0)
            assert got[s] == pytest.approx(dirichlet_multinomial(block, BETA6), rel=1e-12)


def test_a_forced_allocation_stops_once_its_q_is_below_the_bound():
    """With ``stop_below`` above the whole pass's log q, the forced pass returns a value below
    the bound and above log q (a part of it, each row's factor below 1); with the bound below
    log q, the whole pass's value, to the bit. Uniforms that do not match the rows are
    refused."""
    X = sp.csr_matrix(np.random.default_rng(3).poisson(2.0, size=(300, 12)).astype(np.float64))
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, 12, 0, 1,
            np.arange(2, 300, dtype=np.int64), np.zeros(298),
            np.random.default_rng(4).integers(2, size=298).astype(np.int8), True, BETA6)
    whole = sequential_allocation(*args, np.empty(2))
    assert whole < -50.0                 # many rows' factors, so a bound can cut the pass
    assert sequential_allocation(*args, np.empty(2), whole - 1e-3) == whole
    bound = whole / 2
    stopped = sequential_allocation(*args, np.empty(2), bound)
    assert whole < stopped < bound
    with pytest.raises(ValueError, match="entries of rows"):
        sequential_allocation(*args[:7], args[7][1:], *args[8:], np.empty(2))


def prefix_ratio(dense, others, side, log_q, m):
    """A split's log ratio on the anchors 0 and 1 and the first m of ``others`` on their sides
    ``side`` (log q: theirs): the sides' Dirichlet-multinomials less the merged block's, less
    log q, plus the sides' lgamma(n) less the block's."""
    blocks = [dense[np.r_[anchor, others[:m][side[:m] == s]]] for s, anchor in ((0, 0), (1, 1))]
    sizes = [block.shape[0] for block in blocks]
    return (sum(dirichlet_multinomial(block.sum(axis=0), BETA6) for block in blocks)
            - dirichlet_multinomial(sum(block.sum(axis=0) for block in blocks), BETA6)
            - log_q + gammaln(sizes[0]) + gammaln(sizes[1]) - gammaln(sum(sizes)))


@pytest.mark.parametrize("forced", [False, True])
@pytest.mark.parametrize("rest", [0.0, 25.0])
def test_a_delayed_check_is_the_moves_ratio_on_the_prefix(forced, rest):
    """With ``check_counts``, the check is the split's log ratio on the prefix (the anchors
    and the first rows that hold that many counts): the sides' Dirichlet-multinomials less
    the merged block's, less log q of the prefix, plus the sides' lgamma(n) less the block's,
    plus its rate per count over the prefix's second half times ``check_rest``; a forced
    pass (a merge's reverse) gives its negative. Below ``check_below`` the pass ends at the
    prefix with the prefix's log q; above it, the pass is the one without a check, to the
    bit. Rows that never hold the counts give 0; no array for it is refused."""
    X = sp.csr_matrix(np.random.default_rng(11).poisson(1.5, size=(60, 7)).astype(np.float64))
    dense, others = X.toarray(), np.arange(2, 60, dtype=np.int64)
    uniform = np.random.default_rng(12).random(others.size)
    side = np.random.default_rng(13).integers(2, size=others.size).astype(np.int8)
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, 7, 0, 1)
    cumulative = np.cumsum(dense[others].sum(axis=1))
    m, half = (int(np.searchsorted(cumulative, counts)) + 1 for counts in (120.0, 60.0))
    plain_side = side.copy()
    plain_q = sequential_allocation(*args, others, uniform, plain_side, forced, BETA6,
                                    plain_marginals := np.empty(2))
    prefix_side = side[:m].copy()
    prefix_q = sequential_allocation(*args, others[:m], uniform[:m], prefix_side, forced,
                                     BETA6, np.empty(2))
    half_q = sequential_allocation(*args, others[:half], uniform[:half],
                                   prefix_side[:half].copy(), True, BETA6, np.empty(2))
    ratio = prefix_ratio(dense, others, prefix_side, prefix_q, m)
    half_ratio = prefix_ratio(dense, others, prefix_side, half_q, half)
    assert m > half + 2
    ratio += (ratio - half_ratio) / (cumulative[m - 1] - cumulative[half - 1]) * rest
    expected = -ratio if forced else ratio
    for check_below, stops in ((expected + 1e-9, True), (expected - 1e-9, False)):
        check, got_side, marginals = np.full(1, np.nan), side.copy(), np.empty(2)
        log_q = sequential_allocation(*args, others, uniform, got_side, forced, BETA6,
                                      marginals, -np.inf, None, 120.0, check, check_below, rest)
        assert check[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        if stops:
            assert log_q == pytest.approx(prefix_q, rel=1e-12)
            np.testing.assert_array_equal(got_side[:m], prefix_side)
        else:
            assert log_q == plain_q
            np.testing.assert_array_equal(marginals, plain_marginals)
            np.testing.assert_array_equal(got_side, plain_side)
    check = np.full(1, np.nan)
    assert sequential_allocation(*args, others, uniform, side.copy(), forced, BETA6,
                                 np.empty(2), -np.inf, None, 1e6, check, 0.0) == plain_q
    assert check[0] == 0.0
    with pytest.raises(ValueError, match="needs check"):
        sequential_allocation(*args, others, uniform, side.copy(), forced, BETA6, np.empty(2),
                              -np.inf, None, 40.0)


X_TABLES = sp.csr_matrix(np.random.default_rng(21).poisson(1.2, size=(300, 12))
                         .astype(np.float64))
#: The first lookups of a pass on X_TABLES: side 0's total with the first row (anchor 0 and
#: row 2), a side's size once it holds that row, and a category's count past anchor 0's.
FIRST_TOTAL, FIRST_SIZE = int(X_TABLES[[0, 2]].sum()), 2
FIRST_COUNT = int(X_TABLES[0].max()) + 2


@pytest.mark.parametrize("sizes", [(0, 0, 0), (FIRST_TOTAL, FIRST_SIZE, FIRST_COUNT),
                                   (40, 30, 8), (100_000, 400, 1000)])
def test_passes_with_tables_give_the_values_of_libm_to_the_bit(sizes):
    """A pass reading ``pass_tables`` (none, tables that end at the pass's first lookups or
    within the block's totals, sizes and counts of a category, tables past them) returns the
    sides, log q and marginals of the pass without them, to the bit: its lgamma and log calls
    and its log rising factorials are the tables' entries. Drawn and forced sequential
    allocations, and restricted scans."""
    X = X_TABLES
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, 12, 0, 1,
            np.arange(2, 300, dtype=np.int64))
    n_totals, n_sizes, n_rising = sizes
    tables = pass_tables(12 * BETA6, n_totals, n_sizes, BETA6, n_rising)
    uniform = np.random.default_rng(22).random(298)
    results = []
    for given in (None, tables):
        side, marginals, forced_marginals = np.empty(298, dtype=np.int8), np.empty(2), np.empty(2)
        log_q = sequential_allocation(*args, uniform, side, False, BETA6, marginals,
                                      tables=given)
        forced = sequential_allocation(*args, uniform, side.copy(), True, BETA6,
                                       forced_marginals, tables=given)
        scanned, scan_marginals = side.copy(), np.empty(2)
        scan_q = restricted_scans(*args, np.random.default_rng(23).random((2, 298)), scanned,
                                  scanned, False, BETA6, scan_marginals, tables=given)
        results.append((log_q, forced, scan_q, side.tobytes(), scanned.tobytes(),
                        *marginals, *forced_marginals, *scan_marginals))
    assert log_q == forced and 0 < side.sum() < 298        # both sides hold rows
    assert results[0] == results[1]


def test_split_merge_passes_read_the_tables_of_its_rows():
    """``SplitMerge``'s pass, which reads its own tables, equals the kernel's without tables,
    to the bit; the kernels refuse tables of another ``n_features * base`` or ``base``."""
    X, others = X_TABLES, np.arange(2, 300, dtype=np.int64)
    uniform, expected = np.random.default_rng(24).random(298), np.empty(2)   # the refusal's
    side, drawn = np.empty(298, dtype=np.int8), np.empty(298, dtype=np.int8)
    shuffled = others.copy()
    log_q = sequential_allocation(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data,
                                  12, 0, 1, shuffled, None, side, False, BETA6, expected,
                                  order_seed=7)
    got_others = others.copy()
    got_q, got, _ = SplitMerge(X, BETA6).sequential_pass(0, 1, got_others, drawn, False, 7)
    assert got_q == log_q and np.array_equal(got, expected) and np.array_equal(drawn, side)
    assert np.array_equal(got_others, shuffled)
    with pytest.raises(ValueError, match="not those of n_features"):
        sequential_allocation(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data,
                              12, 0, 1, others, uniform, side, False, BETA6, expected,
                              tables=pass_tables(12 * BETA6 + 1.0, 10, 10))
    with pytest.raises(ValueError, match="not those of base"):
        restricted_scans(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, 12, 0,
                         1, others, uniform[None], side, side, False, BETA6, expected,
                         tables=pass_tables(12 * BETA6, 10, 10, 2 * BETA6, 10))


def test_a_shuffled_pass_is_the_pass_over_the_order_it_draws():
    """With ``order_seed`` the pass visits the rows in an order it draws and leaves in
    ``rows``: its log q and marginals are, to the bit, those of the pass over that order with
    the sides it drew, forced; a forced pass carries each row's side along with it."""
    X, others = X_TABLES, np.arange(2, 300, dtype=np.int64)
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, 12, 0, 1)
    order, side, drawn = others.copy(), np.empty(298, dtype=np.int8), np.empty(2)
    log_q = sequential_allocation(*args, order, None, side, False, BETA6, drawn, order_seed=5)
    assert sorted(order) == list(others) and not np.array_equal(order, others)
    assert 0 < side.sum() < 298
    replayed = np.empty(2)
    assert sequential_allocation(*args, order.copy(), np.zeros(298), side.copy(), True, BETA6,
                                 replayed) == log_q
    np.testing.assert_array_equal(replayed, drawn)
    # forced, from the rows in their own order with their sides: each keeps its side
    again_order, again_side, again = others.copy(), side[np.argsort(order)], np.empty(2)
    again_q = sequential_allocation(*args, again_order, None, again_side, True, BETA6, again,
                                    order_seed=6)
    assert not np.array_equal(again_order, order)
    assert dict(zip(again_order.tolist(), again_side.tolist())) == dict(
        zip(order.tolist(), side.tolist()))
    forced = np.empty(2)
    assert sequential_allocation(*args, again_order, np.zeros(298), again_side, True, BETA6,
                                 forced) == again_q
    np.testing.assert_array_equal(forced, again)


def test_a_shuffled_pass_draws_every_order_equally_often():
    """The orders ``order_seed`` draws over 4 rows: each of the 24 as often (chi-square, 24,000
    seeds), whether the pass draws the sides or is forced; a pass that stops early visits the
    first rows of the order the whole pass would."""
    X = X_TABLES
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, 12, 0, 1)
    orders = {p: n for n, p in enumerate(itertools.permutations(range(2, 6)))}
    for forced in (False, True):
        counts = np.zeros(24)
        for seed in range(24_000):
            rows = np.arange(2, 6, dtype=np.int64)
            sequential_allocation(*args, rows, None, np.zeros(4, dtype=np.int8), forced, BETA6,
                                  np.empty(2), order_seed=seed)
            counts[orders[tuple(rows.tolist())]] += 1
        statistic = np.sum((counts - 1000.0) ** 2 / 1000.0)
        assert chi2.sf(statistic, 23) > LEVEL, counts
    whole, stopped = np.arange(2, 300, dtype=np.int64), np.arange(2, 300, dtype=np.int64)
    sides = np.zeros(298, dtype=np.int8)
    sequential_allocation(*args, whole, None, sides.copy(), True, BETA6, np.empty(2),
                          order_seed=9)
    sequential_allocation(*args, stopped, None, sides.copy(), True, BETA6, np.empty(2), -5.0,
                          order_seed=9)
    visited = np.flatnonzero(stopped != whole)
    assert visited.size and visited[0] > 5        # stopped after some rows, in the same order


@pytest.mark.parametrize("occupancy", [[3], [0, 1], [2, 0, 1, 0, 5, 0, 0], [1, 1, 0, 4, 1, 0]])
def test_label_counts_are_those_of_the_rows_per_label(occupancy):
    """``label_counts``: the rows at each label and after, one past the last occupied label,
    the occupied labels, those of at least two rows with the running total of their rows, the
    rows they hold, the ordered pairs within a component, and the labels a split may give:
    the empty ones below J, then J (labels past the last occupied one included)."""
    occupancy = np.array(occupancy, dtype=np.int64)
    (rows_from, J, occupied, labels, ends, split_rows, pairs,
     choices) = label_counts(occupancy)
    assert rows_from.tolist() == [float(occupancy[j:].sum()) for j in range(occupancy.size + 1)]
    assert J == np.flatnonzero(occupancy)[-1] + 1 and occupied == np.count_nonzero(occupancy)
    assert labels.tolist() == np.flatnonzero(occupancy >= 2).tolist()
    assert ends.tolist() == np.cumsum(occupancy[occupancy >= 2]).tolist()
    assert split_rows == occupancy[occupancy >= 2].sum()
    assert pairs == float(occupancy @ (occupancy - 1))
    assert choices.tolist() == [*np.flatnonzero(occupancy[:J] == 0).tolist(), J]


def test_labelled_prior_matches_the_enumeration(labelled):
    """``log_labelled_prior`` is the stick factor of the enumeration (differences between states
    of the same likelihood: X of zeros)."""
    states, _ = labelled
    zeros = np.zeros_like(X5)
    _, log_p = enumerate_labelled(zeros, ALPHA, BETA6, B)
    picks = np.random.default_rng(0).choice(len(states), 200)
    mine = np.array([log_labelled_prior(np.bincount(states[s]), ALPHA) for s in picks])
    assert np.allclose(mine - mine[0], log_p[picks] - log_p[picks[0]])


def test_a_moves_prior_change_is_the_difference_of_the_priors():
    """Moving rows between two labels (a split to a new or an empty label, a merge emptying
    the last label) changes ``log_labelled_prior`` (its betaln stick factors) by
    ``log_labelled_prior_change`` (the telescoped form)."""
    rng = np.random.default_rng(2)
    for _ in range(300):
        before = rng.integers(0, 4, size=rng.integers(2, 9)) * (rng.random() < 0.9)
        before[-1] = max(before[-1], 1)                     # the last label occupied
        c = int(rng.choice(np.flatnonzero(before)))
        e = int(rng.integers(before.size + 1))
        if e == c:
            continue
        after = np.zeros(max(before.size, e + 1), dtype=np.int64)
        after[:before.size] = before
        moved = int(rng.integers(1, before[c] + 1))
        after[c], after[e] = after[c] - moved, after[e] + moved
        alpha = rng.uniform(0.1, 5.0)
        change = log_labelled_prior_change(before, rows_from_label(before), alpha, c, e, moved)
        assert change == pytest.approx(
            log_labelled_prior(after, alpha) - log_labelled_prior(before, alpha), abs=1e-9)


def from_posterior(states, log_p, seed, apply):
    """Draw N_DRAWS states from the enumerated posterior and give each to ``apply(z, rng)``,
    which moves z in place; the moved states' indices into ``states`` (-1 outside the
    enumeration) and what ``apply`` returned for each."""
    rng = np.random.default_rng(seed)
    draws = rng.choice(len(states), size=N_DRAWS, p=np.exp(log_p))
    out, results = np.empty(N_DRAWS, dtype=np.int64), []
    for t, s in enumerate(draws):
        z = states[s].astype(np.int64)
        results.append(apply(z, rng))
        out[t] = state_number(z)
    return out, results


def moved_states(states, log_p, alpha_of_move, seed, scans=0):
    """One proposal applied to each of N_DRAWS states drawn from the enumerated posterior (with
    ``scans`` restricted Gibbs scans in the scanned ones): the moved states' indices into
    ``states`` (-1 outside the enumeration) and the acceptances."""
    move = SplitMerge(X5, BETA6, scans)
    return from_posterior(states, log_p, seed,
                          lambda z, rng: move.propose(z, alpha_of_move, rng))


def chi_square_p_value(observed_indices, log_p):
    """Pearson's test of the moved states against the enumeration, states with expected counts
    below 5 pooled (in order of probability) into bins of at least 5."""
    counts = np.bincount(observed_indices, minlength=len(log_p)).astype(float)
    expected = N_DRAWS * np.exp(log_p)
    order = np.argsort(-expected)
    bins, obs, exp = [], 0.0, 0.0
    for i in order:
        obs, exp = obs + counts[i], exp + expected[i]
        if exp >= 5:
            bins.append((obs, exp))
            obs, exp = 0.0, 0.0
    o, e = np.array(bins).T
    statistic = np.sum((o - e) ** 2 / e)
    return chi2.sf(statistic, len(bins) - 1), len(bins)


@pytest.fixture(scope="module")
def moved(labelled):
    return moved_states(*labelled, ALPHA, seed=1)


@pytest.mark.slow
def test_one_move_leaves_the_labelled_posterior_invariant(labelled, moved):
    """States drawn from the exact posterior and moved once are still distributed by it:
    Pearson's chi-square over ~1,600 bins at level 1e-3. The move does move: 2-10% of the
    proposals are accepted, splits and merges alike."""
    states, log_p = labelled
    out, kinds = moved
    assert np.mean(out < 0) < 1e-3                  # labels >= B: the truncated mass
    p_value, n_bins = chi_square_p_value(out[out >= 0], log_p)
    assert n_bins > 1000
    assert p_value > LEVEL, p_value
    accepted = {kind: kinds.count(kind) / N_DRAWS for kind in ("split", "merge")}
    assert 0.02 < accepted["split"] < 0.2 and 0.02 < accepted["merge"] < 0.2, accepted


@pytest.mark.slow
@pytest.mark.parametrize("by_component, by_row, seed", [(0.9, 0.05, 2), (0.05, 0.9, 5)])
def test_mostly_splits_leave_it_invariant(labelled, monkeypatch, by_component, by_row, seed):
    """The same check with most proposals splits of a component drawn uniformly
    (``SPLIT_SHARE`` 0.9), or of the component of a row drawn uniformly, a component in
    proportion to its rows (``ROW_SPLIT_SHARE`` 0.9): the pair's probability under each state
    enters the acceptance right."""
    monkeypatch.setattr(split_merge, "SPLIT_SHARE", by_component)
    monkeypatch.setattr(split_merge, "ROW_SPLIT_SHARE", by_row)
    out, kinds = moved_states(*labelled, ALPHA, seed=seed)
    p_value, _ = chi_square_p_value(out[out >= 0], labelled[1])
    assert p_value > LEVEL, p_value
    assert kinds.count("split") > kinds.count("merge") > 0.01 * N_DRAWS


@pytest.mark.slow
def test_the_invariance_check_sees_a_wrong_pair_probability(labelled, monkeypatch):
    """The same check rejects splits whose acceptance leaves out the probability that a row
    drew their pair: q(i, k | z) must be that of every mechanism that can draw it."""
    monkeypatch.setattr(split_merge, "SPLIT_SHARE", 0.05)
    monkeypatch.setattr(split_merge, "ROW_SPLIT_SHARE", 0.9)
    ratio = split_merge.log_split_pair_ratio
    monkeypatch.setattr(split_merge, "log_split_pair_ratio",
                        lambda *args: ratio(*args[:7], 0.0))
    out, _ = moved_states(*labelled, ALPHA, seed=5)
    p_value, _ = chi_square_p_value(out[out >= 0], labelled[1])
    assert p_value < 1e-12, p_value


def delay_every_block(monkeypatch):
    """Delayed acceptances on the rows of X5 (three counts each): every block of three rows or
    more, its first stage on the prefix of one other row (the whole of a three-row block's).
    Returns the first stages' (log r1, log u1) as the passes record them."""
    monkeypatch.setattr(split_merge, "DELAYED_CHECK_PER_CATEGORY", 1)
    monkeypatch.setattr(split_merge, "DELAYED_BLOCK_PREFIXES", 3)
    monkeypatch.setattr(split_merge, "DELAYED_ROW_COUNTS", 1)
    stages, sequential_pass = [], SplitMerge.sequential_pass

    def recorded(self, *args, **kwargs):
        result = sequential_pass(self, *args, **kwargs)
        if kwargs.get("check_counts", args[7] if len(args) > 7 else 0):
            stages.append((result[2], kwargs.get("check_below", args[8] if len(args) > 8
                                                 else -np.inf)))
        return result

    monkeypatch.setattr(SplitMerge, "sequential_pass", recorded)
    return stages


@pytest.mark.slow
@pytest.mark.parametrize("by_component, by_row, seed", [(0.1, 0.05, 6), (0.05, 0.9, 7)])
def test_moves_with_a_delayed_acceptance_leave_it_invariant(labelled, monkeypatch,
                                                            by_component, by_row, seed):
    """The chi-square check with a delayed acceptance on every block of three rows or more:
    the first stage on the prefix, the second on the whole ratio over the first's, merges
    and splits alike (the default shares, and mostly splits by row). The first stage
    rejects some proposals and passes others."""
    monkeypatch.setattr(split_merge, "SPLIT_SHARE", by_component)
    monkeypatch.setattr(split_merge, "ROW_SPLIT_SHARE", by_row)
    stages = delay_every_block(monkeypatch)
    out, kinds = moved_states(*labelled, ALPHA, seed=seed)
    p_value, _ = chi_square_p_value(out[out >= 0], labelled[1])
    assert p_value > LEVEL, p_value
    passed = np.array([log_u1 < log_r1 for log_r1, log_u1 in stages])
    assert 0.05 < passed.mean() < 0.95 and passed.size > 0.1 * N_DRAWS, passed.mean()
    assert kinds.count("split") > 0.01 * N_DRAWS and kinds.count("merge") > 0.01 * N_DRAWS


@pytest.mark.slow
@pytest.mark.parametrize("wrong, by_component, by_row", [("no first stage", 0.1, 0.05),
                                                         ("r, not r / r1", 0.45, 0.45)])
def test_the_invariance_check_sees_a_wrong_delayed_acceptance(labelled, monkeypatch, wrong,
                                                               by_component, by_row):
    """The same check rejects a delayed acceptance that skips its first stage (u < r / r1
    alone), or whose second stage forgets to divide by the first stage's ratio (u < r)."""
    monkeypatch.setattr(split_merge, "SPLIT_SHARE", by_component)
    monkeypatch.setattr(split_merge, "ROW_SPLIT_SHARE", by_row)
    delay_every_block(monkeypatch)
    for kind in (split_merge._Split, split_merge._Merge):
        def passed(self, move, pass_over=kind.pass_over):
            self.log_u1 = -np.inf               # every first stage passed
            pass_over(self, move)

        def on_r_alone(self, move, blocks, alpha, judge=kind.judge):
            if self.log_u1 < self.log_r1:
                self.log_r1 = 0.0
            judge(self, move, blocks, alpha)
        if wrong == "no first stage":
            monkeypatch.setattr(kind, "pass_over", passed)
        else:
            monkeypatch.setattr(kind, "judge", on_r_alone)
    out, _ = moved_states(*labelled, ALPHA, seed=7)
    p_value, _ = chi_square_p_value(out[out >= 0], labelled[1])
    assert p_value < 1e-9, p_value


@pytest.mark.parametrize("seed", range(20))
def test_the_pair_probabilities_of_a_state_sum_to_one(seed):
    """Over every ordered pair of distinct rows, q(i, k | z) sums to 1, whatever the sizes and
    the shares (also with no component of two rows, or one holding every row but one); with
    a single component, to the shares of the splits (the merges' proposals make no move)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=rng.integers(1, 7))
    if seed == 0:
        sizes = np.ones(4, dtype=np.int64)
    if seed == 1:
        sizes = np.array([9, 1])
    if seed == 2:
        sizes = np.array([6])
    component_share, row_share = rng.dirichlet([1.0, 1.0, 1.0])[:2]
    n, split = sizes.sum(), sizes[sizes >= 2]
    pairs = float(np.sum(sizes * (sizes - 1.0)))
    across = n * (n - 1.0) - pairs                       # ordered pairs of two components
    total = across * np.exp(log_pair_probability(n, split.size, split.sum(), pairs, 0,
                                                 component_share, row_share)) if across else 0.0
    total += sum(size * (size - 1) * np.exp(log_pair_probability(
        n, split.size, split.sum(), pairs, size, component_share, row_share)) for size in split)
    if sizes.size == 1:
        assert total == pytest.approx(component_share + row_share if n > 1 else 0.0, rel=1e-12)
    else:
        assert total == pytest.approx(1.0, rel=1e-12)


def test_a_split_by_row_draws_a_component_in_proportion_to_its_rows():
    """``_pair_by_row`` draws the component of a uniform row among those of at least two rows:
    Pearson's chi-square of 40,000 draws against n_j / (their rows); i and k distinct, both
    of it."""
    z = np.repeat(np.arange(6), [50, 1, 7, 200, 1, 30]).astype(np.int64)
    blocks = split_merge._Blocks(z)
    rng = np.random.default_rng(0)
    drawn = np.array([split_merge.SplitMerge._pair_by_row(blocks, rng)[:2]
                      for _ in range(40_000)])
    assert np.all(drawn[:, 0] != drawn[:, 1]) and np.all(z[drawn[:, 0]] == z[drawn[:, 1]])
    counts = np.bincount(z[drawn[:, 0]], minlength=6)
    assert counts[1] == counts[4] == 0
    expected = np.array([50, 7, 200, 30]) / 287 * 40_000
    statistic = np.sum((counts[[0, 2, 3, 5]] - expected) ** 2 / expected)
    assert chi2.sf(statistic, 3) > LEVEL


@pytest.mark.slow
def test_moves_with_restricted_scans_leave_it_invariant(labelled):
    """The same check with restricted Gibbs scans in half of the proposals: the last scan's
    probability, forced for a merge's reverse, enters the acceptance right; the scans make
    both kinds of move more often than the sequential allocation alone."""
    out, kinds = moved_states(*labelled, ALPHA, seed=3, scans=2)
    p_value, _ = chi_square_p_value(out[out >= 0], labelled[1])
    assert p_value > LEVEL, p_value
    accepted = {kind: kinds.count(kind) / N_DRAWS for kind in ("split", "merge")}
    assert 0.05 < accepted["split"] < 0.3 and 0.05 < accepted["merge"] < 0.3, accepted


@pytest.mark.parametrize("scans", [1, 3])
def test_the_last_restricted_scans_outcomes_have_probabilities_summing_to_one(scans):
    """From one launch and the same earlier scans, the forced last scan's probability over all
    2^n sides of the n rows sums to 1 (it is the law of that scan's outcome), and each forced
    run ends on its target, with the sides' marginals those of the summed counts."""
    X = sp.csr_matrix(np.random.default_rng(12).poisson(1.5, size=(9, 7)).astype(np.float64))
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, 7, 0, 1)
    rows = np.arange(2, 9, dtype=np.int64)
    launch = np.random.default_rng(13).integers(2, size=rows.size).astype(np.int8)
    uniform = np.random.default_rng(14).random((scans, rows.size))
    total, dense = 0.0, X.toarray()
    for bits in itertools.product([0, 1], repeat=rows.size):
        target, side, marginals = np.array(bits, dtype=np.int8), launch.copy(), np.empty(2)
        log_q = restricted_scans(*args, rows, uniform, side, target, True, BETA6, marginals)
        total += np.exp(log_q)
        assert np.array_equal(side, target) and log_q <= 0.0
        for s, anchor in ((0, 0), (1, 1)):
            block = dense[np.r_[anchor, rows[target == s]]].sum(axis=0)
            assert marginals[s] == pytest.approx(dirichlet_multinomial(block, BETA6), rel=1e-12)
    assert total == pytest.approx(1.0, rel=1e-12)


def test_restricted_scans_draw_their_last_scan_and_stop_a_forced_one_early():
    """Drawn (not forced), the last scan's sides are those whose forced probability it
    returns; forced with a bound above that log q, the scan stops below the bound, marginals
    NaN."""
    X = sp.csr_matrix(np.random.default_rng(3).poisson(2.0, size=(300, 12)).astype(np.float64))
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, 12, 0, 1)
    rows = np.arange(2, 300, dtype=np.int64)
    launch = np.random.default_rng(4).integers(2, size=rows.size).astype(np.int8)
    uniform = np.random.default_rng(5).random((3, rows.size))
    drawn, marginals = launch.copy(), np.empty(2)
    log_q = restricted_scans(*args, rows, uniform, drawn, drawn, False, BETA6, marginals)
    side = launch.copy()
    again = restricted_scans(*args, rows, uniform, side, drawn.copy(), True, BETA6, np.empty(2))
    assert again == pytest.approx(log_q, rel=1e-12) and log_q < -20.0
    side, stopped = launch.copy(), np.empty(2)
    bound = log_q / 2
    partial = restricted_scans(*args, rows, uniform, side, drawn.copy(), True, BETA6, stopped,
                               bound)
    assert log_q < partial < bound and np.all(np.isnan(stopped))
    with pytest.raises(ValueError, match="entries of rows"):
        restricted_scans(*args, rows, uniform, launch[1:].copy(), drawn, False, BETA6, stopped)


def test_restricted_scans_split_dense_clusters_the_sequential_allocation_cannot():
    """Six clusters of dense profiles (Dirichlet(1) over 500 categories, rows of 15 counts) in
    one component: 200 proposals with restricted scans pull them apart (the ARI of the rows'
    components at least 0.2 above the sequential allocation's alone, on each of four data
    sets), whose first rows tell the clusters too little to split them."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        profiles = rng.dirichlet(np.ones(500), size=6)
        truth = np.repeat(np.arange(6), 150)
        X = np.vstack([rng.multinomial(15, profiles[c]) for c in truth])
        ari = []
        for scans in (0, 4):
            z = np.zeros(truth.size, dtype=np.int64)
            SplitMerge(X, 0.5, scans).run(z, 1.0, np.random.default_rng(seed + 10), 200)
            ari.append(adjusted_rand_score(truth, z))
        assert ari[1] > ari[0] + 0.2, (seed, ari)


def test_a_small_merged_block_is_split_among_many_rows():
    """Two clusters of 15 rows each, with disjoint categories, share a component beside one
    of 3,000 rows: 300 proposals split them (uniform pairs would propose that split with
    probability (30 / 3030)^2 = 1e-4 each). A row of either may be left on its own, as the
    posterior allows; the allocations of the exact sampler's sweeps move such rows, not the
    moves."""
    rng = np.random.default_rng(4)
    big = rng.multinomial(20, np.full(10, 0.1), size=3000)
    small = np.zeros((30, 14), dtype=np.int64)
    small[:15, 10:12] = rng.multinomial(20, [0.5, 0.5], size=15)
    small[15:, 12:] = rng.multinomial(20, [0.5, 0.5], size=15)
    X = np.vstack([np.pad(big, ((0, 0), (0, 4))), small])
    z = np.r_[np.zeros(3000), np.ones(30)].astype(np.int64)
    move = SplitMerge(X, 0.5)
    move.run(z, 1.0, np.random.default_rng(5), 300)
    modes = [np.bincount(z[rows]).argmax() for rows in (slice(3000, 3015), slice(3015, None))]
    assert np.sum(z[3000:3015] == modes[0]) >= 13 and np.sum(z[3015:] == modes[1]) >= 13
    assert len({z[0], *modes}) == 3 and np.all(z[:3000] == z[0])


def run_from_posterior(states, log_p, seed, n_proposals, row_budget=0.0):
    """One ``run`` of ``n_proposals`` proposals, and more up to ``row_budget``, on each of
    N_DRAWS states drawn from the enumerated posterior; the moved states' indices (-1 outside
    the enumeration)."""
    move = SplitMerge(X5, BETA6)
    return from_posterior(states, log_p, seed, lambda z, rng: move.run(
        z, ALPHA, rng, n_proposals, row_budget=row_budget))[0]


@pytest.mark.slow
def test_a_run_of_a_fixed_number_of_proposals_leaves_it_invariant(labelled):
    """Four proposals in one ``run``, the blocks and the screen's components kept from one to
    the next, leave the posterior invariant: the number the exact sampler's chain makes after
    its warm-up depends on alpha and the rows, not on z (``defaults.split_merge_count``)."""
    out = run_from_posterior(*labelled, seed=4, n_proposals=4)
    p_value, _ = chi_square_p_value(out[out >= 0], labelled[1])
    assert p_value > LEVEL, p_value


@pytest.mark.slow
def test_a_budget_in_block_rows_does_not_leave_it_invariant(labelled):
    """Proposals made until their blocks held 12 rows stop on what the proposals met, and the
    moved states are not distributed by the posterior: why the chain's work budget
    (``split_merge="auto"``) only sets the count of its warm-up."""
    out = run_from_posterior(*labelled, seed=4, n_proposals=1, row_budget=12.0)
    p_value, _ = chi_square_p_value(out[out >= 0], labelled[1])
    assert p_value < 1e-12, p_value


@pytest.mark.slow
def test_the_invariance_check_has_power(labelled):
    """The same check rejects a move that targets another posterior (alpha 3 for 0.5)."""
    states, log_p = labelled
    out, _ = moved_states(states, log_p, 3.0, seed=1)
    p_value, _ = chi_square_p_value(out[out >= 0], log_p)
    assert p_value < 1e-12, p_value


def shifted_states(states, log_p, seed, alpha_of_move=ALPHA):
    """One label shift on each of N_DRAWS states drawn from the enumerated posterior; the
    shifted states' indices (-1 outside the enumeration) and the shifts accepted."""
    out, accepted = from_posterior(states, log_p, seed,
                                   lambda z, rng: shift_labels(z, alpha_of_move, rng, 1))
    return out, sum(accepted)


@pytest.mark.slow
def test_label_shifts_leave_the_labelled_posterior_invariant(labelled):
    """States drawn from the exact posterior and shifted once are still distributed by it
    (Pearson's chi-square at level 1e-3, as the split-merge moves; p = 0.63 here); about a
    quarter of the shifts are accepted, and the same check rejects shifts that target alpha 3
    for 0.5."""
    states, log_p = labelled
    out, accepted = shifted_states(states, log_p, seed=3)
    assert np.mean(out < 0) < 1e-3                  # labels >= B: the truncated mass
    p_value, n_bins = chi_square_p_value(out[out >= 0], log_p)
    assert n_bins > 1000 and p_value > LEVEL, p_value
    assert 0.1 < accepted / N_DRAWS < 0.5, accepted / N_DRAWS
    wrong, _ = shifted_states(states, log_p, seed=3, alpha_of_move=3.0)
    assert chi_square_p_value(wrong[wrong >= 0], log_p)[0] < 1e-12


def test_a_component_alone_far_above_the_others_shifts_down():
    """Seven rows at label 0 and one alone at label 8: the shifts bring the lone one down to
    label 1 (each step down raises the labelled prior), where a merge into label 0 becomes
    possible, and leave the seven at label 0."""
    z = np.array([0] * 7 + [8])
    accepted = shift_labels(z, ALPHA, np.random.default_rng(0), 200)
    assert z.tolist() == [0] * 7 + [1] and accepted >= 7


def reference_shifts(z, alpha, rng, n_proposals):
    """The label shifts of ``shift_labels``, spelled out on relabelled copies of z: each
    proposal relabels z itself, the occupied labels recounted every time."""
    down, picks, log_u = (rng.random(n_proposals) < 0.5, rng.random(n_proposals),
                          np.log(rng.random(n_proposals)))
    for t in range(n_proposals):
        occupancy = np.bincount(z, minlength=z.max() + 2)
        occupied = np.flatnonzero(occupancy)
        c = int(occupied[int(picks[t] * occupied.size)])
        b = c - 1 if down[t] else c + 1
        while 0 <= b < occupancy.size and occupancy[b]:
            b += -1 if down[t] else 1
        if b < 0:
            continue
        change = log_labelled_prior_change(occupancy, rows_from_label(occupancy), alpha, c, b,
                                           float(occupancy[c]))
        if log_u[t] < change:
            z[z == c] = b
    return z


@pytest.mark.parametrize("seed", range(4))
def test_the_shift_kernel_makes_the_shifts_spelled_out(seed):
    """``shift_labels`` (its kernel keeps the occupied labels sorted and the labels' arrays in
    place) moves the components as relabelling z proposal by proposal does, on states with
    gaps and components at the top that shift up past every label; the kernel refuses labels'
    arrays without room for the shifts or whose occupied labels are not in order."""
    rng = np.random.default_rng(seed)
    z = rng.choice([0, 1, 2, 5, 6, 7, 11, 12], size=40) + 3 * (seed % 2)
    expected = reference_shifts(z.copy(), 0.7 + seed, np.random.default_rng(seed), 300)
    accepted = shift_labels(z, 0.7 + seed, np.random.default_rng(seed), 300)
    assert z.tolist() == expected.tolist() and accepted > 30
    occupancy = np.bincount(z, minlength=z.max() + 3)
    for occupied, n_labels, match in ((np.flatnonzero(occupancy), occupancy.size, "room"),
                                      (np.flatnonzero(occupancy)[::-1].copy(), z.max() + 2,
                                       "increasing order")):
        with pytest.raises(ValueError, match=match):
            shift_labels_in_place(occupancy, rows_from_label(occupancy), occupied,
                                  np.arange(occupancy.size), n_labels, 1.0,
                                  np.ones(1, dtype=np.uint8), np.zeros(1), np.zeros(1))


def test_a_move_that_can_only_be_rejected_changes_nothing():
    """Two rows in one component, the new label's reverse impossible or the move rejected: z is
    only ever changed by an accepted proposal, and a single row has no proposal."""
    rng = np.random.default_rng(0)
    move = SplitMerge(X5[:1], BETA6)
    z = np.array([3])
    assert move.propose(z, ALPHA, rng) is None and z.tolist() == [3]
    move = SplitMerge(X5, BETA6)
    for _ in range(200):
        z = rng.integers(4, size=5)
        before = z.copy()
        if move.propose(z, ALPHA, rng) is None:
            assert np.array_equal(z, before)


def test_one_row_admits_no_proposal_whatever_the_budget():
    """A single row has no pair of distinct rows to propose: ``run`` returns at once, with a
    budget in work that no proposal could fill (#35: ``split_merge="auto"`` asked for a
    quarter of a row and looped for ever on a data set of one row)."""
    move, z = SplitMerge(X5[:1], BETA6), np.array([2])
    with hang_guard(10):
        assert move.run(z, ALPHA, np.random.default_rng(0), 10, row_budget=0.25) == 0
    assert z.tolist() == [2]


def test_run_with_its_cache_makes_the_same_moves_as_single_proposals():
    """``run`` keeps the components' marginals between proposals: the same moves, bit for bit,
    as proposals that compute every marginal afresh (on a data set with many accepted moves)."""
    X = np.random.default_rng(2).poisson(0.5, size=(60, 8))
    move = SplitMerge(X, BETA6)
    z_run, z_single = np.zeros(60, dtype=np.int64), np.zeros(60, dtype=np.int64)
    accepted = move.run(z_run, 1.0, np.random.default_rng(3), 1000)
    rng = np.random.default_rng(3)
    kinds = [move.propose(z_single, 1.0, rng) for _ in range(1000)]
    assert accepted == sum(kind is not None for kind in kinds) > 20
    np.testing.assert_array_equal(z_run, z_single)


@pytest.mark.parametrize("scans, n_jobs, delayed", [(0, 2, False), (2, 2, False),
                                                    (0, 4, False), (0, 2, True)])
def test_passes_on_a_thread_of_their_own_make_the_same_moves(scans, n_jobs, delayed,
                                                             monkeypatch):
    """With every pass on a pool's thread where one is free (one thread, or three, so that
    several passes run at once), the proposals made ahead of a pass, applied if accepted,
    undone while the pass is judged and dropped if it is accepted, leave no trace: the same
    moves, bit for bit, as one thread, on a data set where many are accepted (so that some
    are undone and some dropped); also with delayed acceptances (blocks of 80 counts or more,
    first stages on 20; their passes are seldom accepted, so seldom dropped)."""
    monkeypatch.setattr(split_merge, "OVERLAP_ROWS", 0)
    if delayed:
        monkeypatch.setattr(split_merge, "DELAYED_CHECK_PER_CATEGORY", 2.5)
        monkeypatch.setattr(split_merge, "DELAYED_BLOCK_PREFIXES", 4)
        monkeypatch.setattr(split_merge, "DELAYED_ROW_COUNTS", 1)
    dropped, undone = [], []
    drop, apply = split_merge._drop, SplitMerge._apply
    monkeypatch.setattr(split_merge, "_drop", lambda pending: (dropped.append(len(pending)),
                                                               drop(pending)))
    monkeypatch.setattr(SplitMerge, "_apply", lambda self, proposal, z, blocks, undo=False: (
        undone.append(undo), apply(self, proposal, z, blocks, undo)))
    X = np.random.default_rng(2).poisson(0.5, size=(200, 8))
    move = SplitMerge(X, BETA6, scans)
    z_one, z_two = np.zeros(200, dtype=np.int64), np.zeros(200, dtype=np.int64)
    accepted = move.run(z_one, 1.0, np.random.default_rng(11), 4000, n_jobs=1)
    passed = move.rows_passed
    assert move.run(z_two, 1.0, np.random.default_rng(11), 4000, n_jobs=n_jobs) == accepted > 40
    np.testing.assert_array_equal(z_one, z_two)
    assert move.rows_passed == 2 * passed > 0           # the dropped passes not counted
    # some undone and some dropped (with delayed acceptances, few passes are accepted: drops
    # are left to the next test, which forces them)
    assert sum(undone) > 5 and (delayed or sum(dropped) > 5), (dropped, sum(undone))
    # a budget in rows (a warm-up's): the same proposals, counted the same
    z_one[:], z_two[:] = 0, 0
    move.run(z_one, 1.0, np.random.default_rng(4), 10, row_budget=40_000, n_jobs=1)
    proposed = move.proposed
    move.run(z_two, 1.0, np.random.default_rng(4), 10, row_budget=40_000, n_jobs=n_jobs)
    np.testing.assert_array_equal(z_one, z_two)
    assert move.proposed == proposed > 10


@pytest.mark.parametrize("n_jobs", [2, 3])
def test_the_screens_draws_after_an_accepted_pass_are_undone(n_jobs, monkeypatch):
    """Passes on a pool's threads slowed down, so that this thread screens every remaining
    proposal (the budget spent, none left pending) before the pass ahead of them is decided:
    when that pass is accepted, those draws were made on the state before it and are made
    again after it. The same moves, proposals and generator state as one thread."""
    monkeypatch.setattr(split_merge, "OVERLAP_ROWS", 0)
    for kind in (split_merge._Split, split_merge._Merge):
        def slowed(self, move, pass_over=kind.pass_over):
            if threading.current_thread() is not threading.main_thread():
                time.sleep(0.002)
            pass_over(self, move)
        monkeypatch.setattr(kind, "pass_over", slowed)
    X = np.random.default_rng(2).poisson(0.5, size=(200, 8))
    move = SplitMerge(X, BETA6)
    ends = []
    for jobs in (1, n_jobs):
        z, rng = np.zeros(200, dtype=np.int64), np.random.default_rng(3)
        accepted = [move.run(z, 1.0, rng, 40, n_jobs=jobs) for _ in range(20)]
        ends.append((z, accepted, move.proposed, rng.random()))
    np.testing.assert_array_equal(ends[0][0], ends[1][0])
    assert ends[0][1:] == ends[1][1:] and sum(ends[0][1]) > 10


def test_a_matrix_in_the_kernels_layout_is_shared_and_moves_the_same():
    """``local.kernel_layout`` gives the same counts as int64 indices and float64 values;
    ``SplitMerge`` then reads its arrays without copies, and makes the same moves as on the
    matrix ``check_counts`` gives."""
    X = sp.csr_array(np.random.default_rng(2).poisson(0.5, size=(60, 8)))
    X_kernel = kernel_layout(X)
    assert X_kernel.data.dtype == np.float64 and (X_kernel != X).nnz == 0
    move = SplitMerge(X_kernel, BETA6)
    if X_kernel.indices.dtype == np.int64:          # scipy may keep 32-bit indices
        assert np.shares_memory(move.indices, X_kernel.indices)
    assert np.shares_memory(move.data, X_kernel.data)
    z_int, z_kernel = np.zeros(60, dtype=np.int64), np.zeros(60, dtype=np.int64)
    accepted = SplitMerge(X, BETA6).run(z_int, 1.0, np.random.default_rng(3), 1000)
    assert move.run(z_kernel, 1.0, np.random.default_rng(3), 1000) == accepted > 20
    np.testing.assert_array_equal(z_int, z_kernel)


def test_rows_passed_counts_the_blocks_of_the_proposals_that_reach_a_pass(monkeypatch):
    """``rows_passed`` adds up the blocks (both anchors and the others) of the proposals the
    screen passes on, one pass each without scans, over successive runs."""
    blocks = []
    sequential_pass = SplitMerge.sequential_pass

    def recorded(self, i, k, others, *args, **kwargs):
        blocks.append(others.size + 2)
        return sequential_pass(self, i, k, others, *args, **kwargs)

    monkeypatch.setattr(SplitMerge, "sequential_pass", recorded)
    X = np.random.default_rng(2).poisson(0.5, size=(120, 8))
    move, z = SplitMerge(X, BETA6), np.zeros(120, dtype=np.int64)
    for seed in range(3):
        move.run(z, 1.0, np.random.default_rng(seed), 300)
    assert move.rows_passed == sum(blocks) > 0
