"""SCIR-LDA's chain against the exact LDA posterior of a tiny corpus.

Corpus: W = 5 words, K = 2 topics, 6 documents, N = 16 tokens, alpha = beta = 0.5. The
collapsed posterior p(z | words) over all K^N = 65,536 topic assignments is enumerated
(Dirichlet-multinomial integrals of the documents' proportions and of the topics), and with it
the exact posterior mean of the label-invariant

    S[w, v] = sum_k phi_kw phi_kv

(K times the probability that two words drawn from a topic chosen uniformly are w and v: how
much w and v share topics; a permutation of the topics leaves it unchanged),

from phi_k | z ~ Dirichlet(beta + n_k(z)): E[phi_w phi_v] = (a_w a_v + [w = v] a_w) / (A (A + 1)).

The chain: ``SCIRLDA`` driven by ``partial_fit`` on the whole corpus each step (total_samples
= D, so the counts are not rescaled: no minibatch noise), ``local_topics="sample"`` (the local
step conditions on the current topic sample: the exact scheme), a constant step (step_decay
0), and a local step that hands the topic step ONE draw of the assignments: ``n_gibbs=10,
gibbs_burn_in=9`` (a sequential start and 9 sweeps discarded, then one sweep kept), not an
average over sweeps, and its plain counts (``rao_blackwell=False``: the alpha part's expected
topics are not a draw of the assignments). The samples are the normalised ``topic_state_`` after each step.

Why that chain should be exact: SCIR simulates the CIR diffusion exactly (no discretisation
error), so given the assignments a step leaves theta_kw ~ Gamma(beta + n_kw) invariant at any
step size, hence phi ~ Dirichlet(beta + n(z)); the local step draws z given phi (up to its 9
burn-in sweeps from a sequential start, for documents of 2-3 tokens). One caveat: the scale
sum_w theta_kw, which the local step ignores, carries memory of past assignments and could in
principle couple to phi at a finite step (it cannot as the step grows, where the chain is a
blocked Gibbs sampler); none is measurable here: steps 0.1 to 10 agree within Monte Carlo
error (below). So the allowance for step-size bias is zero, and the tolerance is Monte Carlo
error only: Z = 5 standard errors from batch means (50 batches of
~288 steps; 10 batches give the same standard errors within 10%, so the batches are far
longer than the chain's autocorrelation). Measured, largest |z| over the 15 entries: at the
test's 16,000 steps, 2.1 (step 1) and 2.3 (step 0.25); at 20,000 steps, step 0.1: 2.5,
0.25: 2.6-3.0 (3 seeds), 1: 2.0, 4: 1.5-2.4, 10: 2.4. What the comparison detects (step 1,
16,000 steps, largest |z|): topic_word_prior 5x too large 77, 5x too small 36;
doc_topic_prior 5x too large 23; a local step of n_gibbs=6, gibbs_burn_in=2 (4 sweeps averaged
into the counts) 6.2; local_topics="mean" 9.5; minibatches of 3 of the 6 documents (counts x 2)
12.7; and at 20,000 steps one sweep from the sequential start (n_gibbs=1) 5.5. Run time
~6 s a chain.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln

from simplexsg import SCIRLDA
from simplexsg.simplex import to_simplex

from helpers.stats import Z, batch_means, batch_means_se

K, W, ALPHA, BETA = 2, 5, 0.5, 0.5
#: Each document's tokens as word ids: two themes (words 0-1 and 2-4) and two bridging documents.
DOCS = [[0, 0, 1], [0, 1, 1], [2, 2, 3], [2, 3, 4], [0, 3], [1, 4]]
PAIRS = np.triu_indices(W)
N_BATCHES = 50


def count_matrix():
    X = np.zeros((len(DOCS), W), dtype=np.int64)
    for d, doc in enumerate(DOCS):
        np.add.at(X[d], doc, 1)
    return sp.csr_array(X)


def exact_pair_moments(alpha, beta):
    """E[sum_k phi_kw phi_kv | words] (W, W) by enumerating every assignment of the tokens."""
    doc = np.concatenate([[d] * len(tokens) for d, tokens in enumerate(DOCS)])
    word = np.concatenate(DOCS)
    n_tokens = len(word)
    z = (np.arange(K ** n_tokens)[:, None] >> np.arange(n_tokens)) & 1     # K = 2: bits
    in_topic = np.stack([1 - z, z], axis=1)                                  # (S, K, N)
    n_dk = in_topic @ np.eye(len(DOCS))[doc]                                 # (S, K, D)
    n_kw = in_topic @ np.eye(W)[word]                                        # (S, K, W)
    log_p = (gammaln(K * alpha) - gammaln(K * alpha + n_dk.sum(axis=1))).sum(axis=-1)
    log_p += (gammaln(alpha + n_dk) - gammaln(alpha)).sum(axis=(1, 2))
    log_p += (gammaln(W * beta) - gammaln(W * beta + n_kw.sum(axis=2))).sum(axis=-1)
    log_p += (gammaln(beta + n_kw) - gammaln(beta)).sum(axis=(1, 2))
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    a = beta + n_kw
    A = a.sum(axis=2)[..., None, None]
    second = (a[..., :, None] * a[..., None, :] + a[..., :, None] * np.eye(W)) / (A * (A + 1))
    return np.einsum("s,skwv->wv", p, second)


def chain_pair_moments(n_steps, step_size, topic_word_prior=BETA, seed=0):
    """Batch means of S over the steps after the first tenth: (mean, standard error), each
    over the upper triangle of S (15 entries)."""
    X = count_matrix()
    lda = SCIRLDA(K, doc_topic_prior=ALPHA, topic_word_prior=topic_word_prior,
                  total_samples=X.shape[0], local_topics="sample", n_gibbs=10, gibbs_burn_in=9,
                  rao_blackwell=False, step_size=step_size, step_decay=0.0, burn_in=0, random_state=seed)
    samples = np.empty((n_steps, len(PAIRS[0])))
    for t in range(n_steps):
        lda.partial_fit(X)
        phi = to_simplex(lda.topic_state_)
        samples[t] = (phi.T @ phi)[PAIRS]
    kept = samples[n_steps // 10:]
    return batch_means(kept, N_BATCHES).mean(axis=0), batch_means_se(kept, N_BATCHES)


@pytest.fixture(scope="module")
def exact():
    S = exact_pair_moments(ALPHA, BETA)
    # sum_{w,v} S = sum_k (sum_w phi_kw)^2 = K; symmetric; a different prior moves it
    np.testing.assert_allclose(S.sum(), K, rtol=1e-12)
    np.testing.assert_allclose(S, S.T, rtol=0, atol=1e-15)
    assert np.abs(exact_pair_moments(ALPHA, 5 * BETA) - S).max() > 0.05
    return S[PAIRS]


def test_the_corpus_is_what_the_docstring_says():
    X = count_matrix()
    assert X.shape == (6, W) and X.sum() == 16 and K ** X.sum() == 65_536


@pytest.mark.slow
@pytest.mark.parametrize("step_size", [0.25, 1.0])
def test_full_batch_exact_scheme_matches_the_enumerated_posterior(exact, step_size):
    mean, standard_error = chain_pair_moments(16_000, step_size)
    z = (mean - exact) / standard_error
    assert np.all(np.abs(z) < Z), np.round(z, 1)


@pytest.mark.slow
def test_the_comparison_rejects_a_topic_word_prior_5x_off(exact):
    # The same comparison, on chains of a quarter of the length, with the chain's beta 5x too
    # large and 5x too small: the largest |z| at 20,000 steps was 95 and 49, so ~47 and ~25
    # here. A comparison that accepted these would not test the posterior.
    for wrong in (5 * BETA, BETA / 5):
        mean, standard_error = chain_pair_moments(4_000, 1.0, topic_word_prior=wrong)
        z = (mean - exact) / standard_error
        assert np.abs(z).max() > 2 * Z, (wrong, np.round(z, 1))
