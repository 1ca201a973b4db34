"""The semi-synthetic corpora of ``benchmarks/harness/semisynthetic.py``: the documents follow
LDA with the given topics (first and second moments against their closed forms), the corpus
is reproducible chunk by chunk, the UCI file holds it exactly, and the recovery metric is the
one-to-one matched L1 distance."""
import numpy as np
import pytest
import scipy.sparse as sp

from harness import semisynthetic
from helpers.stats import Z
from simplexsg.datasets import load_uci_bow

#: Three topics on six words, with disjoint supports but for word 2, so that the documents'
#: word co-occurrences differ clearly from those of the topics' average (the unigram model).
TOPICS = np.array([[0.5, 0.3, 0.2, 0.0, 0.0, 0.0],
                   [0.0, 0.0, 0.2, 0.5, 0.3, 0.0],
                   [0.1, 0.0, 0.1, 0.0, 0.1, 0.7]])


def moments(topics, alpha, length):
    """E[x] and E[x x^T] of one LDA document of ``length`` tokens: with p = theta^T phi,
    E[x x^T] = L (L - 1) E[p p^T] + L diag(E[p]), and for theta ~ Dirichlet(alpha 1_K),
    A = K alpha, E[theta theta^T] = (alpha^2 1 1^T + alpha I) / (A (A + 1))."""
    K = topics.shape[0]
    A = K * alpha
    theta2 = (alpha ** 2 * np.ones((K, K)) + alpha * np.eye(K)) / (A * (A + 1))
    mean_p = topics.mean(axis=0)
    second = length * (length - 1) * topics.T @ theta2 @ topics + length * np.diag(mean_p)
    return length * mean_p, second


def test_documents_have_the_given_lengths():
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 40, size=300)
    X = semisynthetic.draw_documents(rng, semisynthetic.topic_cdfs(TOPICS), 0.1, lengths)
    assert X.shape == (300, 6)
    np.testing.assert_array_equal(np.asarray(X.sum(axis=1)).ravel(), lengths)


@pytest.mark.parametrize("alpha", [0.1, 1.0])
def test_documents_follow_lda_with_the_given_topics(alpha):
    n, L = 40_000, 8
    rng = np.random.default_rng(1)
    X = semisynthetic.draw_documents(rng, semisynthetic.topic_cdfs(TOPICS), alpha,
                                     np.full(n, L)).toarray().astype(float)
    mean, second = moments(TOPICS, alpha, L)
    np.testing.assert_array_less(np.abs(X.mean(axis=0) - mean),
                                 Z * X.std(axis=0) / np.sqrt(n) + 1e-12)
    products = X[:, :, None] * X[:, None, :]
    se = products.std(axis=0) / np.sqrt(n)
    np.testing.assert_array_less(np.abs(products.mean(axis=0) - second), Z * se + 1e-12)
    # the test has power: documents drawn from the topics' average would fail it
    unigram = np.repeat(TOPICS.mean(axis=0, keepdims=True), 3, axis=0)
    assert np.any(np.abs(moments(unigram, alpha, L)[1] - second) > 20 * se)


def test_corpus_is_the_same_chunk_by_chunk_and_heldout_apart():
    topics, lengths = TOPICS, np.array([3, 5, 9, 12])
    small = list(semisynthetic.corpus_chunks(topics, lengths, 25, 0.1, seed=4, chunk=10))
    large = list(semisynthetic.corpus_chunks(topics, lengths, 45, 0.1, seed=4, chunk=10))
    for a, b in zip(small[:2], large[:2]):
        assert (a != b).nnz == 0
    assert [c.shape[0] for c in small] == [10, 10, 5]
    lengths_drawn = np.concatenate([np.asarray(c.sum(axis=1)).ravel() for c in large])
    assert set(lengths_drawn) <= set(lengths)
    test = semisynthetic.heldout_documents(topics, lengths, 7, 0.1, seed=4)
    assert (test != semisynthetic.heldout_documents(topics, lengths, 7, 0.1, seed=4)).nnz == 0
    assert (test != semisynthetic.heldout_documents(topics, lengths, 7, 0.1, seed=5)).nnz > 0


def test_write_uci_holds_the_chunks(tmp_path):
    chunks = list(semisynthetic.corpus_chunks(TOPICS, np.array([0, 4, 30]), 23, 0.5, seed=2,
                                              chunk=10))
    info = semisynthetic.write_uci(iter(chunks), tmp_path / "docword.txt")
    X, _ = load_uci_bow(tmp_path / "docword.txt")
    expected = sp.vstack(chunks, format="csr")
    assert X.shape == expected.shape == (23, 6)
    assert (X.tocsr() != expected).nnz == 0
    assert info["tokens"] == expected.sum() and info["nnz"] == expected.nnz


def test_recovery_is_zero_for_the_truth_in_any_order():
    order = [2, 0, 1]
    assert semisynthetic.topic_recovery(TOPICS[order] * 3.0, TOPICS) == pytest.approx(0.0)


def test_recovery_matches_one_to_one():
    # both fitted topics sit near true topic 0: one-to-one matching must give the second one
    # to true topic 1 (a nearest-topic match would pair both with topic 0)
    truth = TOPICS[:2]
    near = TOPICS[0] * 0.9 + TOPICS[1] * 0.1
    fitted = np.stack([TOPICS[0], near])
    expected = (0.0 + np.abs(near - TOPICS[1]).sum()) / 2
    assert semisynthetic.topic_recovery(fitted, truth) == pytest.approx(expected)


def test_recovery_of_disjoint_topics_is_two():
    assert semisynthetic.topic_recovery(np.eye(3)[[0]], np.eye(3)[[2]]) == pytest.approx(2.0)
