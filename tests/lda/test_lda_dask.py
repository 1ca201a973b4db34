"""LDA on a Dask cluster (``simplexsg.lda.distributed``): the fit equals the in-process one bit
for bit, a killed worker changes nothing, and a step moves topic columns of the minibatch's
words, not K x W."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

distributed = pytest.importorskip("distributed")

from simplexsg import LDA, SCIRLDA, SGRLDLDA  # noqa: E402
from simplexsg.datasets import make_lda_corpus, save_uci_bow  # noqa: E402
from simplexsg.lda import distributed as dask_lda  # noqa: E402

from helpers.dask_faults import fail_at, kill_a_worker_at  # noqa: E402

pytestmark = pytest.mark.slow     # the module starts a Dask cluster (conftest's client)

K, W = 5, 2000


@pytest.fixture(scope="module")
def corpus():
    return make_lda_corpus(240, W, K, doc_length=40, random_state=3)[0]


def assert_same_fit(a, b):
    for name in ("topic_state_", "components_", "doc_topic_prior_", "n_batch_iter_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("cls, extra", [(SCIRLDA, {}), (SGRLDLDA, {}),
                                        (SCIRLDA, dict(learn_doc_topic_prior=True)),
                                        (SCIRLDA, dict(rao_blackwell=False))])
def test_fit_on_the_cluster_equals_the_local_fit(client, corpus, cls, extra):
    params = dict(n_components=K, batch_size=40, max_iter=2, random_state=0, **extra)
    local = cls(**params).fit(corpus)
    remote = cls(client=client, **params).fit(corpus)
    assert_same_fit(local, remote)


def test_transform_and_score_on_the_cluster_equal_the_local_ones(client, corpus):
    local = LDA(n_components=K, max_iter=1, random_state=0).fit(corpus)
    remote = pickle.loads(pickle.dumps(local)).set_params(client=client)
    np.testing.assert_array_equal(local.transform(corpus[:50]), remote.transform(corpus[:50]))
    assert remote.score(corpus[:50]) == local.score(corpus[:50])


def test_files_read_by_the_workers_equal_the_stacked_matrix(client, corpus, tmp_path):
    paths = [tmp_path / f"docword.{i}.txt" for i in range(3)]
    parts = [corpus[:100], corpus[100:130], corpus[130:]]
    for part, path in zip(parts, paths):
        save_uci_bow(part, path)
    params = dict(n_components=K, batch_size=60, max_iter=2, random_state=1)
    local = LDA(**params).fit(sp.vstack(parts))
    shards = dask_lda.CorpusShards(paths)
    remote = LDA(client=client, **params).fit(shards)
    assert_same_fit(local, remote)
    np.testing.assert_array_equal(remote.transform(shards), local.transform(sp.vstack(parts)))
    assert remote.score(shards) == pytest.approx(local.score(sp.vstack(parts)), rel=1e-13)
    with pytest.raises(TypeError, match="workers of a Dask client"):
        LDA(**params).fit(dask_lda.CorpusShards(paths))


def test_a_step_sends_the_columns_of_the_minibatchs_words_not_k_x_w(client, corpus):
    batch = 20
    model = LDA(n_components=K, batch_size=batch, max_iter=1, random_state=0, client=client)
    traffic = model.fit(corpus).client_traffic_
    assert len(traffic) == corpus.shape[0] // batch
    for step in traffic:
        # each of the (at most 2) shares gets the columns of at most the minibatch's words
        columns = step["sent"] - 2 * 8 * batch - 2 * 8 * K
        assert 0 < columns <= 2 * step["words"] * K * 8
        # back: its words, and a COO triple per word and topic or alpha part
        assert step["received"] <= step["words"] * (8 + 3 * 8 * (K + 1))
        assert step["sent"] < K * W * 8 / 2               # far from the topic matrix


def test_a_worker_killed_mid_fit_changes_nothing(client, corpus, monkeypatch):
    params = dict(n_components=K, batch_size=40, max_iter=2, random_state=2)
    expected = LDA(**params).fit(corpus)
    killed = kill_a_worker_at(monkeypatch, dask_lda.DaskExecutor, 3)   # as the next step starts
    remote = LDA(client=client, **params).fit(corpus)
    assert killed and killed[0] not in client.nthreads()
    assert_same_fit(expected, remote)
    client.wait_for_workers(2, timeout=60)


def test_a_fit_stopped_by_a_failing_step_resumes_to_the_same_model(client, corpus,
                                                                  monkeypatch):
    params = dict(n_components=K, batch_size=40, max_iter=2, random_state=4)
    expected = LDA(**params).fit(corpus)
    fail_at(monkeypatch, dask_lda.DaskExecutor, 3, "step")             # the fourth step
    model = LDA(client=client, **params)
    with pytest.raises(distributed.KilledWorker):
        model.fit(corpus)
    assert model.interrupted_ and model.n_batch_iter_ == 3
    monkeypatch.undo()
    assert_same_fit(expected, model.set_params(warm_start=True).fit(corpus))


def test_what_a_client_refuses_and_a_pickle_drops(client, corpus):
    with pytest.raises(ValueError, match="local_warm_start"):
        LDA(client=client, local_warm_start=True).fit(corpus)
    with pytest.raises(TypeError, match="streamed corpus"):
        LDA(client=client).fit(DocumentStream(corpus), id2word={i: str(i) for i in range(W)})
    model = LDA(n_components=K, max_iter=1, random_state=0, client=client).fit(corpus)
    assert pickle.loads(pickle.dumps(model)).client is None


class DocumentStream:
    """A re-iterable bag-of-words corpus without len(): streamed by ``fit``."""

    def __init__(self, X):
        self.X = sp.csr_array(X)

    def __iter__(self):
        for d in range(self.X.shape[0]):
            row = self.X[[d]]
            yield list(zip(row.indices.tolist(), row.data.tolist()))
