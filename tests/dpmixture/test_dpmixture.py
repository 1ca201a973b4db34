"""DPMixture: recovery of a known mixture, scores against closed forms, reproducibility,
numerical guards, bad input, scikit-learn conventions, the msweb reader."""
import os
import pickle
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from scipy.stats import dirichlet_multinomial, multinomial
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

from simplexsg import DPMixture
from simplexsg._ext._dp import (log_components, mixture_log_likelihood, slice_allocate,
                                summed_by_component)
from simplexsg.datasets import (UCIBowCorpus, load_msweb, make_multinomial_mixture,
                                save_uci_bow)
from simplexsg.dpmixture import defaults, slice_sampler
from simplexsg.dpmixture.local import LocalExecutor, component_counts, kernel_layout
from simplexsg.simplex import SCIR

from helpers import ROOT
from helpers.guards import hang_guard
from helpers.sklearn_checks import parametrize_checks

SAMPLERS = ["scir", "sgrld", "gibbs"]


@pytest.fixture(scope="module")
def mixture():
    """2000 rows of 20 counts over 100 categories from 5 sparse multinomials."""
    return make_multinomial_mixture(2000, 100, 5, concentration=0.05, row_length=20,
                                    random_state=1)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", SAMPLERS)
def test_recovers_known_mixture(mixture, sampler):
    """5 occupied components with >= 1% of the rows, adjusted Rand index >= 0.9; for SCIR and
    Gibbs, weights within 0.05 of the truth (the 2000 labels alone give a standard error of
    0.009). SGRLD's tuned stick step (5e-3) needs ~1/h = 200 iterations just to relax the
    sticks from their prior scale to the counts' (~400), so its weights are still moving."""
    X, labels, components, weights = mixture
    dp = DPMixture(sampler, batch_size=200, max_iter=300, random_state=0).fit(X)
    sizes = np.bincount(dp.labels_, minlength=dp.n_components_)
    assert np.sum(sizes >= 0.01 * X.shape[0]) == 5
    assert adjusted_rand_score(labels, dp.labels_) >= 0.9
    big = np.sort(dp.weights_[sizes >= 0.01 * X.shape[0]])
    if sampler != "sgrld":
        assert np.allclose(big / big.sum(), np.sort(weights), atol=0.05)
    assert np.allclose(dp.components_.sum(axis=1), 1.0)
    assert np.isclose(dp.weights_.sum(), 1.0)


def test_predict_matches_training_labels(mixture):
    X, labels, _, _ = mixture
    dp = DPMixture("scir", batch_size=200, max_iter=200, random_state=0).fit(X)
    proba = dp.predict_proba(X)
    assert proba.shape == (X.shape[0], dp.n_components_)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert adjusted_rand_score(labels, dp.predict(X)) >= 0.9
    assert np.mean(dp.predict(X) == dp.labels_) >= 0.95


def _state(theta, sticks, base):
    dp = DPMixture(base_concentration=base)
    dp.n_features_in_ = theta.shape[1]
    dp.theta_, dp.sticks_, dp.base_concentration_ = theta, sticks, base
    return dp


def test_score_samples_is_the_predictive_density():
    """score_samples = log(sum_j w_j Mult(x | phi_j) + w_rest DirMult(x | base)), checked against
    scipy's multinomial and Dirichlet-multinomial pmfs and the stick-breaking weights."""
    rng = np.random.default_rng(0)
    theta, sticks = rng.gamma(1.0, size=(3, 4)), rng.gamma(2.0, size=(3, 2))
    X = np.array([[2, 0, 1, 0], [0, 0, 0, 0], [1, 1, 1, 5]])
    dp = _state(theta, sticks, 0.7)
    v = sticks[:, 0] / sticks.sum(axis=1)
    w = v * np.concatenate([[1.0], np.cumprod(1 - v)[:-1]])
    phi = theta / theta.sum(axis=1, keepdims=True)
    expected = [np.log(sum(w[j] * multinomial.pmf(x, x.sum(), phi[j]) for j in range(3))
                       + np.prod(1 - v) * dirichlet_multinomial.pmf(x, np.full(4, 0.7), x.sum()))
                for x in X]
    assert np.allclose(dp.score_samples(sp.csr_matrix(X)), expected, rtol=1e-12)
    assert np.isclose(dp.score(X), np.mean(expected))


def test_labels_by_blocks_of_rows_are_those_of_all_rows(monkeypatch):
    """``predict`` works on blocks of rows (bounded memory); blocks of one or two rows give
    what one block of every row gives."""
    X, _, _, _ = make_multinomial_mixture(60, 6, 3, random_state=3)
    dp = DPMixture("scir", batch_size=20, max_iter=20, random_state=0).fit(X)
    whole = dp.predict(X), dp.predict_proba(X).argmax(axis=1)
    monkeypatch.setattr(slice_sampler, "BLOCK_VALUES", 2 * dp.components_.shape[0])
    assert len(slice_sampler.row_blocks(X.shape[0], dp.components_.shape[0])) == 30
    assert np.array_equal(dp.predict(X), whole[0])
    assert np.array_equal(whole[0], whole[1])


def test_scores_are_the_log_sum_of_the_weighted_likelihoods_on_any_threads():
    """``mixture_log_likelihood`` (the kernel of ``score_samples``) is scipy's log-sum-exp of
    log w_j + sum_c x_c log phi_jc, with weights of -inf, an empty row and rows thousands of
    nats below most components, and the same values on one thread or three; so is
    ``score_samples``."""
    rng = np.random.default_rng(4)
    X = sp.random(40, 30, density=0.3, random_state=5, format="csr",
                  data_rvs=lambda n: rng.integers(1, 400, n)).astype(np.float64)
    X = sp.vstack([X, sp.csr_matrix((1, 30))]).tocsr()
    log_phi = np.log(np.maximum(rng.dirichlet(np.full(30, 0.05), size=25), 1e-300))
    log_w = np.log(rng.dirichlet(np.ones(25)))
    log_w[[3, 17]] = -np.inf
    expected = logsumexp(log_w + np.asarray(X @ log_phi.T), axis=1)
    layout = kernel_layout(X)
    values = []
    for n_jobs in (1, 3):
        out = np.empty(X.shape[0])
        mixture_log_likelihood(layout.indptr, layout.indices, layout.data, log_phi, log_w,
                               out, n_jobs)
        values.append(out)
    assert np.allclose(values[0], expected, rtol=1e-12, atol=0)
    assert np.array_equal(values[0], values[1])
    assert values[0][-1] == pytest.approx(np.log(np.exp(log_w).sum()), rel=1e-12)
    Y, _, _, _ = make_multinomial_mixture(300, 40, 4, random_state=1)
    dp = DPMixture("scir", batch_size=50, max_iter=30, random_state=0).fit(Y)
    assert np.array_equal(dp.score_samples(Y), dp.set_params(n_jobs=2).score_samples(Y))


def test_predict_proba_is_bayes_rule():
    rng = np.random.default_rng(1)
    X, _, _, _ = make_multinomial_mixture(50, 6, 2, random_state=2)
    dp = DPMixture("scir", batch_size=10, max_iter=20, random_state=0).fit(X)
    log_joint = (np.log(dp.weights_) + np.array(
        [[multinomial.logpmf(x, x.sum(), p) for p in dp.components_] for x in X.toarray()]))
    expected = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    assert np.allclose(dp.predict_proba(X), expected, atol=1e-12)
    del rng


@pytest.mark.slow
@pytest.mark.parametrize("sampler, scans", [*((s, 0) for s in SAMPLERS), ("gibbs", 3),
                                            ("scir", 3)])
def test_reproducible_across_runs_and_threads(mixture, sampler, scans):
    """The same fit for the same seed whatever the threads, with restricted scans too (in the
    exact sampler's moves and in SCIR's pilot); another seed, another fit."""
    X = mixture[0][:600]
    fits = [DPMixture(sampler, batch_size=100, max_iter=30, random_state=7, n_jobs=n_jobs,
                      restricted_scans=scans).fit(X)
            for n_jobs in (1, 1, 2)]
    for other in fits[1:]:
        assert np.array_equal(fits[0].theta_, other.theta_)
        assert np.array_equal(fits[0].sticks_, other.sticks_)
        assert fits[0].alpha_ == other.alpha_
        assert np.array_equal(fits[0].labels_, other.labels_)
    different = DPMixture(sampler, batch_size=100, max_iter=30, random_state=8,
                          restricted_scans=scans).fit(X)
    assert not np.array_equal(fits[0].theta_, different.theta_)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", SAMPLERS)
