"""Tests of LDA(learn_doc_topic_prior=...): alpha sampled by SGLD-CV inside the LDA loop.

Reference: the corpora of the recovery tests are drawn here (``corpus_with_assignments``), so
the true doc-topic counts n_dk are known, and the posterior of alpha GIVEN THOSE COUNTS
(Gamma(1, 1) prior, the model of ``simplexsg.hyperparameters``) is computed exactly: by
quadrature for the symmetric alpha, by the Laplace approximation for the per-topic alphas
(D = 400 documents: the posterior of log alpha is Gaussian to a few % of its sd). The LDA
chain targets the posterior given the WORDS, whose mean differs from the reference's by the
spread of E[alpha | z] over the assignments z the words allow: at most the posterior sd given
the words, which these well separated topics (TV ~0.04 from the truth after the fit) keep
close to the reference sd. The estimate ``doc_topic_prior_`` is a mean over the kept steps of
the chain, whose Monte Carlo standard error is that of an AR(1) chain with the sampler's step
h = STEP_SCALE / L (L the largest curvature of -log posterior in log alpha): per coordinate,
Var(mean of n steps) = 2 [H^-2]_kk / (h n), which for one alpha is 2 sd^2 / (STEP_SCALE n),
i.e. 20 sd^2 / n. Tolerance: Z = 5 times sqrt(reference sd^2 + standard error^2).

What that detects (measured on the symmetric case, reference sd 3.5% of alpha, tolerance
19%): a prior that moves the posterior (Gamma(1, 3000): -15 sd), alphas handed to the wrong
topics or one alpha for all (per-topic case), a sampler step 4x too large or too small (the
increments check). What it does not: biases under ~5 sd, such as the default local step's
-10% (-2.9 sd) here, or feeding the sampler sweep-averaged counts instead of one draw
(+9%, +2.7 sd, here; larger with overlapping topics, ``simplexsg.hyperparameters``).
"""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment, minimize
from scipy.special import digamma, gammaln

from simplexsg import LDA, SCIRLDA
from simplexsg.datasets import make_lda_corpus
from simplexsg.lda.alpha import STEP_SCALE, DocTopicPriorSampler

from helpers.stats import Z

TRUE_ALPHA = 0.3
PER_TOPIC_ALPHA = np.array([0.2, 0.25, 0.3, 0.4, 0.5])
#: Passes of the recovery fits: 3 steps a pass (D = 400, the default batch of 134), half kept,
#: so 150 alpha samples. 0.35 s a fit. At the default 20 passes the default local step
#: (local_topics="mean") is still 11-16% below the reference mean (-3 to -4.5 sd, 3 corpus
#: seeds); the exact local step ("sample") within +-1.5 sd.
PASSES = 100


def corpus_with_assignments(alpha, seed, n_docs=400, n_words=300, length=100, beta=0.05):
    """An LDA corpus (X CSR int64, topics (K, W), true doc-topic counts n_dk (D, K))."""
    rng = np.random.default_rng(seed)
    alpha = np.asarray(alpha, dtype=float)
    topics = rng.dirichlet(np.full(n_words, beta), size=len(alpha))
    doc_topic = rng.dirichlet(alpha, size=n_docs)
    n_dk = rng.multinomial(rng.poisson(length, size=n_docs), doc_topic)
    X = sum(rng.multinomial(n_dk[:, k], topics[k]) for k in range(len(alpha)))
    return sp.csr_array(X.astype(np.int64)), topics, n_dk


def log_posterior(u, n_dk):
    """log p(u | n_dk) + const, u = log alpha (1,) symmetric or (K,): Dirichlet-multinomial
    likelihood and a Gamma(1, 1) prior on alpha (density in u: u - alpha)."""
    alpha = np.broadcast_to(np.exp(u), (n_dk.shape[1],))
    A, N = alpha.sum(), n_dk.sum(axis=1)
    return (np.sum(gammaln(A) - gammaln(A + N)) + np.sum(gammaln(alpha + n_dk) - gammaln(alpha))
            + np.sum(u - np.exp(u)))


def grad_log_posterior(u, n_dk):
    """Gradient in u of ``log_posterior`` for per-topic u (K,)."""
    alpha = np.exp(u)
    A, N = alpha.sum(), n_dk.sum(axis=1)
    g = np.sum(digamma(A) - digamma(A + N)) + np.sum(digamma(alpha + n_dk) - digamma(alpha), axis=0)
    return alpha * g + 1.0 - alpha


def symmetric_posterior(n_dk):
    """Exact posterior mean and sd of alpha, and sd of log alpha, by quadrature on log alpha."""
    u = np.linspace(np.log(0.05), np.log(2.0), 4001)
    log_p = np.array([log_posterior(np.array([x]), n_dk) for x in u])
    w = np.exp(log_p - log_p.max())
    w /= w.sum()
    mean, mean_u = w @ np.exp(u), w @ u
    return mean, np.sqrt(w @ (np.exp(u) - mean) ** 2), np.sqrt(w @ (u - mean_u) ** 2)


