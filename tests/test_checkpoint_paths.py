"""Every estimator with checkpoints checks ``checkpoint_path`` before it trains, and a
checkpoint that cannot be written during a fit costs the fit nothing (#35)."""
import pickle

import numpy as np
import pytest

import simplexsg._fitting as plumbing
from simplexsg import BayesianLinearRegression, BayesianLogisticRegression, DPMixture, SCIRLDA
from simplexsg.datasets import make_lda_corpus

COUNTS = make_lda_corpus(60, 20, 3, doc_length=20, random_state=0)[0]
X_REG = np.random.default_rng(0).standard_normal((60, 3))
Y_REG = X_REG @ [1.0, -1.0, 0.5] + np.random.default_rng(1).standard_normal(60)
CASES = {
    "lda": (lambda: SCIRLDA(3, max_iter=2, random_state=0), (COUNTS,)),
    "dp": (lambda: DPMixture("scir", max_iter=4, batch_size=20, random_state=0), (COUNTS,)),
    "linear": (lambda: BayesianLinearRegression(n_iter=40, random_state=0), (X_REG, Y_REG)),
    "logistic": (lambda: BayesianLogisticRegression(n_iter=40, random_state=0),
                 (X_REG, (Y_REG > 0).astype(int))),
}


def fitted_bytes(model, clock=True):
    """Every fitted attribute, pickled (``clock=False``: but the times, ``*seconds_`` and
    ``timings_``): equal bytes, equal model."""
    return pickle.dumps(sorted((k, v) for k, v in vars(model).items() if k.endswith("_") and (
        clock or not (k.endswith("seconds_") or k == "timings_"))))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("path, problem", [
    ("/proc/x.joblib", "cannot write in '/proc'"),
    ("{tmp}", "is a folder"),
    ("{tmp}/missing/x.joblib", "does not exist"),
])
def test_a_bad_checkpoint_path_fails_before_training_and_keeps_the_model(case, path, problem,
                                                                         tmp_path):
    make, data = CASES[case]
    model = make().fit(*data)
    before = fitted_bytes(model)
    model.set_params(checkpoint_every=1, checkpoint_path=path.format(tmp=tmp_path))
    with pytest.raises(ValueError, match=f"checkpoint_path .*{problem}"):
        model.fit(*data)
    assert fitted_bytes(model) == before


@pytest.mark.parametrize("case", CASES)
def test_a_checkpoint_that_cannot_be_written_mid_fit_warns_and_costs_nothing(case, tmp_path,
                                                                             monkeypatch):
    def disk_full(obj, path):
        raise OSError(28, "No space left on device")

    make, data = CASES[case]
    expected = make().fit(*data)
    monkeypatch.setattr(plumbing, "atomic_dump", disk_full)
    model = make().set_params(checkpoint_every=1, checkpoint_path=tmp_path / "model.joblib")
    with pytest.warns(RuntimeWarning, match="checkpoint not written .*No space left"):
        model.fit(*data)
    assert not model.interrupted_
    assert fitted_bytes(model, clock=False) == fitted_bytes(expected, clock=False)
