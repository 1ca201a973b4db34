"""Tests of the LDA training loop: time budget, stopping rule, tail averaging, warm starts."""
import pickle

import numpy as np
import pytest

import simplexsg._fitting as _fitting
import simplexsg.lda.training as training
from simplexsg import SCIRLDA
from simplexsg.averaging import TailAverage
from simplexsg.simplex import to_simplex
from simplexsg.datasets import make_lda_corpus
from simplexsg.stopping import Plateau


@pytest.fixture(scope="module")
def corpus():
    X, _, _ = make_lda_corpus(400, 200, 4, doc_length=60, doc_topic_prior=0.2,
                              topic_word_prior=0.05, random_state=3)
    return X[:300], X[300:]


# ---------------------------------------------------------------- TailAverage
@pytest.mark.parametrize("n_steps", [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 17, 18, 19, 100, 140,
                                     141, 1000])
def test_growing_block_rule_averages_the_last_third_to_the_last_five_ninths(n_steps):
    # blocks [0, 1), [1, 2), [2, 3), [3, 5), [5, 8), [8, 12), ...: each ends at e + ceil(e / 2)
    ends = [0, 1]
    while ends[-1] <= n_steps:
        ends.append(ends[-1] + -(-ends[-1] // 2))
    holding = max(j for j in range(len(ends) - 1) if ends[j] <= n_steps - 1)
    start = ends[max(holding - 1, 0)]      # the block before the one holding step T - 1
    average = TailAverage(None)
    for t in range(n_steps):
        average.add(t, np.array([float(t), 1.0]))
    assert average.start == start
    assert average.count == n_steps - start
    np.testing.assert_allclose(average.mean(), [np.mean(np.arange(start, n_steps)), 1.0])
    if n_steps >= 12:
        assert 0.4 * n_steps <= start < 2 * n_steps / 3


def test_partial_fit_reports_the_moving_burn_in(corpus):
    lda = SCIRLDA(4, n_gibbs=2, total_samples=300, random_state=0)
    for start in range(0, 300, 60):
        lda.partial_fit(corpus[0][start:start + 60])
    assert lda.n_batch_iter_ == 5 and lda.burn_in_ == lda._topic_average.start == 2


def test_fixed_start_and_empty_average():
    average = TailAverage(3)
    assert average.mean() is None
    for t in range(10):
        average.add(t, float(t))
    assert (average.start, average.count, average.mean()) == (3, 7, 6.0)


# ---------------------------------------------------------------- Plateau
def test_plateau_stops_on_a_plateau_and_not_before():
    # a decreasing curve (1% per evaluation) never triggers; a flat tail does after `patience`
    decreasing = 1000 * 0.99 ** np.arange(50)
    rule = Plateau(tol=1e-3, patience=2)
    assert not any(rule.update(v) for v in decreasing)
    rule = Plateau(tol=1e-3, patience=2)
    curve = np.concatenate([decreasing[:10], np.full(5, decreasing[9] * 0.9995)])
    stops = [rule.update(v) for v in curve]
    assert stops.index(True) == 11            # the 2nd evaluation without a 0.1% gain
    # noise that never beats the best by tol counts as no change; a real gain resets
    rule = Plateau(tol=1e-2, patience=3)
    assert [rule.update(v) for v in (100, 99.5, 101, 98, 97.5, 97.2, 97.9)] == \
        [False, False, False, False, False, False, True]


# ---------------------------------------------------------------- max_time, timings_
#: The clock reads of a ``fit`` step after the one at its start (when its minibatch is asked
#: for): the ends of its phases "read", "local" and "global" (and "alpha" when learned).
LAPS = 3


class FakeClock:
    """perf_counter advancing by ``tick`` seconds at each read by a step's clock (``Laps``)."""

    def __init__(self, tick):
        self.now, self.tick = 0.0, tick

    def __call__(self):
        self.now += self.tick
        return self.now


def test_max_time_stops_at_the_end_of_the_first_step_past_the_budget(corpus, monkeypatch):
    # each step lasts exactly 1 s, each of its phases 1 / LAPS s
    monkeypatch.setattr(_fitting, "perf_counter", FakeClock(1.0 / LAPS))
    lda = SCIRLDA(4, batch_size=50, n_gibbs=2, max_time=5.5, random_state=0).fit(corpus[0])
    assert lda.stop_reason_ == "max_time"
    assert lda.n_batch_iter_ == 6 and lda.training_seconds_ == pytest.approx(6.0)
    assert lda.timings_ == pytest.approx(dict(read=2.0, local=2.0, alpha=0.0, **{"global": 2.0}))
    assert lda.n_iter_ == 1                    # one complete pass of 6 steps
    # burn-in follows the growing-block rule: the average covers steps 3..5
    assert lda.burn_in_ == 3


def test_max_iter_still_bounds_a_time_budget(corpus):
    lda = SCIRLDA(4, batch_size=100, n_gibbs=2, max_iter=2, max_time=1e6,
                  random_state=0).fit(corpus[0])
    assert lda.stop_reason_ == "max_iter" and lda.n_batch_iter_ == 6 and lda.n_iter_ == 2


# ---------------------------------------------------------------- convergence check
def test_convergence_check_stops_on_a_plateau_of_the_held_out_score(corpus):
    X_train, X_test = corpus
    lda = SCIRLDA(4, n_gibbs=4, tol=0.01, max_iter=100, random_state=0)
    lda.fit(X_train, X_heldout=X_test)
    assert lda.stop_reason_ == "converged"
    scores = [h["perplexity"] for h in lda.monitor_history_]
    assert len(scores) == lda.n_iter_ >= 4 and lda.n_iter_ < 100
    # the rule replayed on the recorded scores says "stop" at the last one and not before
    rule = Plateau(tol=0.01, patience=3)
    assert [rule.update(s) for s in scores] == [False] * (len(scores) - 1) + [True]
    assert lda.n_documents_seen_ == lda.n_iter_ * 300     # every document trained on


def test_convergence_check_on_training_documents_after_the_default_passes(corpus):
    # max_iter=None: the check scores from pass 20 - 3 - 1 = 16 on and may stop from pass 20
    X_train, _ = corpus
    lda = SCIRLDA(4, n_gibbs=4, tol=0.01, random_state=0).fit(X_train)
    assert lda.stop_reason_ == "converged" and lda.n_iter_ >= 20
    assert [h["step"] for h in lda.monitor_history_][0] == 17 * 3
    assert len(lda.monitor_history_) == lda.n_iter_ - 16
    off = SCIRLDA(4, n_gibbs=4, random_state=0).fit(X_train)
    assert off.stop_reason_ == "max_iter" and off.n_iter_ == 20 and off.monitor_history_ == []


@pytest.mark.parametrize("params, message", [
    (dict(max_time=0), "max_time"),
    (dict(max_time=-1.0), "max_time"),
    (dict(tol=-0.1), "tol"),
    (dict(tol=1.0), "tol"),
    (dict(tol="1e-3"), "tol"),
    (dict(n_iter_no_change=0), "n_iter_no_change"),
    (dict(local_warm_start=1), "local_warm_start"),
])
def test_bad_training_parameters_are_named(corpus, params, message):
    with pytest.raises(ValueError, match=message):
        SCIRLDA(4, **params).fit(corpus[0])


# ---------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("params", [dict(local_warm_start=True), dict(tol=0.01),
                                    dict(max_iter=3)])