def test_no_nan_at_extreme_sparsity(sampler):
    """base_concentration 1e-3: Gamma(1e-3) draws underflow in naive code (phi = 0, log 0) and
    a tiny alpha gives v = 1 (log(1 - v) = -inf). Every state and score stays finite over 10^4
    iterations of SCIR and SGRLD and 2,000 of the exact sampler (each of its iterations also
    makes at least 10 split-merge proposals). The cost is per iteration (~0.7 ms, Python and
    scipy.sparse overhead), not per row, so the data are small (20 rows, minibatch 5, 3 initial
    components) to keep each sampler at a few seconds."""
    n_iter = 2_000 if sampler == "gibbs" else 10_000
    X, _, _, _ = make_multinomial_mixture(20, 30, 3, concentration=0.01, row_length=5,
                                          random_state=3)
    dp = DPMixture(sampler, base_concentration=1e-3, alpha_prior=(1.0, 20.0), batch_size=5,
                   initial_components=3, max_iter=n_iter, tol=None, random_state=0,
                   evaluate_every=n_iter // 100)
    dp.fit(X, X_heldout=X)
    for array in (dp.theta_, dp.sticks_, dp.components_, dp.weights_, dp.predict_proba(X)):
        assert np.all(np.isfinite(array))
    assert np.all(dp.theta_ > 0) and np.all(dp.sticks_ > 0)
    assert all(np.isfinite(h["alpha"]) and h["alpha"] > 0 and np.isfinite(h["score"])
               for h in dp.history_)
    assert len(dp.history_) == 100


@pytest.mark.parametrize("mean_count", [1.0, 1000.0])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("K, d", [(9, 6), (150, 23)])
def test_allocation_kernel_draws_the_inverse_cdf_of_the_slice_conditional(weighted, mean_count,
                                                                         K, d):
    """Each row's component is the inverse CDF, at its uniform and in the components' order, of
    ``p(j) ∝ 1(w_j >= u_i) [w_j] Mult(x_i | phi_j)``, written here in numpy, whatever order of
    the weights the kernel works in; -1 where no weight reaches the slice. The components below
    every slice are not read (their log phi NaN here). Rows of 6,000 counts put most
    candidates more than 64 nats below the best, which the kernel gives 0 without exp: the
    draws are still those of every candidate's exact share.
    150 components span three words of the kernel's bitmap of candidates, and rows of up to
    23 categories take its four-counts-at-once path and a remainder."""
    rng = np.random.default_rng(5)
    n = 400
    X = sp.csr_matrix(rng.poisson(mean_count, size=(n, d)).astype(np.float64))
    log_phi = np.log(rng.dirichlet(np.ones(d), size=K))
    log_w = np.log(rng.dirichlet(np.ones(K)))                  # unsorted weights
    log_slice = np.log(rng.random(n)) + np.where(rng.random(n) < 0.05, 5.0, -1.0)
    log_slice = np.maximum(log_slice, np.sort(log_w)[2])   # two components below every slice
    uniforms = rng.random(n)
    log_p = np.asarray(X @ log_phi.T) + (log_w if weighted else 0.0)
    log_p[log_w[None, :] < log_slice[:, None]] = -np.inf
    expected = np.full(n, -1)
    for i in np.flatnonzero(np.isfinite(log_p).any(axis=1)):
        p = np.exp(log_p[i] - log_p[i].max())
        expected[i] = np.flatnonzero(np.cumsum(p) > uniforms[i] * p.sum())[0]
    z = np.empty(n, dtype=np.int64)
    log_phi[log_w < log_slice.min()] = np.nan              # no row can join them: never read
    missing = slice_allocate(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data,
                             log_phi, log_w, log_slice, uniforms, z, weighted, 2)
    assert missing == np.count_nonzero(expected < 0) > 0
    assert np.array_equal(z, expected)


@pytest.mark.parametrize("counts, best", [(1000.0, -1.0), (10.0, -1.0), (16.0, -44.0)])
@pytest.mark.parametrize("gap, expected", [(60.0, 0), (68.0, 1)])
def test_the_allocation_drops_a_candidate_only_below_the_totals_rounding(gap, expected, counts,
                                                                         best):
    """At uniform 0 a row takes the first component in label order of positive weight.
    Component 0, ``gap`` nats below component 1: at 60 its share exp(-60) is kept, and the
    row takes it; at 68, past the kernel's 64 nats, it is 0 (a share below 2^-53 of the total
    even summed over 10^9 such candidates), and the row takes 1. So on a row of 1,000 counts
    (exps of sums of logs), of 10 (products of probabilities), and of 16 whose best product,
    e^-704, is below what the product path accepts (1e-270): the row falls back on sums of
    logs."""
    X = sp.csr_matrix(np.array([[counts, 0.0]]))
    log_phi = np.array([[best - gap / counts, -1.0], [best, -1.0]])
    z = np.empty(1, dtype=np.int64)
    slice_allocate(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, log_phi,
                   np.log([0.5, 0.5]), np.array([-np.inf]), np.zeros(1), z)
    assert z[0] == expected


@pytest.mark.parametrize("gap, best, expected", [(63.99, -83.7, 0), (64.01, -83.8, 1)])
def test_the_allocation_decides_the_cut_on_exact_sums_not_the_float_screen(gap, best,
                                                                           expected):
    """A row of 10^5 counts of one category: sums near -8.4 x 10^6 nats, where float32 is
    0.5 apart. Component 0 ``gap`` nats below component 1 (``best`` a count): in float32 the
    two gaps cross 64 the other way (63.99 reads as 64.5, 64.01 as 63), so a draw on the
    float sums would drop the first and keep the second. The kernel screens in float32
    within a bound on that error and decides on the exact sums: at uniform 0 the row takes
    component 0 when its share exp(-63.99) is kept, component 1 when exp(-64.01) is not. 38
    more components, far below, make the row one the kernel screens (at least 32
    candidates)."""
    x = 1e5
    log_phi = np.array([[best - gap / x, -1.0], [best, -1.0]] + [[3 * best, -1.0]] * 38)
    float_gap = np.float32(x) * np.float32(best) - np.float32(x) * np.float32(log_phi[0, 0])
    assert (float_gap > 64) if gap < 64 else (float_gap < 64)
    X = sp.csr_matrix(np.array([[x, 0.0]]))
    z = np.empty(1, dtype=np.int64)
    slice_allocate(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, log_phi,
                   np.full(40, -np.log(40)), np.array([-np.inf]), np.zeros(1), z)
    assert z[0] == expected


def test_the_allocations_log_phi_is_of_the_components_it_reads():
    """``log_components``: the log of the normalised rows named, 0 in the others."""
    theta = np.random.default_rng(2).gamma(0.3, size=(5, 7)) + 1e-300
    rows = np.array([0, 3, 4])
    log_phi = log_components(theta, rows, 2)
    normalised = theta[rows] / theta[rows].sum(axis=1, keepdims=True)
    np.testing.assert_allclose(log_phi[rows], np.log(normalised), rtol=1e-13)
    assert np.all(log_phi[[1, 2]] == 0.0)


@pytest.mark.parametrize("sampler", ["gibbs", "scir"])
def test_components_no_row_can_join_are_not_drawn_and_never_kept(mixture, sampler, monkeypatch):
    """A sweep's new sticks below every row's slice get placeholder components (1 in every
    category), not draws from the base measure. No row joins one, and the update drops them or
    redraws them as empty before any step moves them: no state of the chain holds one."""
    def placeholders(theta):
        return np.flatnonzero(np.all(theta == 1.0, axis=1))

    skipped, joined, stepped, states = [], [], [], []
    allocate, update = slice_sampler.allocate, slice_sampler.update
    extend, step = slice_sampler.extend, slice_sampler._simplex_step

    def spy_extend(state, sticks, base, rng, n_jobs=1, drawn=None):
        skipped.append(0 if drawn is None else np.count_nonzero(~drawn))
        return extend(state, sticks, base, rng, n_jobs, drawn)

    def spy_allocate(*args):
        state, labels = allocate(*args)
        joined.append(np.isin(labels, placeholders(state.theta)).any())
        return state, labels

    def spy_step(kernel, name, t, theta, *args):
        stepped.append(placeholders(theta).size)
        return step(kernel, name, t, theta, *args)

    def spy_update(*args, **kwargs):
        states.append(update(*args, **kwargs))
        return states[-1]
    for name, spy in [("extend", spy_extend), ("allocate", spy_allocate),
                      ("_simplex_step", spy_step), ("update", spy_update)]:
        monkeypatch.setattr(slice_sampler, name, spy)
    DPMixture(sampler, max_iter=10, tol=None, batch_size=500, random_state=0).fit(mixture[0])
    assert sum(skipped) > 0 and len(joined) == len(states) > 0
    assert not any(joined) and not any(stepped)
    assert not any(placeholders(state.theta).size for state in states)


@pytest.mark.parametrize("sampler", ["gibbs", "scir"])
def test_a_placeholder_below_the_last_occupied_component_is_redrawn(sampler, monkeypatch):
    """A placeholder component (1 in every category) that no row joined, below an occupied
    one, is redrawn before the step moves it (SCIR), or drawn anew with every component
    (exact Gibbs): the update never starts from it."""
    X = sp.csr_array(np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 2.0], [1.0, 1.0, 1.0]]))
    z = np.array([0, 2, 2])
    state = slice_sampler.ChainState(np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0],
                                               [2.0, 1.0, 1.0]]), np.ones((3, 2)), 1.0)
    kernel = slice_sampler.Kernel(sampler, 0.5, 1.0, 1.0, step_class=SCIR, step_size=0.1,
                                  stick_step_size=0.1)
    started, step = [], slice_sampler._simplex_step

    def spy_step(kernel, name, t, theta, *args):
        if name == "step_size":                       # the components' step, not the sticks'
            started.append(theta.copy())
        return step(kernel, name, t, theta, *args)
    monkeypatch.setattr(slice_sampler, "_simplex_step", spy_step)
    new = slice_sampler.update(state, kernel, LocalExecutor(), X, z, 1.0, 0,
                               np.random.default_rng(0), kept=z.copy())
    assert len(started) == (sampler == "scir")
    for theta in started + [new.theta]:
        assert not np.all(theta[1] == 1.0)


