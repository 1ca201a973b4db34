"""Tests of the document-completion split, the fixed-point fold-in and the perplexity.

Monte Carlo checks compare a mean of M independent draws with its exact value at Z = 5 standard
errors (two-sided false-failure rate 6e-7 per assertion). All seeds are fixed.
"""
import numpy as np
import pytest
import scipy.sparse as sp

from simplexsg.datasets import make_lda_corpus
from simplexsg.metrics import (completion_split, document_completion_perplexity,
                               document_completion_score, fixed_point_fold_in)

from helpers.stats import Z


@pytest.fixture(scope="module")
def corpus():
    return make_lda_corpus(300, 400, 8, doc_length=80, random_state=1)


def test_split_is_exact_and_reproducible(corpus):
    X = corpus[0]
    obs, held = completion_split(X, random_state=3)
    assert obs.shape == held.shape == X.shape
    assert obs.dtype == held.dtype == np.int64
    assert (obs + held != X).nnz == 0
    assert obs.min() >= 0 and held.min() >= 0
    lengths = np.asarray(X.sum(axis=1)).ravel()
    np.testing.assert_array_equal(np.asarray(obs.sum(axis=1)).ravel(), lengths // 2)
    again = completion_split(X, random_state=3)
    assert (again[0] != obs).nnz == 0 and (again[1] != held).nnz == 0
    assert (completion_split(X, random_state=4)[0] != obs).nnz > 0
    quarter, _ = completion_split(X, observed_fraction=0.25, random_state=3)
    np.testing.assert_array_equal(np.asarray(quarter.sum(axis=1)).ravel(),
                                  np.floor(0.25 * lengths))
    assert completion_split(X, observed_fraction=0.0)[0].nnz == 0
    assert completion_split(X, observed_fraction=1.0)[1].nnz == 0


def test_split_draws_tokens_uniformly():
    """Observed count of a word with 30 of 100 tokens, 50 observed: Hypergeometric, mean 15."""
    M = 2000
    X = sp.csr_matrix(np.tile([30, 70], (M, 1)))
    observed = completion_split(X, random_state=0)[0].toarray()[:, 0]
    var = 50 * 0.3 * 0.7 * 50 / 99
    assert abs(observed.mean() - 15.0) <= Z * np.sqrt(var / M)


def test_fold_in_recovers_the_generating_topic(corpus):
    topics = corpus[1]
    rng = np.random.default_rng(0)
    truth = np.array([0.6, 0.4, 0, 0, 0, 0, 0, 0])
    rows = [rng.multinomial(3000, topics[k]) for k in range(3)]  # single-topic documents
    rows += [rng.multinomial(4000, truth @ topics), np.zeros(topics.shape[1])]
    X = sp.csr_matrix(np.vstack(rows))
    alpha = np.linspace(0.05, 0.4, 8)
    theta = fixed_point_fold_in(topics, alpha, X)
    assert theta.shape == (5, 8)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    for k in range(3):
        assert theta[k, k] > 0.97, theta[k]
    np.testing.assert_allclose(theta[3], truth, atol=0.04)
    np.testing.assert_allclose(theta[4], alpha / alpha.sum())  # empty document: the prior


def test_hand_computed_example():
    """phi = [[.5,.5,0],[0,.5,.5]], alpha = (1, 3). Doc 0 observes word 0 twice: every step gives
    theta = (1 + 2, 3 + 0) / 6 = (.5, .5); it holds out words 1, 2: p = .5, .25. Doc 1 observes
    nothing: theta = (.25, .75); it holds out word 1: p = .5. Log-likelihood log(1/16), 3 tokens."""
    topics = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    alpha = np.array([1.0, 3.0])
    X_obs = sp.csr_matrix([[2, 0, 0], [0, 0, 0]])
    X_held = sp.csr_matrix([[0, 1, 1], [0, 1, 0]])
    np.testing.assert_allclose(fixed_point_fold_in(topics, alpha, X_obs, n_iter=1),
                               [[0.5, 0.5], [0.25, 0.75]])
    score = document_completion_score(topics, alpha, X_obs, X_held)
    assert score.n_tokens == 3
    assert score.log_likelihood == pytest.approx(-np.log(16))
    assert score.perplexity == pytest.approx(16 ** (1 / 3))
    assert document_completion_perplexity(topics, alpha, X_obs, X_held) == score.perplexity
    # a plugged-in fold-in is used as given: theta = (1, 0) for both documents
    custom = document_completion_score(topics, alpha, X_obs, sp.csr_matrix([[1, 1, 0], [2, 0, 0]]),
                                       fold_in=lambda t, a, x: np.tile([1.0, 0.0], (2, 1)))
    assert custom.perplexity == pytest.approx(2.0)


def test_true_topics_beat_random_topics(corpus):
    X, topics, _ = corpus
    obs, held = completion_split(X)
    true = document_completion_perplexity(topics, 0.1, obs, held)
    rng = np.random.default_rng(5)
    for _ in range(3):
        random_topics = rng.dirichlet(np.full(X.shape[1], 0.1), size=topics.shape[0])
        assert true < 0.5 * document_completion_perplexity(random_topics, 0.1, obs, held)
    assert true < X.shape[1]  # and beat the uniform distribution


def test_bad_inputs_raise(corpus):
    X, topics, _ = corpus
    obs, held = completion_split(X)
    good = (topics, 0.1, obs, held)

    def raises(match, *args, **kw):
        with pytest.raises(ValueError, match=match):
            document_completion_score(*args, **kw)

    raises("sums to", topics * 1.01, *good[1:])
    bad = topics.copy()
    bad[2, 5] = np.nan
    raises("non-finite entry nan at topic 2, word 5", bad, *good[1:])
    bad[2, 5] = -0.1
    raises("negative", bad, *good[1:])
    raises("shape", topics[0], *good[1:])
    raises("doc_topic_prior must be a scalar or have shape", topics, np.ones(3), obs, held)
    raises("doc_topic_prior must be finite and > 0", topics, 0.0, obs, held)
    raises("X_observed must have shape", topics, 0.1, obs[:-1], held)
    raises("no tokens", topics, 0.1, obs, held * 0)
    raises("X_heldout has 399 words", topics, 0.1, obs[:, :-1], held[:, :-1])
    raises("fold_in returned shape", *good, fold_in=lambda t, a, x: np.ones((2, 2)))
    raises("summing to 1", *good, fold_in=lambda t, a, x: np.ones((X.shape[0], topics.shape[0])))
    negative = held.copy().astype(np.float64)
    negative.data[0] = -1
    raises("non-negative counts", topics, 0.1, obs, negative)
    # a held-out word no topic can produce: named, never inf or NaN
    zero = topics.copy()
    w = held.indices[held.indptr[4]]
    zero[:, w] = 0.0
    zero /= zero.sum(axis=1, keepdims=True)
    first_doc = np.flatnonzero(held[:, w].toarray().ravel())[0]
    raises(f"held-out word {w} of document {first_doc} has probability 0", zero, 0.1, obs, held)
    with pytest.raises(ValueError, match="observed_fraction"):
        completion_split(X, observed_fraction=1.5)
    with pytest.raises(ValueError, match="integer counts"):
        completion_split(X * 0.5)
