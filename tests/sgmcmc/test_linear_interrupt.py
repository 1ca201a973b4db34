"""Interrupted regression fits keep their samples and resume bit for bit; checkpoints (#12)."""
import joblib
import numpy as np
import pytest
from sklearn.datasets import make_classification

import simplexsg.sgmcmc.regression_defaults as integrator_module
from simplexsg import BayesianLinearRegression, BayesianLogisticRegression

FITTED = ("coef_samples_", "coef_", "intercept_", "step_size_", "burn_in_")


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=400, n_features=5, random_state=0)
    return X, y


def assert_same_fit(a, b):
    for name in FITTED:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def stopping_integrator(cls, n, exc=KeyboardInterrupt):
    """A subclass of the integrator ``cls`` whose ``n``-th step raises ``exc`` half-way: after
    drawing its noise, before returning the new state."""
    calls = [0]

    class Stopping(cls):
        def step(self, state, grad, h, rng):
            calls[0] += 1
            new = super().step(state, grad, h, rng)
            if calls[0] == n:
                raise exc("injected")
            return new
    return Stopping


@pytest.mark.parametrize("cls, settings, integrator", [
    (BayesianLogisticRegression, dict(), "SGLD"),
    (BayesianLogisticRegression, dict(sampler="sghmc", thin=3, zv=True), "SGHMC"),
    (BayesianLinearRegression, dict(sampler="sgld", noise_variance=1.0), "SGLD"),
    (BayesianLinearRegression, dict(zv=True), "SGLD"),     # the standardised chain's centre
])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_fit_keeps_its_samples_and_resumes_bit_for_bit(
        data, monkeypatch, cls, settings, integrator, exc):
    X, y = data
    reference = cls(n_iter=600, random_state=3, **settings).fit(X, y)
    monkeypatch.setattr(integrator_module, integrator, stopping_integrator(
        getattr(integrator_module, integrator), 451, exc))
    model = cls(n_iter=600, random_state=3, **settings)
    with pytest.raises(exc, match="injected"):
        model.fit(X, y)
    monkeypatch.undo()
    assert model.interrupted_
    thin = settings.get("thin", 1)
    assert len(model.coef_samples_) == 450 // thin - model.burn_in_ // thin
    np.testing.assert_array_equal(                       # the samples so far are the reference's
        model.coef_samples_, reference.coef_samples_[:len(model.coef_samples_)])
    assert np.isfinite(model.predict(X[:5]).astype(float)).all()
    model.set_params(warm_start=True).fit(X, y)
    assert not model.interrupted_
    assert_same_fit(model, reference)


def test_interrupted_during_burn_in_keeps_the_current_state(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(integrator_module, "SGLD", stopping_integrator(integrator_module.SGLD, 50))
    model = BayesianLogisticRegression(sampler="sgld", n_iter=400, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, y)
    assert model.interrupted_ and model.coef_samples_.shape == (1, 5)


def test_checkpoints_resume_bit_for_bit(data, tmp_path, monkeypatch):
    X, y = data
    path = tmp_path / "model.joblib"
    reference = BayesianLogisticRegression(n_iter=500, random_state=1).fit(X, y)
    monkeypatch.setattr(integrator_module, "SGLD", stopping_integrator(integrator_module.SGLD, 330))
    model = BayesianLogisticRegression(n_iter=500, random_state=1, checkpoint_every=100,
                                       checkpoint_path=path)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, y)
    monkeypatch.undo()
    loaded = joblib.load(path)                               # written after step 300
    assert loaded.interrupted_ and len(loaded.coef_samples_) == 300
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.joblib"]
    loaded.set_params(warm_start=True).fit(X, y)
    assert_same_fit(loaded, reference)


def test_resuming_needs_the_same_data_and_parameters(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(integrator_module, "SGLD", stopping_integrator(integrator_module.SGLD, 100))
    model = BayesianLogisticRegression(n_iter=300, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, y)
    monkeypatch.undo()
    model.set_params(warm_start=True)
    with pytest.raises(ValueError, match="data differ"):
        model.fit(X + 1, y)
    with pytest.raises(ValueError, match="prior_scale differ"):
        model.set_params(prior_scale=2.0).fit(X, y)
    model.set_params(prior_scale=1.0, verbose=0).fit(X, y)
    assert not model.interrupted_


def test_warm_start_after_a_finished_fit_continues_the_chain(data):
    X, y = data
    model = BayesianLogisticRegression(sampler="sgld", n_iter=400, random_state=2).fit(X, y)
    first = model.coef_samples_.copy()
    model.set_params(warm_start=True).fit(X, y)
    assert model.coef_samples_.shape == first.shape
    assert not np.array_equal(model.coef_samples_, first)
    fresh = BayesianLogisticRegression(sampler="sgld", n_iter=400, random_state=2).fit(X, y)
    model.set_params(warm_start=False).fit(X, y)
    assert_same_fit(model, fresh)