def test_the_executors_component_counts_are_the_rows_summed_by_component():
    """``LocalExecutor.counts`` (one pass in the kernel) equals the sparse product of
    ``component_counts`` and a dense sum per component, for rows in scipy's int32 layout,
    components left empty included; the kernel refuses a component or a column out of
    range instead of writing outside its array."""
    rng = np.random.default_rng(11)
    X = sp.random(300, 17, density=0.2, format="csr", random_state=rng,
                  data_rvs=lambda size: rng.integers(1, 9, size)).astype(np.float64)
    z = rng.integers(0, 6, size=300) * 2                     # odd components empty
    counts = LocalExecutor.counts(X, z, 12)
    assert counts.shape == (12, 17)
    assert np.array_equal(counts, component_counts(X, z, 12).toarray())
    dense = X.toarray()
    assert np.array_equal(counts, np.stack([dense[z == j].sum(axis=0) for j in range(12)]))
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data)
    with pytest.raises(ValueError, match="components outside"):
        summed_by_component(*args, z, 10, 17)
    with pytest.raises(ValueError, match="columns outside"):
        summed_by_component(*args, z, 12, 16)


#: Runs in a child process: slice_allocate with 64 MB of scratch space to find (8M components)
#: once the address space is capped at 16 MB above what the process already holds.
_OUT_OF_MEMORY = """
import resource
import numpy as np
from simplexsg._ext._dp import slice_allocate
K = 1 << 23
log_phi, log_weight, one = np.zeros((K, 1)), np.zeros(K), np.zeros(1)
pages = int(open("/proc/self/statm").read().split()[0])
limit = pages * resource.getpagesize() + (16 << 20)
resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
try:
    slice_allocate(np.array([0, 1]), np.zeros(1, np.int64), np.ones(1), log_phi, log_weight,
                   one, one, np.empty(1, np.int64))
except MemoryError as error:
    print("MemoryError:", error)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_allocation_kernel_raises_memory_error():
    """The kernel's scratch space cannot be had: MemoryError naming it (#12: the unchecked
    malloc returned NULL and the kernel wrote through it, a segmentation fault)."""
    child = subprocess.run([sys.executable, "-c", _OUT_OF_MEMORY], capture_output=True,
                           text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    assert "MemoryError: slice_allocate: no memory for the scratch space" in child.stdout


def test_fit_updates_one_allocation_array(mixture, monkeypatch):
    """fit writes each minibatch's allocations into one array of its own, in place (#12: it was
    copied every iteration); an iteration that fails half-way is undone, rows included."""
    X = mixture[0][:300]
    previous = DPMixture("scir", batch_size=100, max_iter=5, random_state=0).fit(X)._z
    seen, update = [], slice_sampler.update

    def update_then_fail(state, kernel, executor, X, z, scale, t, rng, kept=None,
                         established=None):
        seen.append((kept, kept.copy()))
        state = update(state, kernel, executor, X, z, scale, t, rng, kept, established)
        if t == 4:
            raise RuntimeError("interrupted")
        return state

    monkeypatch.setattr(slice_sampler, "update", update_then_fail)
    dp = DPMixture("scir", batch_size=100, max_iter=5, init="random", random_state=1)
    with pytest.raises(RuntimeError, match="interrupted"):
        dp.fit(X)
    assert len(seen) == 5 and all(z is seen[0][0] for z, _ in seen) and seen[0][0] is not previous
    assert dp.n_iter_ == 4 and dp.interrupted_
    np.testing.assert_array_equal(dp._z, seen[3][1])        # as after iteration 3


def test_history_records_iterations(mixture):
    X = mixture[0]
    dp = DPMixture("scir", batch_size=500, max_iter=20, evaluate_every=5, tol=None,
                   random_state=0)
    dp.fit(X[:1500], X_heldout=X[1500:])
    assert [h["iteration"] for h in dp.history_] == [5, 10, 15, 20]
    assert all(h["score"] < 0 and h["n_components"] >= 1 and h["alpha"] > 0 for h in dp.history_)
    seconds = [h["seconds"] for h in dp.history_]
    assert seconds == sorted(seconds)
    assert DPMixture("scir", max_iter=3).fit(X).history_ == []


def test_partial_fit_streams_minibatches(mixture):
    X, labels, _, _ = mixture
    dp = DPMixture("scir", batch_size=200, total_samples=X.shape[0], random_state=0)
    for _ in range(15):
        for start in range(0, X.shape[0], 200):
            dp.partial_fit(X[start:start + 200])
    assert dp.n_iter_ == 150
    assert adjusted_rand_score(labels, dp.predict(X)) >= 0.9
    # without total_samples: scikit-learn's default N = 10^6, said in a warning; after fit,
    # fit's N
    with pytest.warns(UserWarning, match="scaled to 1000000 rows"):
        assert DPMixture("scir", random_state=0).partial_fit(X[:50]).total_samples_ == 1_000_000
    fitted = DPMixture("scir", batch_size=100, max_iter=2, random_state=0).fit(X[:300])
    assert fitted.partial_fit(X[:50]).total_samples_ == 300


def test_a_minibatch_of_new_rows_keeps_the_components_that_hold_a_row():
    """Rows new to the chain cannot say which components the other rows use: truncation and
    the summary keep every component up to the last one expected to hold a row of the data
    (weight >= 1 / N), used by the minibatch or not; past it, the minibatch decides."""
    weights = np.array([0.9, 0.09, 0.009, 0.0009])     # and a leftover of 1e-4
    before = 1.0 - np.concatenate([[0.0], np.cumsum(weights)[:-1]])
    v = weights / before
    state = slice_sampler.ChainState(np.ones((4, 3)), np.column_stack([v, 1.0 - v]), 1.0)
    kernel = slice_sampler.Kernel("scir", 0.5, 1.0, 1.0, step_class=SCIR, step_size=0.1,
                                  stick_step_size=0.1)
    X = sp.csr_matrix(np.array([[1, 0, 0], [0, 2, 0]]))
    z = np.array([0, 0])                           # the minibatch uses component 0 only

    def kept_after(n_total):
        rng = np.random.default_rng(0)
        new = slice_sampler.update(state, kernel, LocalExecutor(), X, z, n_total / 2, 0, rng)
        return new.sticks.shape[0], slice_sampler.summary(state, z, n_total).occupied.size

    assert kept_after(100) == (2, 2)               # 0.009 < 1 / 100: components 2, 3 go
    assert kept_after(1_000) == (3, 3)
    assert kept_after(10_000) == (4, 4)            # 0.0009 >= 1 / 10,000: all stay
    # rows whose allocations the chain keeps decide alone
    rng = np.random.default_rng(0)
    new = slice_sampler.update(state, kernel, LocalExecutor(), X, z, 5_000.0, 0, rng,
                               kept=np.zeros(10_000, dtype=np.int64))
    assert new.sticks.shape[0] == 1 and slice_sampler.summary(state, z).occupied.size == 1


def test_a_component_born_in_the_minibatch_counts_its_rows_as_they_are():
    """A minibatch's counts move the sticks and components scaled by N / n, as estimates of
    the full-data counts; a component drawn in this iteration holds no row outside the
    minibatch (their allocations predate it), so its counts are exact as they are. With a step
    long enough to be an exact draw (h = 50: e^-50 of the state remains), each stick and
    component is drawn from its target, so E[v_j] = (1 + m_j) / (1 + alpha + m_j + M_j) and
    E[theta_jc] = base + counts_jc, with m_j the rows in j and M_j the rows after it: each
    within 5 Monte Carlo standard errors of the exact Beta and Gamma moments over 2,000 draws
    (the largest over seeds 0-9: 2.0).
    Scaling the born component's row as well (m_2 = 50) would move E[v_2] from 2/3 to 51/52,
    E[v_0] from 51/103 to 51/152 and E[theta_22] from 4.5 to 200.5: hundreds of errors."""
    alpha, base, scale, n_draws = 1.0, 0.5, 50.0, 2_000
    state = slice_sampler.ChainState(np.ones((3, 3)), np.full((3, 2), 1.0), alpha)
    kernel = slice_sampler.Kernel("scir", base, 1.0, 1.0, step_class=SCIR, step_size=50.0,
                                  stick_step_size=50.0)
    X = sp.csr_matrix(np.array([[2, 0, 0], [0, 3, 0], [0, 0, 4]]))
    z = np.array([0, 1, 2])                 # component 2 was drawn this iteration
    rng = np.random.default_rng(0)
    v, theta = np.empty((n_draws, 3)), np.empty((n_draws, 3, 3))
    for r in range(n_draws):
        new = slice_sampler.update(state, kernel, LocalExecutor(), X, z, scale, 0, rng,
                                   established=2)
        v[r] = new.sticks[:, 0] / new.sticks.sum(axis=1)
        theta[r] = new.theta
    m = np.array([scale, scale, 1.0])                       # the born row counts once
    after = np.array([scale + 1.0, 1.0, 0.0])
    a, b = 1.0 + m, alpha + after
    v_mean, v_var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1.0))
    assert np.all(np.abs(v.mean(axis=0) - v_mean) <= 5 * np.sqrt(v_var / n_draws)), v.mean(0)
    shape = base + X.toarray() * np.array([[scale], [scale], [1.0]])
    # Gamma(shape, 1): mean and variance both equal the shape
    assert np.all(np.abs(theta.mean(axis=0) - shape) <= 5 * np.sqrt(shape / n_draws))


def test_expected_clusters_is_the_sum_of_the_dp_prior():
    for alpha, n in [(0.3, 1), (2.0, 50), (40.0, 7000)]:
        assert defaults.expected_clusters(alpha, n) == pytest.approx(
            np.sum(alpha / (alpha + np.arange(n))), rel=1e-10)


@pytest.mark.parametrize("settings, warm", [
    (dict(max_iter=12, tol=None), 6),                        # half of the iterations
    (dict(max_iter=40, tol=0.9), 11),     # the sweep after the check at 10, no progress
])
def test_after_its_warm_up_the_exact_chain_makes_a_count_of_moves_set_by_alpha(
        mixture, monkeypatch, settings, warm):
    """The exact sampler's "auto" moves: a work budget until the chain settles (the sweep
    after a convergence check without progress) or half of its iterations; then the last
    budgeted sweep's proposals scaled by the square root of the clusters expected given each
    sweep's alpha, whatever its allocations (so that the moves leave the posterior invariant,
    tests/dpmixture/test_dp_split_merge.py)."""
    from simplexsg.dpmixture import split_merge
    X = mixture[0][:800]
    calls, run = [], split_merge.SplitMerge.run

    def recorded(self, z, alpha, rng, n_proposals, row_budget=0, n_jobs=1):
        accepted = run(self, z, alpha, rng, n_proposals, row_budget, n_jobs)
        calls.append((alpha, n_proposals, row_budget, self.proposed))
        return accepted

    monkeypatch.setattr(split_merge.SplitMerge, "run", recorded)
    monkeypatch.setattr(slice_sampler, "SPLIT_MERGE_WORK", 10.0)   # counts above the minimum
    model = DPMixture("gibbs", init="random", random_state=0, **settings).fit(X)
    assert len(calls) == model.n_iter_ > warm
    assert all(budget > 0 and made >= defaults.MIN_SPLIT_MERGE
               for _, _, budget, made in calls[:warm])
    alpha, _, _, made = calls[warm - 1]
    scale = made / np.sqrt(defaults.expected_clusters(alpha, X.shape[0]))
    assert model._moves_scale == scale
    assert defaults.split_merge_count(scale, alpha, X.shape[0]) == max(
        made, defaults.MIN_SPLIT_MERGE)
    for alpha, n_proposals, budget, made in calls[warm:]:
        assert budget == 0 and made == n_proposals == defaults.split_merge_count(
            scale, alpha, X.shape[0])
    assert len({made for *_, made in calls[warm:]}) > 1       # alpha moves it


@pytest.mark.parametrize("sampler", ["gibbs", "scir"])
def test_the_pilot_chain_runs_the_samplers_sweeps_and_moves(sampler, mixture, monkeypatch):
    """The exact sampler's pilot: PILOT_ITER sweeps of at most PILOT_SPLIT_MERGE proposals; a
    minibatch sampler's (its chain adds no cluster): MINIBATCH_PILOT_ITER sweeps of "auto"
    proposals."""
    from simplexsg.dpmixture import init
    kernels, iterate = [], init.iterate

    def recorded(state, kernel, *args, **kwargs):
        kernels.append(kernel.split_merge)
        return iterate(state, kernel, *args, **kwargs)

    monkeypatch.setattr(init, "iterate", recorded)
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_ITER", 7)
    monkeypatch.setattr(defaults, "PILOT_ITER", 4)
    X = mixture[0][:30]
    DPMixture(sampler, max_iter=1, batch_size=10, random_state=0).fit(X)
    expected = [min(defaults.PILOT_SPLIT_MERGE, 30)] * 4 if sampler == "gibbs" else ["auto"] * 7
    assert kernels == expected
    kernels.clear()                 # a budget spent at once: the pilot stops after one sweep
    DPMixture(sampler, max_iter=1, max_time=1e-9, batch_size=10, random_state=0).fit(X)
    assert kernels == expected[:1]


@pytest.mark.parametrize("tol, sweeps", [(-1.0, 40), (0.0, None), (0.99, 20)])
def test_the_pilot_stops_on_a_plateau_of_its_check(tol, sweeps, mixture, monkeypatch):
    """The exact sampler's pilot scores its monitor rows every GIBBS_CHECK_SWEEPS sweeps and
    stops once PILOT_PATIENCE scores in a row miss PILOT_TOL: a tolerance no score misses runs
    every sweep; one every score after the first misses stops after 1 + PILOT_PATIENCE checks;
    with tol 0 (any gain counts) it stops at the first PILOT_PATIENCE misses in a row. The
    state it stops at is the one the fit starts from."""
    from simplexsg.dpmixture import init
    scores, run, log_predictive = [], init.run_pilot, init.log_predictive

    def scored(theta, sticks, base, X, n_jobs):
        value = log_predictive(theta, sticks, base, X, n_jobs)
        scores.append((X.shape[0], theta.shape[0], -value.mean()))
        return value

    monkeypatch.setattr(init, "log_predictive", scored)
    monkeypatch.setattr(init, "PILOT_TOL", tol)
    monkeypatch.setattr(defaults, "PILOT_ITER", 40)
    X = mixture[0][:1500]
    found = []
    monkeypatch.setattr(init, "run_pilot", lambda *a, **k: found.append(run(*a, **k)) or found[-1])
    DPMixture("gibbs", max_iter=1, random_state=0).fit(X)
    assert {rows for rows, _, _ in scores} == {defaults.MONITOR_ROWS}   # of 1,500 rows
    checks = len(scores)
    if sweeps is not None:
        assert checks * defaults.GIBBS_CHECK_SWEEPS == sweeps
    else:       # stopped at the first check after PILOT_PATIENCE that failed to improve
        values = [s for _, _, s in scores]
        best = [min(values[:i]) for i in range(1, checks)]
        misses = [v >= b for v, b in zip(values[1:], best)]
        patience = defaults.PILOT_PATIENCE
        assert checks == 8 or misses[-patience:] == [True] * patience
        assert not any(misses[i:i + patience] == [True] * patience
                       for i in range(len(misses) - patience))
    assert found[-1][0].theta.shape[0] == scores[-1][1]


@pytest.mark.parametrize("budget", [0.0, 0.5, np.inf])
def test_a_minibatch_samplers_pilot_stops_once_its_work_is_done(budget, mixture, monkeypatch):
    """SCIR's pilot adds each sweep's ``allocation_visits`` (from the state the sweep starts
    at) and PASS_ROW_VISITS per row its moves' passes went over, and stops after
    the sweep that brings the sum to MINIBATCH_PILOT_WORK (here ``budget`` times the work of
    all its sweeps; no plateau: PILOT_TOL -1)."""
    from simplexsg.dpmixture import init, split_merge
    X = mixture[0][:600]
    visits, moves, visited = [], [], init.allocation_visits
    monkeypatch.setattr(init, "allocation_visits",
                        lambda *a: visits.append(visited(*a)) or visits[-1])
    made = split_merge.SplitMerge.__init__
    monkeypatch.setattr(split_merge.SplitMerge, "__init__",
                        lambda self, *a, **k: (moves.append(self), made(self, *a, **k))[1])
    monkeypatch.setattr(init, "PILOT_TOL", -1.0)
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_ITER", 30)
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_WORK", np.inf)
    DPMixture("scir", max_iter=1, batch_size=100, random_state=0).fit(X)
    assert len(visits) == 30
    passed = moves[0].rows_passed
    assert passed > 0
    total = sum(visits) + defaults.PASS_ROW_VISITS * passed
    visits.clear()
    first = len(moves)
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_WORK", budget * total)
    DPMixture("scir", max_iter=1, batch_size=100, random_state=0).fit(X)
    if budget == 0.0:
        assert len(visits) == 1
    elif budget == np.inf:
        assert len(visits) == 30
    else:        # each sweep's moves are at least a pass: it stops once past the budget
        assert 1 < len(visits) < 30
        passes = defaults.PASS_ROW_VISITS * moves[first].rows_passed
        assert sum(visits) + passes >= budget * total
        assert sum(visits[:-1]) < budget * total


@pytest.mark.parametrize("sampler", ["scir", "gibbs"])
def test_a_minibatch_samplers_pilot_waits_for_its_clusters_to_settle(sampler, mixture,
                                                                     monkeypatch):
    """With a plateau from the fourth check on (PILOT_TOL 0.99), the exact sampler's pilot
    stops there; SCIR's stops at the first check from there on where ``settled`` holds for
    the occupied components of its checks so far."""
    from simplexsg.dpmixture import init
    occupied, settled = [], init.settled
    monkeypatch.setattr(init, "settled", lambda counts: (occupied.append(list(counts)),
                                                         settled(counts))[1])
    checks, log_predictive = [], init.log_predictive
    monkeypatch.setattr(init, "log_predictive",
                        lambda *a: (checks.append(1), log_predictive(*a))[1])
    monkeypatch.setattr(init, "PILOT_TOL", 0.99)
    monkeypatch.setattr(init, "PILOT_CLUSTERS_TOL", 0.0)      # settled: no change at all
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_ITER", 60)
    monkeypatch.setattr(defaults, "PILOT_ITER", 60)
    DPMixture(sampler, max_iter=1, batch_size=100, random_state=0).fit(mixture[0][:600])
    if sampler == "gibbs":
        assert len(checks) == 1 + defaults.PILOT_PATIENCE and not occupied
        return
    assert [len(counts) for counts in occupied] == list(range(4, len(checks) + 1))
    assert len(checks) > defaults.PILOT_CLUSTERS_CHECKS + 1   # no earlier than that allows
    assert [settled(counts) for counts in occupied] == [False] * (len(occupied) - 1) + [
        len(checks) < 12]
    assert len(checks) > 4       # the clusters of this pilot still move at its fourth check


def test_settled_compares_the_occupied_components_some_checks_apart(monkeypatch):
    """``settled``: |last - the one PILOT_CLUSTERS_CHECKS checks before| <= PILOT_CLUSTERS_TOL
    x that one; False until there are PILOT_CLUSTERS_CHECKS + 1 checks."""
    from simplexsg.dpmixture import init
    monkeypatch.setattr(init, "PILOT_CLUSTERS_CHECKS", 2)
    monkeypatch.setattr(init, "PILOT_CLUSTERS_TOL", 0.1)
    assert not init.settled([100, 100])
    assert init.settled([100, 300, 110]) and init.settled([100, 0, 90])
    assert not init.settled([100, 100, 111]) and not init.settled([5, 100, 100, 89])


def test_allocation_visits_are_the_kernels_candidates_times_counts_in_expectation():
    """``allocation_visits``: each row's stored counts times the components whose weight
    reaches its slice u ~ U(0, w_z), in expectation; against the mean over 4,000 draws of
    the slices (tolerance 5 standard errors)."""
    rng = np.random.default_rng(4)
    sticks = slice_sampler.prior_sticks(30, 3.0, rng)
    log_w = slice_sampler.log_weights(sticks)[0]
    z = rng.choice(30, size=200, p=np.exp(log_w) / np.exp(log_w).sum())
    entries = rng.integers(1, 9, size=200)
    draws = np.empty(4000)
    for d in range(draws.size):
        log_u = log_w[z] + np.log1p(-rng.random(z.size))
        draws[d] = entries @ (log_w[None, :] >= log_u[:, None]).sum(axis=1)
    expected = slice_sampler.allocation_visits(sticks, z, entries)
    assert abs(draws.mean() - expected) <= 5 * draws.std() / np.sqrt(draws.size)
    assert expected >= entries.sum()             # its own component, at least


def test_sticks_to_draw_take_the_leftover_below_the_slice_in_expectation():
    """``sticks_to_draw``: as many sticks from the prior as take the log leftover mass to the
    slice on average (each -log(1 - v) has mean 1 / alpha), at least NEW_STICKS: over 2,000
    draws at alpha 300 the leftover falls by 20 nats within 5 standard errors, in one draw
    where NEW_STICKS at a time took hundreds."""
    rng = np.random.default_rng(5)
    n = slice_sampler.sticks_to_draw(-1.0, -21.0, 300.0)
    assert n == 6000
    assert slice_sampler.sticks_to_draw(-1.0, -1.001, 300.0) == slice_sampler.NEW_STICKS
    falls = np.array([-slice_sampler.log_weights(slice_sampler.prior_sticks(n, 300.0, rng))[1]
                      for _ in range(2000)])
    assert abs(falls.mean() - 20.0) <= 5 * falls.std() / np.sqrt(falls.size)


def test_the_residual_rows_are_those_the_clusters_explain_worst(monkeypatch):
    """``residual_rows``: with one cluster's component only, the rows of a second cluster
    come first, up to RESIDUAL_SHARE of the rows; at most the minibatch pilot's rows and
    stored counts."""
    from simplexsg.dpmixture import init
    X, labels = make_multinomial_mixture(3000, 60, 2, weights=[0.8, 0.2], concentration=0.1,
                                         row_length=8, random_state=3)[:2]
    X = sp.csr_array(X)
    big = np.argmax(np.bincount(labels))
    counts = np.asarray(X[labels == big].sum(axis=0)).ravel() + 0.5
    found = slice_sampler.Summary(np.array([0]), np.array([1.0]),
                                  (counts / counts.sum())[None], np.zeros(3000, dtype=int))
    rows = init.residual_rows(X, found, 0.5)
    assert rows.size == int(defaults.RESIDUAL_SHARE * 3000) and np.all(np.diff(rows) > 0)
    small = np.flatnonzero(labels != big)
    assert np.isin(small, rows).mean() > 0.95          # nearly all of the other cluster's rows
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_ROWS", 100)
    assert init.residual_rows(X, found, 0.5).size == 100
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_ENTRIES", 50)
    rows = init.residual_rows(X, found, 0.5)
    assert X[rows].nnz <= 50 and rows.size >= 50 // 8          # rows of at most 8 counts


@pytest.mark.parametrize("sampler, rows, below, second", [
    ("gibbs", 500, None, True), ("gibbs", None, None, False), ("scir", 500, None, False),
    ("gibbs", 500, 100, False)])
def test_the_exact_samplers_pilot_start_adds_a_second_pilot_on_the_residual_rows(
        sampler, rows, below, second, mixture, monkeypatch):
    """The exact sampler's start, when its pilot saw a subset of the rows holding fewer than
    RESIDUAL_BELOW_ENTRIES stored counts, runs a second pilot chain on ``residual_rows`` from
    RESIDUAL_COMPONENTS components with ``residual_chain``'s sweeps and moves, and starts from
    both pilots' clusters; not when the pilot saw every row, nor when its rows hold that many
    counts (500 rows of up to 20 against a bound of 100), nor for SCIR."""
    from simplexsg.dpmixture import init
    if below is not None:
        monkeypatch.setattr(init, "RESIDUAL_BELOW_ENTRIES", below)
    calls, run = [], init.run_pilot

    def recorded(X, params, seed, chain=None, components=None, **kwargs):
        state, found, spare = run(X, params, seed, chain, components, **kwargs)
        calls.append((X.shape[0], chain, components, found.occupied.size))
        return state, found, spare

    monkeypatch.setattr(init, "run_pilot", recorded)
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_ITER", 10)
    monkeypatch.setattr(defaults, "PILOT_ITER", 10)
    model = DPMixture(sampler, max_iter=1, init_rows=rows, random_state=0).fit(mixture[0])
    assert len(calls) == 1 + second
    if second:
        assert calls[1][:3] == (int(defaults.RESIDUAL_SHARE * 2000), defaults.residual_chain(),
                                defaults.RESIDUAL_COMPONENTS)
        assert calls[1][3] >= 1
    assert model.n_iter_ == 1


@pytest.mark.parametrize("below, nested", [(None, True), (10, False)])
def test_a_minibatch_samplers_pilot_on_short_rows_starts_as_the_exact_sampler(
        below, nested, mixture, monkeypatch):
    """SCIR's pilot on a subset of short rows (here 1,000 of 2,000) starts from
    ``exact_start``: the exact sampler's pilot on PILOT_ROWS of them (100 here), then its
    second pilot on the rows that pilot explains worst; the pilot chain on all 1,000 rows
    starts from both pilots' clusters, every row allocated to them. Where the subset's rows
    hold RESIDUAL_BELOW_ENTRIES counts, the pilot starts at random, as before. With
    ``max_time`` the three chains share one deadline, PILOT_TIME_SHARE of it, as do the
    exact sampler's own two."""
    from simplexsg.dpmixture import init
    monkeypatch.setattr(init, "PILOT_ROWS", 100)
    if below is not None:
        monkeypatch.setattr(init, "RESIDUAL_BELOW_ENTRIES", below)
    calls, run = [], init.run_pilot

    def recorded(X, params, seed, chain=None, components=None, start=None, **kwargs):
        state, found, spare = run(X, params, seed, chain, components, start, **kwargs)
        calls.append(dict(rows=X.shape[0], chain=chain, sampler=params.sampler, start=start,
                          occupied=found.occupied.size, deadline=kwargs.get("deadline")))
        return state, found, spare

    monkeypatch.setattr(init, "run_pilot", recorded)
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_ITER", 10)
    monkeypatch.setattr(defaults, "PILOT_ITER", 10)
    DPMixture("scir", max_iter=1, init_rows=1000, random_state=0).fit(mixture[0])
    if not nested:
        assert len(calls) == 1 and calls[0]["start"] is None and calls[0]["rows"] == 1000
        return
    first, second, pilot = calls
    assert (first["rows"], first["chain"], first["sampler"]) == (100, None, "gibbs")
    assert second["rows"] == int(defaults.RESIDUAL_SHARE * 1000)
    assert second["chain"] == defaults.residual_chain()
    assert pilot["rows"] == 1000 and pilot["chain"] is None and pilot["sampler"] == "scir"
    assert pilot["start"].theta.shape[0] == first["occupied"] + second["occupied"]
    assert {call["deadline"] for call in calls} == {None}
    calls.clear()
    before = time.perf_counter()
    DPMixture("scir", max_iter=1, init_rows=1000, max_time=1000.0, random_state=0).fit(
        mixture[0])
    deadlines = {call["deadline"] for call in calls}
    assert len(calls) == 3 and len(deadlines) == 1
    assert 0 < deadlines.pop() - before - defaults.PILOT_TIME_SHARE * 1000.0 < 5.0
    calls.clear()            # the exact sampler's two pilots share one deadline too
    DPMixture("gibbs", max_iter=1, init_rows=1000, max_time=1000.0, random_state=0).fit(
        mixture[0])
    assert len(calls) == 2 and len({call["deadline"] for call in calls}) == 1