def test_bit_identical_for_any_n_jobs_and_after_pickling(corpus, params):
    X_train, X_test = corpus
    one = SCIRLDA(4, n_gibbs=4, random_state=5, n_jobs=1, **params).fit(X_train)
    two = SCIRLDA(4, n_gibbs=4, random_state=5, n_jobs=2, **params).fit(X_train)
    np.testing.assert_array_equal(one.components_, two.components_)
    assert one.n_batch_iter_ == two.n_batch_iter_
    clone = pickle.loads(pickle.dumps(one))
    np.testing.assert_array_equal(clone.transform(X_test), one.transform(X_test))
    total = one.total_samples_
    for model in (one, clone):
        model.set_params(total_samples=total).partial_fit(X_test)
    np.testing.assert_array_equal(one.components_, clone.components_)


def test_warm_start_changes_the_chain_and_keeps_the_fit(corpus):
    # With enough sweeps per visit both starts reach the same fit (measured: 29.90 / 29.92
    # warm / cold); with 3 sweeps the warm start can persist in a worse mode (35.4 against 29.9
    # on seed 0), which is why it is off by default.
    X_train, X_test = corpus
    warm = SCIRLDA(4, n_gibbs=20, gibbs_burn_in=10, local_warm_start=True, random_state=0)
    cold = SCIRLDA(4, n_gibbs=20, gibbs_burn_in=10, local_warm_start=False, random_state=0)
    warm.fit(X_train), cold.fit(X_train)
    assert not np.array_equal(warm.components_, cold.components_)
    assert abs(warm.perplexity(X_test) / cold.perplexity(X_test) - 1) < 0.01


