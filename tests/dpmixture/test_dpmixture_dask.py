"""DPMixture on a Dask cluster (``simplexsg.dpmixture.distributed``): the fit equals the
in-process one bit for bit, a killed worker changes nothing, and an iteration moves the
``log phi`` columns of the minibatch's features, not J x d."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

distributed = pytest.importorskip("distributed")

from simplexsg import DPMixture  # noqa: E402
from simplexsg import _dask as dask_shards  # noqa: E402
from simplexsg.datasets import make_multinomial_mixture, save_uci_bow  # noqa: E402
from simplexsg.dpmixture import distributed as dask_dp  # noqa: E402

from helpers.dask_faults import fail_at, kill_a_worker_at  # noqa: E402

pytestmark = pytest.mark.slow     # the module starts a Dask cluster (conftest's client)

N, D = 240, 2000
STATE = ("theta_", "sticks_", "alpha_", "labels_", "n_iter_", "weights_", "components_")


@pytest.fixture(scope="module")
def X():
    return make_multinomial_mixture(N, D, 4, row_length=15, random_state=3)[0]


def assert_same_fit(a, b):
    for name in STATE:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    strip = [{k: v for k, v in entry.items() if k != "seconds"} for entry in a.history_]
    assert strip == [{k: v for k, v in entry.items() if k != "seconds"}
                     for entry in b.history_]


def recording(monkeypatch):
    """The DaskExecutors the estimator builds, in a list."""
    executors = []

    class Recording(dask_dp.DaskExecutor):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            executors.append(self)

    monkeypatch.setattr(dask_dp, "DaskExecutor", Recording)
    return executors


@pytest.mark.parametrize("sampler, init", [("scir", "pilot"), ("sgrld", "random")])
def test_fit_on_the_cluster_equals_the_local_fit(client, X, sampler, init):
    # "pilot": every row's first allocation (weighted by the sticks) runs on the workers too
    params = dict(sampler=sampler, init=init, batch_size=40, max_iter=8, random_state=0,
                  evaluate_every=4)
    local = DPMixture(**params).fit(X, X_heldout=X[:30])
    remote = DPMixture(client=client, **params).fit(X, X_heldout=X[:30])
    assert_same_fit(local, remote)


def test_any_number_of_shards_gives_the_same_fit(client, X, monkeypatch):
    # 5 shards on 2 workers: up to 5 shares a minibatch, summed by a tree with an odd part
    slots = dask_shards.worker_slots(client)
    monkeypatch.setattr(dask_shards, "worker_slots", lambda _: (slots * 3)[:5])
    executors = recording(monkeypatch)
    params = dict(sampler="scir", init="random", batch_size=60, max_iter=5, random_state=5)
    remote = DPMixture(client=client, **params).fit(X)
    assert len(executors[0].corpus.shards) == 5
    assert max(step["shares"] for step in executors[0].traffic) >= 3
    assert_same_fit(DPMixture(**params).fit(X), remote)


def test_an_iteration_sends_the_columns_of_the_minibatchs_features_not_j_x_d(client, X,
                                                                            monkeypatch):
    executors = recording(monkeypatch)
    batch = 20
    DPMixture("scir", init="random", batch_size=batch, max_iter=6, random_state=0,
              client=client).fit(X)
    traffic = executors[0].traffic
    assert len(traffic) == 6
    for step in traffic:
        J, features, shares = step["components"], step["features"], step["shares"]
        # row numbers (twice), slices and uniforms: 8 bytes each a row; log w: J a share
        columns = step["sent"] - 4 * 8 * batch - shares * 8 * J
        assert 0 < columns <= shares * features * J * 8
        assert step["received"] <= shares * features * 8 + 8 * batch + 3 * 8 * features * J
        assert step["sent"] < J * D * 8 / 2 and step["received"] < J * D * 8 / 2


def test_a_worker_killed_mid_fit_changes_nothing(client, X, monkeypatch):
    params = dict(sampler="scir", init="random", batch_size=40, max_iter=6, random_state=2)
    expected = DPMixture(**params).fit(X)
    killed = kill_a_worker_at(monkeypatch, dask_dp.DaskExecutor, 2)   # as the next step starts
    remote = DPMixture(client=client, **params).fit(X)
    assert killed and killed[0] not in client.nthreads()
    assert_same_fit(expected, remote)
    client.wait_for_workers(2, timeout=60)


def test_a_fit_stopped_by_a_failing_iteration_resumes_to_the_same_model(client, X,
                                                                        monkeypatch):
    params = dict(sampler="sgrld", init="random", batch_size=40, max_iter=6, random_state=4)
    expected = DPMixture(**params).fit(X)
    fail_at(monkeypatch, dask_dp.DaskExecutor, 3, "allocation")             # the fourth iteration
    model = DPMixture(client=client, **params)
    with pytest.raises(distributed.KilledWorker):
        model.fit(X)
    assert model.interrupted_ and model.n_iter_ == 3
    monkeypatch.undo()
    assert_same_fit(expected, model.set_params(warm_start=True).fit(X))


def test_files_read_by_the_workers_equal_the_stacked_matrix(client, X, tmp_path):
    # the pilot's rows (a subset), every row's entry count and the convergence check's sample
    # come back from the workers; the rows never pass through this process otherwise
    parts = [X[:100], X[100:130], X[130:]]
    paths = [tmp_path / f"rows.{i}.txt" for i in range(3)]
    for part, path in zip(parts, paths):
        save_uci_bow(part, path)
    params = dict(sampler="scir", batch_size=50, max_iter=6, init_rows=120, tol=1e-9,
                  n_iter_no_change=10, random_state=7)
    shards = dask_dp.CorpusShards(paths)
    local = DPMixture(**params).fit(sp.vstack(parts))
    remote = DPMixture(client=client, **params).fit(shards)
    assert_same_fit(local, remote)
    assert len(local._monitor.history) == 1             # one pass checked, on the same rows
    assert [e["minus_score"] for e in remote._monitor.history] == \
        [e["minus_score"] for e in local._monitor.history]
    assert remote.n_features_in_ == D and not hasattr(remote, "feature_names_in_")
    more = dict(warm_start=True, max_iter=3)          # the chain continued on the same files
    assert_same_fit(local.set_params(**more).fit(sp.vstack(parts)),
                    remote.set_params(**more).fit(shards))
    with pytest.raises(ValueError, match="continues the chain"):
        remote.fit(dask_dp.CorpusShards(paths[:2]))
    with pytest.raises(TypeError, match="workers of a Dask client"):
        DPMixture(**params).fit(shards)
    for method in (remote.predict, remote.score, remote.partial_fit):
        with pytest.raises(TypeError, match="in fit only"):
            method(shards)


def test_what_a_client_refuses_and_a_pickle_drops(client, X):
    for sampler in ("gibbs", "auto"):
        with pytest.raises(ValueError, match="split-merge.*sampler='scir'"):
            DPMixture(sampler, client=client).fit(X)
    with pytest.raises(TypeError, match="streamed corpus"):
        DPMixture("scir", client=client).fit(RowStream(X))
    model = DPMixture("scir", init="random", max_iter=2, random_state=0, client=client).fit(X)
    restored = pickle.loads(pickle.dumps(model))
    assert restored.client is None
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))


class RowStream:
    """A re-iterable bag-of-words corpus without len(), declaring ``n_features``."""

    def __init__(self, X):
        self.X, self.n_features = sp.csr_array(X), X.shape[1]

    def __iter__(self):
        for i in range(self.X.shape[0]):
            row = self.X[[i]]
            yield list(zip(row.indices.tolist(), row.data.tolist()))