@pytest.mark.parametrize("initial_components, copies", [(2, 1), (40, 8)])
def test_scir_starts_from_the_pilots_clusters_alone(initial_components, copies, mixture,
                                                    monkeypatch):
    """A pilot on a subset (500 of 2,000 rows; its chain holds empty components below its
    last occupied label) starts SCIR from its occupied clusters only, each with its share of
    the weight, or from copies of each when it found fewer than ``initial_components``: the
    empty components, draws from the base measure, would only cost every row's draw. The
    start is at the scale of the 2,000 rows, not of the pilot's 500."""
    from simplexsg.dpmixture import init
    pilots, starts, run, provision = [], [], init.run_pilot, init.over_provision

    def pilot(*args, **kwargs):
        pilots.append(run(*args, **kwargs))
        return pilots[-1]

    def over_provision(state, found, X_pilot, copies, base, rng, n_total):
        starts.append((copies, provision(state, found, X_pilot, copies, base, rng, n_total),
                       X_pilot))
        return starts[-1][1]

    monkeypatch.setattr(init, "run_pilot", pilot)
    monkeypatch.setattr(init, "over_provision", over_provision)
    DPMixture("scir", initial_components=initial_components, init_rows=500, max_iter=1,
              random_state=0).fit(mixture[0])
    (state, found, _), = pilots
    (made, start, X_pilot), = starts
    assert state.theta.shape[0] > found.occupied.size == 5      # empty components left out
    assert made == copies and start.theta.shape[0] == copies * found.occupied.size
    weights = np.exp(slice_sampler.log_weights(start.sticks)[0])
    assert np.allclose(weights, np.repeat(found.weights / copies, copies), rtol=1e-5)
    # at the scale of the 2,000 rows: a copy's components total Gamma(d base + its share of
    # the cluster's pilot counts times 4), a stick's the rows from it on plus 1 + alpha
    n_total, scale = 2000, 2000 / 500 / copies
    tokens = np.bincount(found.labels, weights=np.asarray(X_pilot.sum(axis=1)).ravel())
    shape = X_pilot.shape[1] * 0.5 + scale * np.repeat(tokens, copies)
    z = (start.theta.sum(axis=1) - shape) / np.sqrt(shape)   # standardised Gamma totals
    assert np.all(np.abs(z) < 4), z
    kept = np.repeat(found.weights / copies, copies) * (1 - slice_sampler.LEFTOVER_TOLERANCE)
    before = 1 - np.concatenate([[0.0], np.cumsum(kept)[:-1]])
    np.testing.assert_allclose(start.sticks.sum(axis=1), 1 + start.alpha + n_total * before)