class Stream:
    """A re-iterable bag-of-words corpus without len(), like a streamed gensim corpus."""

    def __init__(self, X):
        self.bow = [list(zip(row.indices.tolist(), row.data.tolist())) for row in X]

    def __iter__(self):
        return iter(self.bow)


class SlowStream(Stream):
    """A stream whose reading advances ``clock`` by ``seconds`` a document."""

    def __init__(self, X, clock, seconds):
        super().__init__(X)
        self.clock, self.seconds = clock, seconds

    def __iter__(self):
        for document in self.bow:
            self.clock.now += self.seconds
            yield document


def test_reading_a_stream_counts_as_training_time(corpus, monkeypatch):
    # 6 steps of 0.5 s each (0.5 / LAPS a phase), plus 300 documents read at 0.01 s each
    clock = FakeClock(0.5 / LAPS)
    monkeypatch.setattr(_fitting, "perf_counter", clock)
    X_train = corpus[0]
    lda = SCIRLDA(4, batch_size=50, n_gibbs=2, max_iter=1, total_samples=300, random_state=0)
    lda.fit(SlowStream(X_train, clock, 0.01), id2word=dict.fromkeys(range(X_train.shape[1])))
    assert lda.n_batch_iter_ == 6
    assert lda.training_seconds_ == pytest.approx(6 * 0.5 + 300 * 0.01)
    assert lda.timings_["read"] == pytest.approx(6 * 0.5 / LAPS + 300 * 0.01)
    # and a time budget stops on it: 0.5 s a step, but the first minibatch takes 2.5 s to read
    lda.set_params(max_time=2.0, max_iter=None)
    lda.fit(SlowStream(X_train, clock, 0.01), id2word=dict.fromkeys(range(X_train.shape[1])))
    assert (lda.stop_reason_, lda.n_batch_iter_) == ("max_time", 1)


def test_streamed_corpus_with_a_time_budget_and_a_convergence_check(corpus, monkeypatch):
    X_train, X_test = corpus
    vocabulary = dict.fromkeys(range(X_train.shape[1]))
    monkeypatch.setattr(_fitting, "perf_counter", FakeClock(1.0 / LAPS))      # 1 s a step
    lda = SCIRLDA(4, batch_size=50, n_gibbs=2, max_time=8.5, total_samples=300, random_state=0)
    lda.fit(Stream(X_train), id2word=vocabulary)
    assert (lda.stop_reason_, lda.n_batch_iter_, lda.n_iter_) == ("max_time", 9, 1)
    # a budget that ends inside the first pass, before the stream's length is known
    lda.set_params(max_time=2.5).fit(Stream(X_train), id2word=vocabulary)
    assert (lda.stop_reason_, lda.n_batch_iter_, lda.n_iter_) == ("max_time", 3, 0)
    # a stream shorter than total_samples: the length is unknown, so the growing-block rule
    monkeypatch.undo()
    lda = SCIRLDA(4, batch_size=50, n_gibbs=2, max_iter=2, total_samples=1000, random_state=0)
    lda.fit(Stream(X_train), id2word=vocabulary)
    assert lda.n_batch_iter_ == 12 and lda.burn_in_ == 5 and lda._topic_average.count == 7
    with pytest.raises(TypeError, match="X_heldout"):
        lda.fit(X_train, X_heldout=Stream(X_test))
    lda = SCIRLDA(4, n_gibbs=2, tol=0.05, total_samples=300, random_state=0)
    lda.fit(Stream(X_train), id2word=vocabulary)
    assert lda.stop_reason_ == "converged"


