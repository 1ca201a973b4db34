"""Interrupted LDA fits keep their progress and resume bit for bit; checkpoints (#12)."""
import pickle
import signal
import time

import joblib
import numpy as np
import pytest

import simplexsg.lda.training as training
from simplexsg import LDA, SCIRLDA
from simplexsg._fitting import atomic_dump
from simplexsg.lda.defaults import DEFAULT_SWEEPS

FITTED = ("components_", "topic_state_", "topic_state_scale_", "n_batch_iter_",
          "n_documents_seen_", "n_iter_", "burn_in_", "stop_reason_", "monitor_history_",
          "history_", "doc_topic_prior_")


@pytest.fixture(scope="module")
def corpus(four_topic_corpus):
    """The counts of conftest's corpus: 300 documents, 4 topics, 60 words."""
    return four_topic_corpus[0]


#: The entries of ``history_`` and ``monitor_history_`` that are measured, not computed.
MEASURED = {"seconds", "check_seconds", "timings"}


def assert_same_fit(a, b):
    """Equal fitted state, bit for bit; the histories' measured seconds are left out."""
    for name in FITTED:
        x, y = getattr(a, name), getattr(b, name)
        if name in ("history_", "monitor_history_"):
            x, y = ([{k: v for k, v in e.items() if k not in MEASURED} for e in h]
                    for h in (x, y))
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            assert x == y, name


class StopAfterCall:
    """Wraps a function of the training module; raises ``exc`` once its ``n``-th call has
    done its work."""

    def __init__(self, function, n, exc=KeyboardInterrupt):
        self.function, self.n, self.exc, self.calls = function, n, exc, 0

    def __call__(self, *args, **kwargs):
        result = self.function(*args, **kwargs)
        self.calls += 1
        if self.calls == self.n:
            raise self.exc("injected")
        return result


SETTINGS = [dict(max_iter=6),
            dict(max_iter=6, tol=1e-4, n_iter_no_change=2, evaluate_every=4),
            dict(max_iter=6, learn_doc_topic_prior=True, local_warm_start=True)]


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_fit_keeps_its_last_step_and_resumes_bit_for_bit(
        corpus, monkeypatch, settings, exc):
    reference = SCIRLDA(4, random_state=1, **settings).fit(corpus)
    # the global step has added the new topics into the running average when it is cut: a
    # step cut there has changed the model half-way, and must be undone
    monkeypatch.setattr(training, "step_topics", StopAfterCall(training.step_topics, 7, exc))
    model = SCIRLDA(4, random_state=1, **settings)
    with pytest.raises(exc, match="injected"):
        model.fit(corpus)
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    assert model.n_batch_iter_ == 6                          # init + 6 steps, the 7th cut
    assert np.isfinite(model.components_).all()
    np.testing.assert_allclose(model.components_.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.transform(corpus[:3]).shape, (3, 4))
    pickle.loads(pickle.dumps(model))
    monkeypatch.undo()
    model.set_params(warm_start=True).fit(corpus)
    assert not model.interrupted_
    assert_same_fit(model, reference)


def test_a_signal_timer_interrupts_fit_and_the_resumed_fit_equals_the_uninterrupted_one(corpus):
    settings = dict(max_iter=150, n_gibbs=10, random_state=2)
    start = time.perf_counter()
    reference = SCIRLDA(4, **settings).fit(corpus)
    seconds = time.perf_counter() - start
    model = SCIRLDA(4, **settings)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3 * seconds)
        with pytest.raises(KeyboardInterrupt):
            model.fit(corpus)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert model.interrupted_ and 0 < model.n_batch_iter_ < reference.n_batch_iter_
    model.set_params(warm_start=True).fit(corpus)
    assert_same_fit(model, reference)


def test_checkpoints_resume_bit_for_bit(corpus, tmp_path, monkeypatch):
    path = tmp_path / "lda.joblib"
    settings = dict(max_iter=8, random_state=3)
    reference = SCIRLDA(4, **settings).fit(corpus)
    monkeypatch.setattr(training, "step_topics", StopAfterCall(training.step_topics, 18))
    model = SCIRLDA(4, checkpoint_every=5, checkpoint_path=path, **settings)
    with pytest.raises(KeyboardInterrupt):
        model.fit(corpus)
    monkeypatch.undo()
    assert model.n_batch_iter_ == 17
    loaded = joblib.load(path)                               # written after step 15
    assert loaded.interrupted_ and loaded.n_batch_iter_ == 15
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lda.joblib"]  # no temporary left
    loaded.set_params(warm_start=True).fit(corpus)
    assert_same_fit(loaded, reference)
    # a finished fit's checkpoints: the last one resumes to the same model too
    SCIRLDA(4, checkpoint_every=7, checkpoint_path=path, **settings).fit(corpus)
    last = joblib.load(path)
    assert last.n_batch_iter_ == 21
    assert_same_fit(last.set_params(warm_start=True).fit(corpus), reference)