@pytest.mark.parametrize("streamed", [False, True])
def test_the_pilot_is_bounded_by_the_samplers_rows_and_counts(streamed, tmp_path, monkeypatch):
    """``init_rows=None``: the exact sampler's pilot holds PILOT_ROWS rows at most, a minibatch
    sampler's MINIBATCH_PILOT_ROWS (its chain adds no cluster to the pilot's), each also
    bounded by its stored counts; ``init_rows`` overrides both (a stream reads whole
    minibatches, here of 1,000 rows)."""
    from simplexsg.dpmixture import init
    X = make_multinomial_mixture(12_000, 40, 4, row_length=4, random_state=0)[0]
    data = X
    if streamed:
        save_uci_bow(X, tmp_path / "rows.txt")
        data = UCIBowCorpus(tmp_path / "rows.txt")
    seen, start = [], init.pilot_clusters

    def recorded(X_pilot, *args):
        seen.append((X_pilot.shape[0], X_pilot.nnz))
        return start(X_pilot, *args)

    monkeypatch.setattr(init, "pilot_clusters", recorded)
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_ROWS", 9000)
    monkeypatch.setattr(defaults, "PILOT_ROWS", 2000)

    def pilot(sampler, **params):
        DPMixture(sampler, max_iter=1, batch_size=1000, random_state=0, **params).fit(data)
        return seen[-1]

    assert pilot("scir")[0] == 9000
    assert pilot("scir", init_rows=700)[0] == (1000 if streamed else 700)
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_ENTRIES", 10_000)
    rows, entries = pilot("scir")
    assert rows < 9000 and 10_000 - 4 < entries < 10_000 + (4_000 if streamed else 4)
    if not streamed:
        assert pilot("gibbs")[0] == 2000


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("grows", [True, False])
def test_a_pilot_that_settles_cheaply_grows(streamed, grows, mixture, tmp_path, monkeypatch):
    """A minibatch sampler's pilot on a subset (500 of the 2,000 rows) that settles with at
    least PILOT_GROWTH times the work it spent to spare goes on over twice its rows, from its
    own last state, with that spare work as its bound, and again, until the data's rows run
    out (here 500 -> 1,000 -> 2,000 rows, which SCIR then starts from as they are, without
    copies at the scale of more rows). One that stops on its bound (a bound of its first
    stage's work) has nothing to spare and stays as it is, and SCIR starts from its clusters
    at the scale of the data; so does a pilot of ``init_rows`` rows."""
    from simplexsg.dpmixture import init
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_ROWS", 500)
    calls, run, provisions, provision = [], init.run_pilot, [], init.over_provision

    def recorded(X, params, seed, chain=None, components=None, start=None, **kwargs):
        result = run(X, params, seed, chain, components, start, **kwargs)
        calls.append(dict(rows=X.shape[0], chain=chain, start=start, result=result))
        return result

    monkeypatch.setattr(init, "run_pilot", recorded)
    monkeypatch.setattr(init, "over_provision", lambda state, found, X_pilot, *args: (
        provisions.append((found, X_pilot.shape[0])) or provision(state, found, X_pilot, *args)))
    data = mixture[0]
    if streamed:
        save_uci_bow(data, tmp_path / "rows.txt")
        data = UCIBowCorpus(tmp_path / "rows.txt")
    bound, stages = 1e12, 3 if grows else 1
    if not grows:                   # a bound of the first stage's own work: it stops there
        monkeypatch.setattr(defaults, "MINIBATCH_PILOT_WORK", bound)
        DPMixture("scir", max_iter=1, batch_size=100, random_state=0).fit(data)
        bound = bound - calls[0]["result"][2] - 1.0       # reached at the settling sweep
        calls.clear()
        provisions.clear()
    monkeypatch.setattr(defaults, "MINIBATCH_PILOT_WORK", bound)
    DPMixture("scir", max_iter=1, batch_size=100, random_state=0).fit(data)
    assert [call["rows"] for call in calls] == [500, 1000, 2000][:stages]
    for before, after in zip(calls, calls[1:]):
        assert after["start"] is before["result"][0]
        assert after["chain"][3] == before["result"][2] >= (
            defaults.PILOT_GROWTH * (bound - before["result"][2]))
    if not grows:
        assert calls[0]["result"][2] == 0.0
        assert provisions == [(calls[0]["result"][1], 500)]
    else:
        assert provisions == []
    calls.clear()
    DPMixture("scir", max_iter=1, batch_size=100, init_rows=500, random_state=0).fit(data)
    assert [call["rows"] for call in calls] == [500]