# ---------------------------------------------------------------- the global step
@pytest.mark.parametrize("local_mean", [False, True])
def test_global_step_has_the_exact_scir_moments_and_local_topics(local_mean):
    """``step_topics`` on a 3 x 6 state with sparse counts, 4000 draws (one stream per step):
    each coordinate's mean and variance against the CIR transition's exact one-step moments
    (mean theta e^-h + a (1 - e^-h), variance a (1 - e^-h)^2 + 2 theta e^-h (1 - e^-h), a =
    beta + scale * counts), within 5 standard errors (the variance's from the fourth moment);
    the local topics are the normalised conditional mean, exactly; the average adds them.
    With ``local_mean`` the step integrates theta out (its state: shapes and a scale) and
    theta is drawn from them (``draw_theta``), which must give the same moments."""
    import scipy.sparse as sparse
    from simplexsg.lda.global_step import LocalCounts, draw_theta, step_topics
    rng = np.random.default_rng(0)
    theta = rng.gamma(1.0, size=(3, 6)) + 0.01
    word_topic = np.zeros((6, 3), dtype=np.int64)
    word_topic[1, 0], word_topic[4, 2], word_topic[0, 1] = 5, 3, 7
    counts = LocalCounts(sparse.csr_array(word_topic), 2, 10)
    h, beta, scale, n = 0.3, 0.5, 2.0, 4000
    kwargs = dict(beta=beta, scale=scale, h=h, sampler="scir", local_mean=local_mean,
                  seed=np.random.SeedSequence(5))

    def draw(t):
        state, _, state_scale = step_topics(theta, counts, step=t, **kwargs)
        assert (state_scale is not None) == local_mean
        return draw_theta(state, state_scale, np.random.SeedSequence(6, spawn_key=(t,)))
    draws = np.array([draw(t) for t in range(n)])
    a = beta + scale * word_topic.T / 2
    mean = theta * np.exp(-h) - a * np.expm1(-h)
    var = a * np.expm1(-h) ** 2 - 2 * theta * np.exp(-h) * np.expm1(-h)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * np.sqrt(var / n))
    centred = draws - draws.mean(axis=0)
    var_se = np.sqrt(((centred ** 2 - var) ** 2).mean(axis=0) / n)
    assert np.all(np.abs(centred.var(axis=0) - var) < 5 * var_se)
    average = TailAverage(0)
    local = step_topics(theta, counts, step=0, average=average, **kwargs).local
    if not local_mean:                  # the local topics are the sample
        np.testing.assert_allclose(local, to_simplex(draw(0)), rtol=1e-12)
        return
    np.testing.assert_allclose(local, mean / mean.sum(axis=1, keepdims=True), rtol=1e-12)
    step_topics(theta, counts, step=1, average=average, **kwargs)
    assert average.count == 2
    np.testing.assert_allclose(average.mean(), local, rtol=1e-12)   # the same local twice


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_column_sums_are_the_columns_max_and_alpha_weighted_sum(dtype):
    """``column_sums``, the alpha part's per-word sums: each chosen column's largest entry
    (exactly) and ``sum_k alpha_k topics[k, w]`` (to 1e-12 relative) against numpy, bit for
    bit the same on 1 and 3 threads over 600 words (several blocks); an index out of range is
    refused."""
    from simplexsg._ext._global_step import column_sums
    rng = np.random.default_rng(2)
    topics = rng.dirichlet(np.full(900, 0.1), size=7).astype(dtype)
    alpha = rng.gamma(1.0, size=7)
    words = np.sort(rng.choice(900, size=600, replace=False)).astype(np.intp)
    top, mass = column_sums(topics, words, alpha, 1)
    columns = topics[:, words].astype(np.float64)
    np.testing.assert_array_equal(top, columns.max(axis=0))
    np.testing.assert_allclose(mass, alpha @ columns, rtol=1e-12)
    top3, mass3 = column_sums(topics, words, alpha, 3)
    np.testing.assert_array_equal(top3, top)
    np.testing.assert_array_equal(mass3, mass)
    with pytest.raises(ValueError, match="out of range"):
        column_sums(topics, np.array([3, 900], dtype=np.intp), alpha)
    with pytest.raises(ValueError, match="alpha has 6 entries for 7 topics"):
        column_sums(topics, words, alpha[:6])