def per_topic_posterior(n_dk):
    """Laplace approximation of the posterior of u = log alpha (K,): mode and covariance."""
    K = n_dk.shape[1]
    res = minimize(lambda u: -log_posterior(u, n_dk), np.zeros(K),
                   jac=lambda u: -grad_log_posterior(u, n_dk), method="BFGS",
                   options={"gtol": 1e-10})
    eps = 1e-5
    H = -np.array([(grad_log_posterior(res.x + e, n_dk) - grad_log_posterior(res.x - e, n_dk))
                   / (2 * eps) for e in np.eye(K) * eps])
    H = (H + H.T) / 2
    return res.x, H


def matched(estimated, truth):
    """Index of the estimated topic matched to each true topic (Hungarian on TV), and the TVs."""
    tv = 0.5 * np.abs(truth[:, None, :] - estimated[None, :, :]).sum(axis=-1)
    rows, cols = linear_sum_assignment(tv)
    return cols, tv[rows, cols]


@pytest.fixture(scope="module")
def corpus():
    X, topics, _ = make_lda_corpus(400, 300, 5, doc_length=100, doc_topic_prior=TRUE_ALPHA,
                                   topic_word_prior=0.05, random_state=0)
    return X


@pytest.fixture(scope="module")
def symmetric_case():
    return corpus_with_assignments(np.full(5, TRUE_ALPHA), seed=1)


def model(**kwargs):
    params = dict(n_components=5, doc_topic_prior=0.1, topic_word_prior=0.05,
                  learn_doc_topic_prior=True, max_iter=15, random_state=0)
    return SCIRLDA(**{**params, **kwargs})


# local_topics="mean" (the default) sits -2.9 sd (-10%) below the reference here, from either
# start (the exact step: -0.1, +0.0 sd): the tolerance (5.3 sd) does not detect that bias, it
# guards against a larger one. Seeds: corpus 1, chain 0, where every fit recovers the topics
# (another seed can leave two true topics merged, TV > 0.9, from some start).
@pytest.mark.slow
@pytest.mark.parametrize("local_topics, start", [("sample", 0.05), ("sample", 2.0),
                                                 ("mean", 0.05)])
def test_learned_symmetric_alpha_matches_its_posterior(symmetric_case, local_topics, start):
    X, topics, n_dk = symmetric_case
    mean, sd, sd_u = symmetric_posterior(n_dk)
    lda = model(doc_topic_prior=start, local_topics=local_topics, max_iter=PASSES).fit(X)
    assert matched(lda.components_, topics)[1].max() < 0.1      # the topics were found
    assert isinstance(lda.doc_topic_prior_, float)
    samples = lda.doc_topic_prior_samples_
    assert samples.shape == (lda.n_batch_iter_, 5)
    assert np.all(samples == samples[:, :1])                 # symmetric: one value per step
    kept = samples[lda.burn_in_:, 0]
    np.testing.assert_allclose(lda.doc_topic_prior_, kept.mean(), rtol=1e-12)
    standard_error = sd * np.sqrt(2.0 / (STEP_SCALE * len(kept)))
    tolerance = Z * np.hypot(sd, standard_error)       # 0.055 here: 19% of the mean 0.291
    assert abs(lda.doc_topic_prior_ - mean) < tolerance, (lda.doc_topic_prior_, mean, tolerance)
    # The chain moves as its step says: an SGLD step of log alpha has noise sqrt(2 h), h =
    # STEP_SCALE sd_u^2; the drift adds ~2.5% to the increments' sd (h L / 2 = 0.05 on the
    # variance), the control variate's gradient noise and L's estimate from the Gibbs counts a
    # few %; measured 0.97 .. 1.04. Bound: 5 standard errors of a sample sd (1 / sqrt(2 n))
    # plus 0.1 for those. A chain that stuck, or a step off by 4x, fails.
    increments = np.diff(np.log(kept))
    ratio = increments.std(ddof=1) / (np.sqrt(2 * STEP_SCALE) * sd_u)
    assert abs(ratio - 1) < Z / np.sqrt(2 * len(increments)) + 0.1, ratio


@pytest.mark.slow
def test_learned_per_topic_alphas_match_their_topics_posterior():
    # Distinct true alphas (0.2 .. 0.5, log ratios up to 0.92 against a tolerance of ~0.35),
    # so each learned alpha must follow its own topic: the learned topic k is matched to a true
    # topic and its alpha compared with that topic's posterior given the true counts. Measured
    # -1.2 .. 0 sd with the exact local step; the default one gives -2.1 .. -3.0 sd here.
    X, topics, n_dk = corpus_with_assignments(PER_TOPIC_ALPHA, seed=1)
    mode, H = per_topic_posterior(n_dk)
    lda = model(learn_doc_topic_prior="per_topic", local_topics="sample", max_iter=PASSES).fit(X)
    order, tv = matched(lda.components_, topics)
    assert tv.max() < 0.1, tv
    alpha = lda.doc_topic_prior_
    assert alpha.shape == (5,)
    n_kept = lda.n_batch_iter_ - lda.burn_in_
    np.testing.assert_allclose(alpha, lda.doc_topic_prior_samples_[lda.burn_in_:].mean(axis=0),
                               rtol=1e-12)
    h = STEP_SCALE / np.linalg.eigvalsh(H).max()
    H_inv = np.linalg.inv(H)
    sd = np.sqrt(np.diag(H_inv))
    standard_error = np.sqrt(2 * np.diag(H_inv @ H_inv) / (h * n_kept))
    # log of the mean of alpha against the mode of log alpha: they differ by ~sd^2 / 2 = 0.002
    error = np.log(alpha[order]) - mode
    assert np.all(np.abs(error) < Z * np.hypot(sd, standard_error)), (error, sd, standard_error)
    theta = lda.transform(X[:10])
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)