@pytest.mark.parametrize("init_rows, expected", [(200, 100), (500, 100), (700, 100)])
def test_a_streamed_fit_checks_rows_the_pilot_did_not_fit(init_rows, expected, tmp_path,
                                                        monkeypatch):
    """Without ``X_heldout``, a streamed fit's check scores MONITOR_ROWS rows the pass reads
    after the pilot's, which the pilot did not fit (its own rows score better than new ones
    and stop improving); the pilot's first rows when it read them all. Row i of X holds its
    index in column i."""
    from simplexsg.dpmixture import init
    n = 600
    counts = make_multinomial_mixture(n, 20, 3, row_length=10, random_state=0)[0]
    X = sp.hstack([sp.identity(n, dtype=np.int64), counts], format="csr")
    save_uci_bow(X, tmp_path / "rows.txt")
    pilots, start = [], init.pilot_clusters
    monkeypatch.setattr(init, "pilot_clusters",
                        lambda X_pilot, *args: pilots.append(X_pilot) or start(X_pilot, *args))
    monkeypatch.setattr(defaults, "MONITOR_ROWS", 100)
    monkeypatch.setattr(init, "MONITOR_ROWS", 100)

    def index(rows):
        return np.asarray(rows[:, :n].argmax(axis=1)).ravel()

    dp = DPMixture("scir", batch_size=50, init_rows=init_rows, max_iter=2, random_state=0)
    dp.fit(UCIBowCorpus(tmp_path / "rows.txt"))
    pilot, monitor = index(pilots[-1]), index(dp._monitor.score.rows)
    assert pilot.size == min(init_rows, n) and monitor.size == expected
    if init_rows < n:
        assert not set(monitor) & set(pilot) and len(set(monitor)) == expected
    else:
        np.testing.assert_array_equal(monitor, pilot[:expected])