@pytest.mark.parametrize("sampler", ["scir", "sgrld"])
def test_global_step_spreads_the_alpha_part_by_its_expected_topics(sampler):
    """With ``LocalCounts.alpha_counts``, word w's alpha count A_w adds ``alpha_k topics[k, w]
    A_w / sum_j alpha_j topics[j, w]`` (times scale / n_kept) to topic k's estimated count: the
    local topics (the normalised conditional mean, a linear function of the shape; for SGRLD
    its drift also holds the row's total count) match the dense computation to 1e-12."""
    import scipy.sparse as sparse
    from simplexsg._ext._global_step import global_step
    from simplexsg.lda.global_step import LocalCounts, step_topics
    rng = np.random.default_rng(1)
    theta = rng.gamma(1.0, size=(3, 6)) + 0.01
    topics = rng.dirichlet(np.ones(6), size=3)
    alpha = np.array([0.1, 0.5, 0.2])
    word_topic = np.zeros((6, 3), dtype=np.int64)
    word_topic[1, 0], word_topic[4, 2] = 5, 3
    alpha_counts = np.array([0, 4, 0, 2, 0, 0])
    counts = LocalCounts(sparse.csr_array(word_topic), 2, 10, alpha_counts=alpha_counts)
    h, beta, scale = 0.3, 0.5, 2.0
    spread = alpha[:, None] * topics * alpha_counts / (alpha @ topics)
    est = scale * (word_topic.T + spread) / 2
    if sampler == "scir":
        mean = theta * np.exp(-h) - (beta + est) * np.expm1(-h)
    else:
        drift = beta + est - theta - est.sum(axis=1, keepdims=True) * theta / theta.sum(
            axis=1, keepdims=True)
        mean = np.maximum(theta + h * drift, np.finfo(float).tiny)
    # the same spread when word 3's column is subnormal in every topic (1e-310 times it)
    for factor in (1.0, 1e-310):
        scaled = topics.copy()
        scaled[:, 3] *= factor
        local = step_topics(theta, counts, beta=beta, scale=scale, h=h, sampler=sampler,
                            local_mean=True, seed=np.random.SeedSequence(5), step=0,
                            alpha=alpha, topics=scaled).local
        np.testing.assert_allclose(local, mean / mean.sum(axis=1, keepdims=True), rtol=1e-11)
    out = np.empty_like(theta), np.empty_like(theta)
    args = (theta, beta, np.zeros(4, dtype=np.int64), np.empty(0, dtype=np.int64),
            np.empty(0), h, False, True, np.zeros(3, dtype=np.uintp), *out)
    with pytest.raises(ValueError, match="go together"):
        global_step(*args, spread=np.zeros(6))
    with pytest.raises(ValueError, match="spread and column_scale must have 6 entries"):
        global_step(*args, spread=np.zeros(5), column_scale=np.ones(6), alpha=alpha,
                    topics=topics)


# ---------------------------------------------------------------- timings_
def test_timings_split_the_training_seconds_by_phase_and_each_check_notes_them(corpus):
    X_train = corpus[0]
    lda = SCIRLDA(4, n_gibbs=2, max_iter=3, tol=0.01, n_iter_no_change=5,
                  learn_doc_topic_prior=True, random_state=0).fit(X_train)
    assert list(lda.timings_) == ["read", "local", "alpha", "global"]
    assert all(seconds > 0 for seconds in lda.timings_.values())
    assert sum(lda.timings_.values()) == pytest.approx(lda.training_seconds_, rel=1e-9)
    # the check after each pass (3 steps of 100 documents) notes the training so far
    history = lda.monitor_history_
    assert [e["step"] for e in history] == [3, 6, 9]
    for entry in history:
        assert set(entry) == {"step", "perplexity", "check_seconds", "seconds", "timings"}
        assert sum(entry["timings"].values()) == pytest.approx(entry["seconds"], rel=1e-9)
        assert entry["check_seconds"] > 0
    assert history[-1]["seconds"] == lda.training_seconds_
    assert history[-1]["timings"] == lda.timings_
    assert pickle.loads(pickle.dumps(lda)).timings_ == lda.timings_
    # a continued fit starts them again, like training_seconds_
    lda.set_params(warm_start=True, max_iter=1).fit(X_train)
    assert sum(lda.timings_.values()) == pytest.approx(lda.training_seconds_, rel=1e-9)
    # no alpha step, no alpha time
    assert SCIRLDA(4, n_gibbs=2, max_iter=1, random_state=0).fit(X_train).timings_["alpha"] == 0


def test_an_interrupted_fit_keeps_its_timings_and_a_resumed_one_goes_on(corpus, monkeypatch):
    X_train = corpus[0]
    calls = []
    step_topics = training.step_topics

    def stop_at_the_fifth(*args, **kwargs):
        calls.append(None)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return step_topics(*args, **kwargs)
    monkeypatch.setattr(training, "step_topics", stop_at_the_fifth)
    lda = SCIRLDA(4, n_gibbs=2, max_iter=3, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        lda.fit(X_train)
    monkeypatch.undo()
    assert lda.n_batch_iter_ == 4
    kept = lda.timings_
    assert sum(kept.values()) == pytest.approx(lda.training_seconds_, rel=1e-9)
    lda.set_params(warm_start=True).fit(X_train)
    assert lda.n_batch_iter_ == 9
    assert all(lda.timings_[phase] > kept[phase] for phase in ("read", "local", "global"))
    assert sum(lda.timings_.values()) == pytest.approx(lda.training_seconds_, rel=1e-9)
