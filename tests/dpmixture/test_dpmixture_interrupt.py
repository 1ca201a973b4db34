"""Interrupted DPMixture fits keep their iterations and resume bit for bit; checkpoints (#12)."""
import pickle

import joblib
import numpy as np
import pytest

from simplexsg import DPMixture
from simplexsg.datasets import make_multinomial_mixture
from simplexsg.dpmixture import init
from simplexsg.dpmixture.training import Trainer

FITTED = ("theta_", "sticks_", "alpha_", "n_iter_", "labels_", "weights_", "components_")


@pytest.fixture(scope="module")
def data():
    return make_multinomial_mixture(400, 20, 4, random_state=0)[0]


def assert_same_fit(a, b):
    for name in FITTED:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    strip = [{k: v for k, v in e.items() if k != "seconds"} for e in a.history_]
    assert strip == [{k: v for k, v in e.items() if k != "seconds"} for e in b.history_]


def stop_at_iteration(stop, exc=KeyboardInterrupt):
    """A replacement of ``Trainer.step`` that raises ``exc`` in iteration ``stop`` after the
    step (the iteration's sticks, components, alpha and allocations already changed: it must
    be undone). Only in the fit under test: its pilot chain (``init="pilot"``,
    ``init.run_pilot``) runs without a Trainer and is left alone."""
    step = Trainer.step

    def step_then_stop(trainer, X_rows, rows, laps=None):
        z = step(trainer, X_rows, rows, laps)
        if trainer.model.n_iter_ - 1 == stop:
            raise exc("injected")
        return z
    return step_then_stop


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["scir", "sgrld", "gibbs"])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_fit_keeps_its_iterations_and_resumes_bit_for_bit(
        data, monkeypatch, sampler, exc):
    settings = dict(batch_size=60, max_iter=25, evaluate_every=5, random_state=3)
    reference = DPMixture(sampler, **settings).fit(data)
    monkeypatch.setattr(Trainer, "step", stop_at_iteration(13, exc))
    model = DPMixture(sampler, **settings)
    with pytest.raises(exc, match="injected"):
        model.fit(data)
    monkeypatch.undo()
    assert model.interrupted_ and model.n_iter_ == 13 and model.stop_reason_ == "interrupted"
    assert np.isfinite(model.score(data)) and model.predict(data).shape == (400,)
    pickle.loads(pickle.dumps(model))
    model.set_params(warm_start=True).fit(data)
    assert not model.interrupted_
    assert_same_fit(model, reference)


def test_an_error_in_the_first_iteration_leaves_the_model_as_it_was(data, monkeypatch):
    model = DPMixture("scir", batch_size=60, max_iter=5, random_state=0).fit(data)
    before = pickle.dumps(model)
    monkeypatch.setattr(Trainer, "step", stop_at_iteration(0, RuntimeError))
    with pytest.raises(RuntimeError):
        model.set_params(random_state=1).fit(data)
    model.set_params(random_state=0)
    assert pickle.dumps(model) == before


def fitted_state(model):
    """Pickled bytes of every attribute of ``model`` but its parameters."""
    params = model.get_params()
    return pickle.dumps({k: v for k, v in vars(model).items() if k not in params})


def stop_the_pilot(exc):
    """A replacement of the pilot chain's ``iterate`` (``init.iterate``) that raises ``exc``
    after the pilot's third iteration."""
    iterate = init.iterate

    def iterate_then_stop(state, kernel, executor, X, z, n_total, t, rng, **kwargs):
        out = iterate(state, kernel, executor, X, z, n_total, t, rng, **kwargs)
        if t == 2:
            raise exc("injected")
        return out
    return iterate_then_stop


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_an_interrupted_partial_fit_or_pilot_leaves_the_model_as_it_was(data, monkeypatch, exc):
    """partial_fit, and fit before its first iteration (in the pilot chain), keep nothing of a
    failed call, ``stop_reason_`` included (None on a model only partial_fit has trained)."""
    model = DPMixture(total_samples=400, random_state=0).partial_fit(data[:60])
    assert model.stop_reason_ is None and not model.interrupted_
    before = fitted_state(model)
    monkeypatch.setattr(Trainer, "step", stop_at_iteration(1, exc))
    with pytest.raises(exc, match="injected"):
        model.partial_fit(data[60:120])
    assert fitted_state(model) == before
    monkeypatch.undo()
    model = DPMixture(max_iter=3, random_state=0).fit(data)
    before = fitted_state(model)
    monkeypatch.setattr(init, "iterate", stop_the_pilot(exc))
    with pytest.raises(exc, match="injected"):
        model.set_params(random_state=1).fit(data)
    assert fitted_state(model) == before


@pytest.mark.parametrize("where", ["/proc/x.joblib", "a folder"])
def test_an_unwritable_checkpoint_path_raises_before_training(data, tmp_path, where):
    """A checkpoint path that cannot be written (a folder; /proc, where no file can be created)
    raises a ValueError naming ``checkpoint_path`` before any iteration, and the fitted model
    is left as it was (#35: the first checkpoint failed with OSError after an iteration)."""
    model = DPMixture(max_iter=3, random_state=0).fit(data)
    score, before = model.score(data), fitted_state(model)
    path = tmp_path if where == "a folder" else where
    with pytest.raises(ValueError, match="checkpoint_path"):
        model.set_params(checkpoint_every=1, checkpoint_path=path).fit(data)
    assert model.score(data) == score and fitted_state(model) == before


def test_checkpoints_resume_bit_for_bit(data, tmp_path, monkeypatch):
    path = tmp_path / "dp.joblib"
    settings = dict(batch_size=60, max_iter=20, random_state=4)
    reference = DPMixture("scir", **settings).fit(data)
    monkeypatch.setattr(Trainer, "step", stop_at_iteration(17))
    model = DPMixture("scir", checkpoint_every=5, checkpoint_path=path, **settings)
    with pytest.raises(KeyboardInterrupt):
        model.fit(data)
    monkeypatch.undo()
    loaded = joblib.load(path)                               # written after iteration 15
    assert loaded.interrupted_ and loaded.n_iter_ == 15
    assert [p.name for p in tmp_path.iterdir()] == ["dp.joblib"]
    assert_same_fit(loaded.set_params(warm_start=True).fit(data), reference)


def test_warm_start_resumes_or_continues_on_the_same_rows_only(data, monkeypatch):
    monkeypatch.setattr(Trainer, "step", stop_at_iteration(3))
    model = DPMixture("scir", batch_size=60, max_iter=10, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        model.fit(data)
    monkeypatch.undo()
    model.set_params(warm_start=True)
    with pytest.raises(ValueError, match="base_concentration differ"):
        model.set_params(base_concentration=0.3).fit(data)
    model.set_params(base_concentration=0.5)
    with pytest.raises(ValueError, match="X differ"):
        model.fit(data[:200])
    model.fit(data)
    assert not model.interrupted_ and model.n_iter_ == 10
    model.fit(data)                                          # finished: continue the chain
    assert model.n_iter_ == 20
    with pytest.raises(ValueError, match="continues the chain, which needs the same rows"):
        model.fit(data[:200])