def test_partial_fit_refuses_a_minibatch_larger_than_the_data_set(mixture):
    X = mixture[0]
    fresh = DPMixture("scir", total_samples=40, random_state=0)
    with pytest.raises(ValueError, match=r"total_samples \(40\) is below the batch size "
                                         r"\(50 rows\)"):
        fresh.partial_fit(X[:50])
    assert not hasattr(fresh, "n_features_in_") and not hasattr(fresh, "theta_")
    fresh.partial_fit(X[:40])                        # a batch of the whole data set is fine
    fitted = DPMixture("scir", batch_size=100, max_iter=2, random_state=0).fit(X[:300])
    before = pickle.dumps(fitted)
    with pytest.raises(ValueError, match=r"total_samples_ .*\(300\) is below the batch size "
                                         r"\(400 rows\)"):
        fitted.partial_fit(X[:400])
    assert pickle.dumps(fitted) == before


def test_pickle_round_trip_continues(mixture):
    X = mixture[0][:400]
    dp = DPMixture("scir", batch_size=100, max_iter=10, total_samples=400, random_state=0).fit(X)
    copy = pickle.loads(pickle.dumps(dp))
    assert np.array_equal(copy.predict_proba(X), dp.predict_proba(X))
    assert copy.score(X) == dp.score(X)
    copy.partial_fit(X[:100])
    dp.partial_fit(X[:100])
    assert np.array_equal(copy.theta_, dp.theta_)


def test_empty_rows_are_allowed():
    X, _, _, _ = make_multinomial_mixture(100, 10, 2, random_state=0)
    X = sp.vstack([X, sp.csr_matrix((5, 10), dtype=np.int64)]).tocsr()
    dp = DPMixture("scir", batch_size=50, max_iter=20, random_state=0).fit(X)
    assert np.all(np.isfinite(dp.score_samples(X)))
    proba = dp.predict_proba(X[-5:])
    assert np.allclose(proba, dp.weights_)          # no counts: the weights alone


@pytest.mark.parametrize("X,message", [
    (np.array([[1, -1], [0, 2]]), "Negative values"),
    (np.array([[1, 0.5], [0, 2]]), "integer counts"),
    (np.array([[1, np.nan], [0, 2]]), "NaN"),
    (np.zeros((3, 2)), "every row is empty"),
    (np.array([1, 2, 3]), "2D array"),
    ("counts", "2D array"),
    (np.array([[1, 2.0 ** 53], [0, 2]]), "below 2\\^53.* document 0, word 1"),
    (np.full((3, 2), 2.0 ** 51), "sum to .* less than 2\\^53"),
])
@pytest.mark.slow
def test_bad_input_raises_and_keeps_the_fit(mixture, X, message):
    dp = DPMixture("scir", batch_size=100, max_iter=5, random_state=0).fit(mixture[0][:300])
    saved = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(dp).items()}
    with pytest.raises((ValueError, TypeError), match=message):
        dp.fit(X)
    for key, value in saved.items():
        assert np.array_equal(getattr(dp, key), value) if isinstance(value, np.ndarray) \
            else getattr(dp, key) == value


def test_rows_of_billions_of_counts_are_clustered():
    """Counts of 10^9 in a category (3 x 10^11 in all, more tokens than LDA's kernel could
    expand on any machine): the exact sampler's moves read lgamma past their tables, and the
    fit finds the two clusters, its scores finite."""
    rng = np.random.default_rng(5)
    X = rng.poisson(1.0, size=(300, 8)).astype(np.float64)
    X[:150, 0] += 1e9
    X[150:, 1] += 1e9
    dp = DPMixture(random_state=0, max_iter=20).fit(X)
    assert adjusted_rand_score(np.repeat([0, 1], 150), dp.predict(X)) == 1.0
    assert np.all(np.isfinite(dp.score_samples(X)))


def test_feature_mismatch_raises(mixture):
    dp = DPMixture("scir", batch_size=100, max_iter=5, random_state=0).fit(mixture[0][:300])
    for method in (dp.predict, dp.predict_proba, dp.score):
        with pytest.raises(ValueError, match="features"):
            method(np.ones((2, 7), dtype=int))
    dp.set_params(total_samples=300)
    theta = dp.theta_
    with pytest.raises(ValueError, match="features"):
        dp.partial_fit(np.ones((2, 7), dtype=int))
    assert dp.theta_ is theta


@pytest.mark.parametrize("params,message", [
    (dict(sampler="em"), "sampler"),
    (dict(base_concentration=0.0), "base_concentration"),
    (dict(base_concentration=np.inf), "base_concentration"),
    (dict(alpha_prior=(1.0,)), "alpha_prior"),
    (dict(alpha_prior=(1.0, -2.0)), "alpha_prior rate"),
    (dict(initial_components=0), "initial_components"),
    (dict(batch_size=0), "batch_size"),
    (dict(step_size=-0.1), "step_size"),
    (dict(stick_step_size=0.0), "stick_step_size"),
    (dict(max_iter=1.5), "max_iter"),
    (dict(n_jobs=0), "n_jobs"),
])
def test_bad_parameters_raise(mixture, params, message):
    with pytest.raises((ValueError, TypeError), match=message):
        DPMixture("scir", max_iter=2, **params).fit(mixture[0][:50])


def test_parameters_are_validated_the_scikit_learn_way():
    # every parameter has a constraint, and a value of a wrong type or outside its range
    # raises scikit-learn's InvalidParameterError naming the parameter and the estimator
    check_param_validation("DPMixture", DPMixture())
    X = np.ones((4, 3), dtype=int)
    with pytest.raises(InvalidParameterError, match="The 'batch_size' parameter of DPMixture "
                                                    "must be a number, not a bool"):
        DPMixture(batch_size=True).fit(X)
    with pytest.raises(InvalidParameterError, match=r"The 'init' parameter of DPMixture must "
                                                    r"be a str among"):
        DPMixture(init="kmeans").partial_fit(X)
    # split_merge takes a bool: True is "auto", False none
    assert DPMixture(split_merge=True)._check_params(4).split_merge == "auto"
    assert DPMixture(split_merge=False)._check_params(4).split_merge == 0