def test_resuming_needs_the_same_data_and_parameters(corpus, monkeypatch):
    monkeypatch.setattr(training, "step_topics", StopAfterCall(training.step_topics, 3))
    model = SCIRLDA(4, max_iter=5, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        model.fit(corpus)
    monkeypatch.undo()
    model.set_params(warm_start=True)
    saved = pickle.dumps(model)
    other = corpus.copy()
    other.data[0] += 1
    with pytest.raises(ValueError, match="X differ"):
        model.fit(other)
    with pytest.raises(ValueError, match="n_gibbs differ"):
        model.set_params(n_gibbs=3).fit(corpus)
    model.set_params(n_gibbs=DEFAULT_SWEEPS)
    assert pickle.dumps(model) == saved                      # refused: nothing changed
    model.set_params(n_jobs=2, verbose=0).fit(corpus)        # threads may change
    assert not model.interrupted_ and model.stop_reason_ == "max_iter"


def test_warm_start_after_a_finished_fit_continues_the_chain(corpus):
    first = SCIRLDA(4, max_iter=3, random_state=4).fit(corpus)
    steps, state = first.n_batch_iter_, first.topic_state_
    first.set_params(warm_start=True).fit(corpus)
    assert first.n_batch_iter_ == 2 * steps and first.n_iter_ == 3
    # a new average under the growing-block rule of the whole chain's steps (from 8 on at 18
    # steps): every step of this fit is averaged, none of the first fit's
    assert first.burn_in_ == steps
    assert not np.array_equal(first.topic_state_, state)
    fresh = SCIRLDA(4, max_iter=3, random_state=4).fit(corpus)
    assert not np.array_equal(first.components_, fresh.components_)
    # without warm_start, fit starts over
    first.set_params(warm_start=False).fit(corpus)
    assert_same_fit(first, fresh)
    with pytest.raises(ValueError, match="n_components=5 differs"):
        fresh.set_params(warm_start=True, n_components=5).fit(corpus)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("other", [dict(local_topics="sample"), dict(sampler="sgrld")])
def test_warm_start_with_a_sampler_that_needs_theta_draws_it_from_the_shapes(corpus, other,
                                                                           dtype):
    """The default chain's state is the shapes of the gammas theta is (``topic_state_scale_``
    set); a chain continued with a step that needs theta draws it from them: the state is
    theta again (scale None), of the model's dtype, finite and positive, and the same for the
    same seed."""
    first = LDA(4, sampler="scir", max_iter=3, random_state=4, dtype=dtype).fit(corpus)
    assert 0 < first.topic_state_scale_ < 1
    assert (first.topic_state_ >= first.topic_word_prior_ * (1 - 1e-12)).all()
    first.set_params(warm_start=True, **other).fit(corpus)
    assert first.topic_state_scale_ is None and first.topic_state_.dtype == dtype
    assert np.isfinite(first.topic_state_).all() and (first.topic_state_ > 0).all()
    again = LDA(4, sampler="scir", max_iter=3, random_state=4, dtype=dtype).fit(corpus)
    again.set_params(warm_start=True, **other).fit(corpus)
    np.testing.assert_array_equal(again.topic_state_, first.topic_state_)


@pytest.mark.parametrize("bad, match", [
    (dict(warm_start="yes"), "warm_start must be True or False"),
    (dict(checkpoint_every=0), "checkpoint_every"),
    (dict(checkpoint_every=5), "checkpoint_every needs checkpoint_path"),
    (dict(checkpoint_every=5, checkpoint_path="/no/such/folder/x.joblib"), "does not exist"),
])
def test_bad_interruption_parameters(corpus, bad, match):
    with pytest.raises(ValueError, match=match):
        SCIRLDA(4, max_iter=1, **bad).fit(corpus)


def test_atomic_dump_keeps_the_previous_file_when_writing_fails(tmp_path):
    path = tmp_path / "model.joblib"
    atomic_dump({"a": 1}, path)
    with pytest.raises(Exception):
        atomic_dump({"f": lambda: None}, path)               # lambdas do not pickle
    assert joblib.load(path) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["model.joblib"]


def test_a_shorter_fit_is_the_prefix_of_a_longer_one(corpus, monkeypatch):
    """Under the default average (the growing-block rule), nothing in a fit depends on how many
    passes it will make: ``max_iter=2`` gives exactly the model a 5-pass fit holds after its
    second pass (here: interrupted there), so a longer fit's intermediate states are what a
    user gets by asking for fewer passes (or a ``max_time``)."""
    short = SCIRLDA(4, max_iter=2, random_state=5).fit(corpus)
    monkeypatch.setattr(training, "step_topics",
                        StopAfterCall(training.step_topics, short.n_batch_iter_ + 1))
    longer = SCIRLDA(4, max_iter=5, random_state=5)
    with pytest.raises(KeyboardInterrupt):
        longer.fit(corpus)
    assert longer.n_batch_iter_ == short.n_batch_iter_ and longer.burn_in_ == short.burn_in_
    np.testing.assert_array_equal(longer.components_, short.components_)
    np.testing.assert_array_equal(longer.topic_state_, short.topic_state_)
