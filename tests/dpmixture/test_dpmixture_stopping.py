"""DPMixture finds the clusters by itself (the pilot start), and stops on a time budget or a
plateau of its convergence check (#13)."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

from simplexsg import DPMixture
from simplexsg.datasets import make_multinomial_mixture, save_uci_bow
from simplexsg.dpmixture.training import Trainer
from simplexsg.readers import UCIBowCorpus


@pytest.fixture(scope="module")
def thirty():
    """30 components over 200 categories, unbalanced weights (Dirichlet(2): 0.3% to 9%),
    8,000 training and 2,000 held-out rows of 20 counts."""
    weights = np.random.default_rng(5).dirichlet(np.full(30, 2.0))
    X, labels, _, _ = make_multinomial_mixture(10_000, 200, 30, weights=weights,
                                               concentration=0.1, row_length=20, random_state=5)
    return X[:8000], X[8000:], labels[8000:], labels[:8000]


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["auto", "scir"])
def test_the_default_recovers_a_thirty_cluster_mixture(thirty, sampler):
    """With no other argument (the default, "auto": the exact sampler on 8,000 rows; and SCIR),
    the fit puts the held-out rows in their true clusters (ARI >= 0.95) and has as many
    clusters of at least 1% of the rows as the truth. From the old start (20 components, rows
    allocated at random, no split-merge) the same fit stays below an ARI of 0.95 (0.92 and
    0.87): the check can fail."""
    X, X_test, labels, train_labels = thirty
    dp = DPMixture(sampler, random_state=0).fit(X)
    assert dp.sampler_ == ("gibbs" if sampler == "auto" else sampler)
    assert adjusted_rand_score(labels, dp.predict(X_test)) >= 0.95
    big = [np.sum(np.bincount(z) >= 0.01 * z.size) for z in (dp.labels_, train_labels)]
    assert big[0] == big[1]
    old = DPMixture(sampler, init="random", split_merge=0, random_state=0).fit(X)
    assert adjusted_rand_score(labels, old.predict(X_test)) < 0.95


def test_auto_picks_the_exact_sampler_up_to_a_size(thirty, monkeypatch):
    """"auto" is "gibbs" up to AUTO_GIBBS_ROWS rows and AUTO_GIBBS_ENTRIES stored counts and
    "scir" above either, and for partial_fit; a continued chain keeps its sampler."""
    from simplexsg.dpmixture import defaults
    X = sp.csr_matrix(thirty[0][:300])
    assert DPMixture(max_iter=2, random_state=0).fit(X).sampler_ == "gibbs"
    monkeypatch.setattr(defaults, "AUTO_GIBBS_ENTRIES", X.nnz)
    assert DPMixture(max_iter=2, random_state=0).fit(X).sampler_ == "gibbs"
    monkeypatch.setattr(defaults, "AUTO_GIBBS_ENTRIES", X.nnz - 1)
    assert DPMixture(max_iter=2, random_state=0).fit(X).sampler_ == "scir"
    monkeypatch.setattr(defaults, "AUTO_GIBBS_ENTRIES", X.nnz)
    monkeypatch.setattr(defaults, "AUTO_GIBBS_ROWS", 299)
    dp = DPMixture(max_iter=2, random_state=0).fit(X)
    assert dp.sampler_ == "scir" and dp.n_iter_ == 2
    monkeypatch.setattr(defaults, "AUTO_GIBBS_ROWS", 10**5)
    assert dp.set_params(warm_start=True).fit(X).sampler_ == "scir"
    assert DPMixture(total_samples=1000, random_state=0).partial_fit(X).sampler_ == "scir"


@pytest.mark.slow
def test_max_time_is_honoured_within_one_iteration(thirty):
    X = thirty[0]
    dp = DPMixture("scir", max_time=1.0, max_iter=10**6, tol=None, init="random",
                   evaluate_every=1, random_state=0).fit(X)
    assert dp.stop_reason_ == "max_time" and dp.n_iter_ < 10**6
    seconds = [0.0] + [entry["seconds"] for entry in dp.history_]
    longest = max(np.diff(seconds))
    assert 1.0 <= dp.training_seconds_ <= 1.0 + longest
    assert DPMixture("scir", max_iter=5, random_state=0).fit(X).stop_reason_ == "max_iter"


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["scir", "gibbs"])
def test_max_time_only_caps_the_default_length(thirty, monkeypatch, sampler):
    """``max_iter=None`` is the default length with or without ``max_time``, so a budget never
    makes a fit longer (#35: with one it meant 10^9 iterations, a fit as long as the budget);
    with ``tol`` it is a ceiling of ``TOL_ITER_FACTOR`` times that length. The default lengths
    are made short here (the pilot's are its own)."""
    from simplexsg.dpmixture import defaults
    monkeypatch.setattr(defaults, "MAX_ITER", 6)
    monkeypatch.setattr(defaults, "MAX_ITER_GIBBS", 3)
    length = 3 if sampler == "gibbs" else 6
    X, settings = thirty[0][:200], dict(batch_size=50, random_state=0)
    plain = DPMixture(sampler, **settings).fit(X)
    capped = DPMixture(sampler, max_time=10.0, **settings).fit(X)
    assert plain.n_iter_ == capped.n_iter_ == length and capped.stop_reason_ == "max_iter"
    np.testing.assert_array_equal(capped.theta_, plain.theta_)
    never = DPMixture(sampler, tol=0.0, n_iter_no_change=10**6, **settings).fit(X)
    assert never.n_iter_ == defaults.TOL_ITER_FACTOR * length == 5 * length
    assert never.stop_reason_ == "max_iter"


@pytest.mark.slow
def test_tol_stops_on_a_plateau_and_not_before(thirty):
    """The check scores every pass; ``n_iter_no_change`` scores without a relative gain of
    ``tol`` stop the fit. A tolerance of 1 (no score can gain that much) stops it after exactly
    n_iter_no_change + 1 passes; tol = 0 after a run of non-improving scores, which the
    recorded scores show."""
    X, X_test = thirty[:2]
    passes = -(-X.shape[0] // DPMixture().batch_size)         # minibatches a pass
    dp = DPMixture("scir", tol=0.99, n_iter_no_change=2, random_state=0).fit(X)
    assert dp.stop_reason_ == "converged" and dp.n_iter_ == 3 * passes
    dp = DPMixture("scir", tol=0.0, n_iter_no_change=3, random_state=0).fit(X, X_heldout=X_test)
    assert dp.stop_reason_ == "converged" and dp.n_iter_ % passes == 0
    assert dp._monitor.misses == 3


def test_an_interrupted_fit_with_tol_resumes_bit_for_bit(thirty, monkeypatch):
    X = thirty[0][:2000]
    settings = dict(tol=0.0, n_iter_no_change=2, batch_size=200, random_state=1)
    reference = DPMixture("scir", **settings).fit(X)
    step = Trainer.step

    def step_then_stop(trainer, X_rows, rows, laps=None):     # the pilot chain has no Trainer
        z = step(trainer, X_rows, rows, laps)
        if trainer.model.n_iter_ - 1 == reference.n_iter_ - 5:
            raise KeyboardInterrupt
        return z
    monkeypatch.setattr(Trainer, "step", step_then_stop)
    model = DPMixture("scir", **settings)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X)
    monkeypatch.undo()
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    model.set_params(warm_start=True).fit(X)
    assert model.stop_reason_ == "converged" and model.n_iter_ == reference.n_iter_
    np.testing.assert_array_equal(model.theta_, reference.theta_)


@pytest.mark.parametrize("params, message", [
    (dict(max_time=0), "max_time"), (dict(tol=1.5), "tol"), (dict(n_iter_no_change=0),
                                                             "n_iter_no_change"),
    (dict(init="kmeans"), "init"), (dict(init_rows=0), "init_rows"),
    (dict(split_merge=-1), "split_merge"), (dict(split_merge="on"), "split_merge"),
    (dict(init_rows=True), "init_rows"), (dict(n_iter_no_change=True), "n_iter_no_change")])
def test_bad_stopping_and_start_parameters_raise(thirty, params, message):
    """Each names the parameter; a bool is refused where it means no count."""
    with pytest.raises(ValueError, match=message):
        DPMixture(**params).fit(thirty[0][:50])


def test_split_merge_takes_booleans(thirty):
    """``split_merge=False`` is 0 (no moves) and True is "auto" (#35: False was refused)."""
    X = thirty[0][:300]

    def fit(split_merge):
        return DPMixture("gibbs", max_iter=3, split_merge=split_merge, random_state=0).fit(X)
    off, on = fit(False), fit(True)
    np.testing.assert_array_equal(off.theta_, fit(0).theta_)
    np.testing.assert_array_equal(on.theta_, fit("auto").theta_)
    assert not np.array_equal(off.theta_, on.theta_)    # the moves draw: the chains differ


def test_the_check_records_minus_the_score_of_its_rows(thirty):
    """Each check scores the state then (``PlateauMonitor`` on minus ``score`` of the held-out
    rows, once a pass); the fit stops at the check that finds the plateau, so the last entry is
    the fitted model's."""
    X, X_test = thirty[0][:2000], thirty[1][:500]
    dp = DPMixture("scir", tol=0.0, n_iter_no_change=2, batch_size=500, random_state=1)
    dp.fit(X, X_heldout=X_test)
    history = dp._monitor.history
    assert dp.stop_reason_ == "converged"
    assert [e["step"] for e in history] == list(range(4, dp.n_iter_ + 1, 4))
    assert history[-1]["minus_score"] == -dp.score(X_test)


@pytest.mark.parametrize("sampler", ["gibbs", "scir"])
def test_timings_split_the_training_seconds_by_phase(thirty, sampler, tmp_path):
    X = thirty[0][:2000]
    model = DPMixture(sampler, max_iter=4, batch_size=500, random_state=0).fit(X)
    assert list(model.timings_) == ["init", "read", "local", "moves", "global"]
    assert all(model.timings_[phase] > 0 for phase in ("init", "read", "local", "global"))
    assert sum(model.timings_.values()) == pytest.approx(model.training_seconds_, rel=1e-9)
    # a continued chain starts them again, like training_seconds_, with no start of its own
    model.set_params(warm_start=True, max_iter=2).fit(X)
    assert model.timings_["init"] == 0.0 and model.timings_["local"] > 0
    assert sum(model.timings_.values()) == pytest.approx(model.training_seconds_, rel=1e-9)
    # a streamed fit (SCIR: the exact sampler needs the rows in memory) clocks its pilot as
    # the start and parsing as reading
    save_uci_bow(X, tmp_path / "docword.txt")
    streamed = DPMixture("scir", max_iter=3, batch_size=500, random_state=0).fit(
        UCIBowCorpus(tmp_path / "docword.txt"))
    assert streamed.timings_["init"] > 0 and streamed.timings_["read"] > 0
    assert sum(streamed.timings_.values()) == pytest.approx(streamed.training_seconds_,
                                                             rel=1e-9)