def test_off_by_default(corpus):
    lda = SCIRLDA(5, max_iter=1, random_state=0).fit(corpus)
    assert lda.doc_topic_prior_ == 0.1 and lda.doc_topic_prior_samples_ is None


def test_reproducible_any_n_jobs_and_picklable(corpus):
    X = corpus[:200]
    kwargs = dict(max_iter=3, batch_size=50)
    one = model(**kwargs).fit(X)
    two = model(**kwargs, n_jobs=2).fit(X)
    np.testing.assert_array_equal(one.doc_topic_prior_samples_, two.doc_topic_prior_samples_)
    np.testing.assert_array_equal(one.components_, two.components_)
    other_seed = model(**kwargs, random_state=1).fit(X)
    assert not np.array_equal(one.doc_topic_prior_samples_, other_seed.doc_topic_prior_samples_)

    # partial_fit: a pickled copy continues the chain identically
    online = model(total_samples=200, burn_in=0)
    for start in (0, 50):
        online.partial_fit(X[start:start + 50])
    copy = pickle.loads(pickle.dumps(online))
    for lda in (online, copy):
        lda.partial_fit(X[100:150])
    np.testing.assert_array_equal(online.doc_topic_prior_samples_, copy.doc_topic_prior_samples_)
    np.testing.assert_array_equal(online.components_, copy.components_)
    assert online.doc_topic_prior_samples_.shape == (3, 5)


def test_stream_fit_equals_partial_fit_over_its_file_order_minibatches(corpus):
    # A stream without a shuffle buffer is read in file order, the same every pass, and its
    # documents are numbered by their position: exactly what partial_fit assumes of a sequence
    # of minibatches (it numbers documents by their running position modulo total_samples). So
    # the alpha chains agree bit for bit.
    X = corpus[:100]
    bow = [list(zip(row.indices.tolist(), row.data.tolist())) for row in X]

    class Stream:
        def __iter__(self):
            return iter(bow)

    kwargs = dict(batch_size=50, total_samples=100, burn_in=2)
    lda = model(max_iter=2, shuffle_buffer=0, **kwargs).fit(
        Stream(), id2word=dict.fromkeys(range(X.shape[1])))
    online = model(**kwargs)
    for _ in range(2):
        for start in (0, 50):
            online.partial_fit(X[start:start + 50])
    assert lda.doc_topic_prior_samples_.shape == (4, 5)
    np.testing.assert_array_equal(lda.doc_topic_prior_samples_, online.doc_topic_prior_samples_)
    assert lda.doc_topic_prior_ == online.doc_topic_prior_
    np.testing.assert_array_equal(lda.components_, online.components_)


def test_failed_partial_fit_leaves_the_alpha_chain_as_it_was(corpus, monkeypatch):
    online = model(total_samples=200)
    online.partial_fit(corpus[:50])
    before = pickle.dumps(online)

    def broken(self, *args, **kwargs):
        raise FloatingPointError("diverged")

    monkeypatch.setattr(DocTopicPriorSampler, "step", broken)
    with pytest.raises(FloatingPointError):
        online.partial_fit(corpus[50:100])
    assert pickle.dumps(online) == before


@pytest.mark.parametrize("params, message", [
    (dict(learn_doc_topic_prior="yes"), "learn_doc_topic_prior"),
    (dict(learn_doc_topic_prior=2), "learn_doc_topic_prior"),
    (dict(learn_doc_topic_prior=None), "learn_doc_topic_prior"),
    (dict(learn_doc_topic_prior=[True]), "learn_doc_topic_prior"),
    (dict(doc_topic_prior_prior=(1.0,)), "doc_topic_prior_prior"),
    (dict(doc_topic_prior_prior="ab"), "doc_topic_prior_prior"),
    (dict(doc_topic_prior_prior=1.0), "doc_topic_prior_prior"),
    (dict(doc_topic_prior_prior=(0.0, 1.0)), "doc_topic_prior_prior.*shape"),
    (dict(doc_topic_prior_prior=(1.0, -1.0)), "doc_topic_prior_prior.*rate"),
    (dict(doc_topic_prior_prior=(np.nan, 1.0)), "doc_topic_prior_prior"),
])
def test_bad_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        LDA(2, max_iter=1, **params).fit(np.ones((4, 3), dtype=int))