#: 1-3 rows x 1-3 columns, empty rows, counts of 10^9 (#35).
TINY_INPUTS = {
    "one row": [[1, 2, 3]],
    "one cell": [[4]],
    "two rows": [[1, 2, 3], [0, 1, 0]],
    "one column": [[1], [2], [3]],
    "two columns": [[1, 0], [0, 2], [3, 3]],
    "empty rows": [[0, 0, 0], [1, 2, 3], [0, 0, 0]],
    "huge counts": [[10**9, 1, 0], [0, 3, 10**9], [5, 5, 5]],
    "one huge row": [[10**9, 1, 0]],
}


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["auto", "scir", "sgrld"])
@pytest.mark.parametrize("name", TINY_INPUTS)
def test_the_defaults_finish_on_tiny_inputs(sampler, name):
    """Each fit runs its default length (the exact sampler and SCIR: until their convergence
    check, whose score cannot move on rows this few; SGRLD: its MAX_ITER iterations) and
    scores finitely: with one row, ``split_merge="auto"`` (the default exact sampler) looped
    for ever (#35)."""
    X = np.array(TINY_INPUTS[name])
    with hang_guard(60):
        dp = DPMixture(sampler, random_state=0).fit(X)
    if dp.sampler_ == "sgrld":
        assert dp.stop_reason_ == "max_iter" and dp.n_iter_ == defaults.MAX_ITER
    else:
        cap = defaults.MAX_ITER_GIBBS if dp.sampler_ == "gibbs" else defaults.MAX_ITER
        assert dp.stop_reason_ == "converged" and dp.n_iter_ < cap
        assert dp.n_iter_ % defaults.check_every(dp.sampler_, X.shape[0], dp.batch_size) == 0
    assert np.all(np.isfinite(dp.score_samples(X)))
    np.testing.assert_allclose(dp.components_.sum(axis=1), 1.0)


def test_every_fitted_attribute_is_documented(mixture):
    """Each public attribute that ``fit`` (a pandas frame: ``feature_names_in_`` too) or
    ``partial_fit`` sets is named in the Attributes section of help(DPMixture) (#35:
    ``n_iter_``, ``base_concentration_``, ``total_samples_`` were missing)."""
    pd = pytest.importorskip("pandas")
    X = mixture[0][:200].toarray()
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    models = [DPMixture(max_iter=2, random_state=0).fit(frame),
              DPMixture(total_samples=1000, random_state=0).partial_fit(X)]
    names = {name for model in models for name in vars(model)
             if name.endswith("_") and not name.startswith("_")}
    assert {"n_iter_", "base_concentration_", "total_samples_", "feature_names_in_"} <= names
    section = DPMixture.__doc__[DPMixture.__doc__.index("Attributes\n    ----------"):]
    assert [name for name in sorted(names)
            if not re.search(rf"(?<!\w){name}(?!\w)", section)] == []


@parametrize_checks([DPMixture(),
                     DPMixture("scir", batch_size=10, max_iter=5, initial_components=3)],
                    expected_failed_checks=lambda est: {
    "check_clustering": "the check standardises X; a multinomial mixture needs counts",
    "check_estimator_sparse_array": "the check takes predict_proba for a classifier's",
    "check_estimator_sparse_matrix": "the check takes predict_proba for a classifier's",
})
@pytest.mark.slow
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_clone_keeps_parameters():
    dp = DPMixture("gibbs", base_concentration=0.2, alpha_prior=(2.0, 3.0))
    assert clone(dp).get_params() == dp.get_params()


# ---------------------------------------------------------------- msweb reader
MSWEB_SAMPLE = (
    'I,4,"www.microsoft.com","created by getlog.pl"\r\n'
    'T,1,"VRoot",0,0,"VRoot"\r\n'
    'N,0,"0"\r\n'
    'A,1002,1,"Pages, with a comma","/b"\r\n'
    'A,1000,1,"regwiz","/regwiz"\r\n'
    'A,1001,1,"Support Desktop","/support"\r\n'
    'C,"10001",10001\r\n'
    'V,1000,1\r\n'
    'V,1002,1\r\n'
    'C,"10002",10002\r\n'
    'C,"10003",10003\r\n'
    'V,1001,1\r\n'
)


def test_load_msweb_parses_the_uci_format(tmp_path):
    path = tmp_path / "anonymous-msweb.data"
    path.write_bytes(MSWEB_SAMPLE.encode())
    data = load_msweb(path)
    assert data.X.toarray().tolist() == [[1, 0, 1], [0, 0, 0], [0, 1, 0]]
    assert data.attribute_ids.tolist() == [1000, 1001, 1002]
    assert data.titles.tolist() == ["regwiz", "Support Desktop", "Pages, with a comma"]
    assert data.urls.tolist() == ["/regwiz", "/support", "/b"]
    assert data.user_ids.tolist() == [10001, 10002, 10003]
    assert load_msweb(tmp_path, subset="train").X.nnz == 3      # a directory works too


def test_load_msweb_errors(tmp_path, monkeypatch):
    bad = tmp_path / "bad.data"
    bad.write_text('A,1000,1,"a","/a"\nV,1000,1\n')
    with pytest.raises(ValueError, match="line 2: a visit before any user"):
        load_msweb(bad)
    bad.write_text('A,1000,1,"a","/a"\nC,"1",1\nV,1005,1\n')
    with pytest.raises(ValueError, match="page 1005"):
        load_msweb(bad)
    with pytest.raises(FileNotFoundError, match="no file"):
        load_msweb(tmp_path / "missing.data")
    with pytest.raises(ValueError, match="subset"):
        load_msweb(tmp_path, subset="validation")
    monkeypatch.delenv("SIMPLEXSG_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="SIMPLEXSG_DATA"):
        load_msweb()


def _msweb_dir():
    root = os.environ.get("SIMPLEXSG_DATA") or ROOT.parent / "shared" / "data"
    path = Path(root) / "msweb"
    if not (path / "anonymous-msweb.data").is_file():
        pytest.skip(f"msweb not found at {path}: set SIMPLEXSG_DATA to the directory holding "
                    "msweb/anonymous-msweb.{data,test}")
    return path


def test_real_msweb_matches_the_published_sizes():
    path = _msweb_dir()
    train, test = load_msweb(path, "train"), load_msweb(path, "test")
    assert train.X.shape == (32711, 294) and train.X.sum() == 98654
    assert test.X.shape == (5000, 294) and test.X.sum() == 15191
    assert np.array_equal(train.attribute_ids, test.attribute_ids)
    assert train.X.max() == 1


def test_tol_auto_checks_each_sampler_at_its_cadence(mixture):
    """``tol="auto"``: the exact sampler's check scores every GIBBS_CHECK_SWEEPS sweeps with
    AUTO_TOL, within the MAX_ITER_GIBBS cap; SCIR's after each pass over the rows or every
    MINIBATCH_CHECK_ITER iterations, whichever comes first; SGRLD keeps no check. A number
    ``tol`` keeps the exact sampler's check cadence and multiplies the cap."""
    X = mixture[0][:300]
    gibbs = DPMixture("gibbs", max_iter=23, random_state=0).fit(X)
    assert [e["step"] for e in gibbs._monitor.history] == [5, 10, 15, 20][:len(
        gibbs._monitor.history)]
    assert gibbs._monitor.tol == defaults.AUTO_TOL["gibbs"] == 5e-4
    cap = DPMixture("gibbs")._check_params(X.shape[0]).max_iter
    assert cap == defaults.MAX_ITER_GIBBS
    assert DPMixture("gibbs", tol=0.01)._check_params(X.shape[0]).max_iter == \
        cap * defaults.TOL_ITER_FACTOR
    scir = DPMixture("scir", batch_size=100, max_iter=6, random_state=0).fit(X)
    assert scir._monitor.tol == defaults.AUTO_TOL["scir"] == 1e-3
    assert [e["step"] for e in scir._monitor.history] == [3, 6] and scir.n_iter_ == 6
    long_pass = DPMixture("scir", batch_size=2, max_iter=100, random_state=0).fit(X)
    assert defaults.MINIBATCH_CHECK_ITER == 50      # of 150 iterations a pass: two checks
    assert [e["step"] for e in long_pass._monitor.history] == [50, 100]
    sgrld = DPMixture("sgrld", batch_size=100, max_iter=6, random_state=0).fit(X)
    assert sgrld._monitor is None and sgrld.n_iter_ == 6

