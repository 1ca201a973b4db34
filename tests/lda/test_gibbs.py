"""Tests of the LDA local Gibbs step: the kernel (simplexsg._ext._lda_gibbs) and its glue
(simplexsg.lda.gibbs).

Statistical tests use fixed seeds and tolerances from the Monte Carlo error: a mean is checked
to within Z = 5 standard errors estimated across independent replicate documents (false failure
about 6e-7 per coordinate for a normal mean, about 3e-6 for a t mean with 99 degrees of freedom),
a distribution by a chi-square test with p > 1e-4. Each also checks that the same data reject a
plausible wrong sampler, so the test has power.
"""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.special import gammaln

from simplexsg._ext._bitgen import bitgen_addresses
from simplexsg._ext._lda_gibbs import REJECTION_ALWAYS, gibbs_sweeps
from simplexsg._ext._sparse import csr_token_arrays, transpose_counts
from simplexsg._random import document_streams
from simplexsg.lda.gibbs import csr_to_tokens, fold_in, gibbs_topic_counts, sweep_tokens

from helpers.stats import Z

P_MIN = 1e-4     # chi-square acceptance threshold

# The toy document: K = 3 topics, 4 tokens over 3 distinct words (word 1 twice), asymmetric alpha.
ALPHA = np.array([0.2, 0.7, 1.5])
WORDS = np.array([0, 1, 1, 2])
# Topic rows over the document's 3 words and 2 vocabulary words that never occur.
BASE_TOPICS = np.array([[0.5, 0.1, 0.1, 0.2, 0.1],
                        [0.1, 0.4, 0.2, 0.1, 0.2],
                        [0.1, 0.2, 0.5, 0.1, 0.1]])
PHI = BASE_TOPICS[:, :3]
K = len(ALPHA)
#: The kernel's cut-offs of a word's top topics (``_lda_gibbs._top_topics``), for the mirror.
TOP_CUTS = (1 / 32, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 15 / 16)
STATES = np.array(list(itertools.product(range(K), repeat=len(WORDS))))   # all K^n assignments
ONE_HOT = STATES[:, :, None] == np.arange(K)                               # (K^n, n, K)
N_DK = ONE_HOT.sum(axis=1)                                                  # (K^n, K)


def enumerated_law(phi, alpha):
    """p(z) ∝ prod_i phi[z_i, w_i] * prod_k Gamma(alpha_k + n_dk), over every z in STATES."""
    log_p = np.log(phi[STATES, WORDS]).sum(axis=1) + gammaln(alpha + N_DK).sum(axis=1)
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def sweep_stationary_law(phi, alpha, remove_self):
    """Stationary law of one systematic sweep, each token drawn ∝ (alpha + n_dk - [self]) * phi.

    With ``remove_self=False`` this is the classic bug (the token's own count left in n_dk).
    """
    sweep = sweep_matrix(phi, alpha, remove_self)
    p = np.full(len(STATES), 1.0 / len(STATES))
    for _ in range(500):
        p = p @ sweep
    return p


def sweep_matrix(phi, alpha, remove_self=True):
    """Transition matrix (K^n, K^n) over STATES of one systematic sweep."""
    index = {tuple(s): i for i, s in enumerate(STATES)}
    sweep = np.eye(len(STATES))
    for i, w in enumerate(WORDS):
        step = np.zeros_like(sweep)
        for a, state in enumerate(STATES):
            q = (alpha + N_DK[a] - remove_self * (np.arange(K) == state[i])) * phi[:, w]
            for k in range(K):
                target = state.copy()
                target[i] = k
                step[a, index[tuple(target)]] += q[k] / q.sum()
        sweep = sweep @ step
    return sweep


def moments(p):
    """E[n_dk] (K,), E[n_wk] (3 words, K) and each token's topic marginal (n, K) under p."""
    token_marginals = np.einsum("s,sik->ik", p, ONE_HOT)
    e_nwk = np.array([token_marginals[WORDS == v].sum(axis=0) for v in range(3)])
    return p @ N_DK, e_nwk, token_marginals


EXACT = moments(enumerated_law(PHI, ALPHA))
WRONG = moments(sweep_stationary_law(PHI, ALPHA, remove_self=False))


def replicated_corpus(n_docs, n_groups):
    """``n_docs`` copies of the toy document. Copy r uses its group's own copy of the 3 words
    (group g = r % n_groups, columns 3g..3g+2), so the batch's n_wk gives one estimate per group;
    each word's column is divided by n_groups (a factor common to all topics: the law is
    unchanged) and the 2 unused words keep their mass, so the topic rows still sum to 1."""
    topics = np.zeros((K, 3 * n_groups + 2))
    for g in range(n_groups):
        topics[:, 3 * g:3 * g + 3] = PHI / n_groups
    topics[:, -2:] = BASE_TOPICS[:, 3:]
    group = np.arange(n_docs) % n_groups
    cols = (3 * group[:, None] + np.arange(3)).ravel()
    X = sp.csr_array((np.tile([1, 2, 1], n_docs), (np.repeat(np.arange(n_docs), 3), cols)),
                     shape=(n_docs, topics.shape[1]))
    return X, topics


def pcg64_streams(seed, n):
    """Independent numpy PCG64 generators, for tests that mirror the kernel's draws in Python."""
    return [np.random.PCG64(s) for s in np.random.SeedSequence(seed).spawn(n)]


@pytest.fixture(params=[0, 1, 2])
def seed(request):
    return 20240601 + request.param


def test_enumeration_is_the_stationary_law_of_the_sweep():
    """Checks the test's own exact answer: the enumerated law is invariant for the sweep."""
    np.testing.assert_allclose(sweep_stationary_law(PHI, ALPHA, remove_self=True),
                               enumerated_law(PHI, ALPHA), rtol=0, atol=1e-12)


@pytest.mark.parametrize("direct_margin", [None, REJECTION_ALWAYS], ids=["default", "rejection"])
def test_mean_counts_match_enumeration(seed, direct_margin):
    """Averaged n_dk and n_wk of 4000 independent copies vs the exact expectations.

    Standard errors: n_dk from the 4000 copies, n_wk from 100 groups of 40 copies.
    """
    n_docs, n_groups = 4000, 100
    X, topics = replicated_corpus(n_docs, n_groups)
    res = gibbs_topic_counts(X, topics, ALPHA, direct_margin=direct_margin, n_sweeps=40, burn_in=20, seed=seed, iteration=3)

    mean_dk = res.doc_topic.mean(axis=0)
    se_dk = res.doc_topic.std(axis=0, ddof=1) / np.sqrt(n_docs)
    assert np.all(np.abs(mean_dk - EXACT[0]) <= Z * se_dk), (mean_dk, EXACT[0], se_dk)
    assert np.any(np.abs(mean_dk - WRONG[0]) > Z * se_dk)

    np.testing.assert_array_equal(res.word_ids, np.arange(3 * n_groups))
    per_group = res.topic_word.reshape(K, n_groups, 3) / (n_docs / n_groups)   # per document
    mean_wk = per_group.mean(axis=1).T                                          # (3 words, K)
    se_wk = per_group.std(axis=1, ddof=1).T / np.sqrt(n_groups)
    assert np.all(np.abs(mean_wk - EXACT[1]) <= Z * se_wk), (mean_wk, EXACT[1], se_wk)
    assert np.any(np.abs(mean_wk - WRONG[1]) > Z * se_wk)


def test_a_subnormal_column_draws_as_its_normal_multiple(seed):
    """A word's column can be below DBL_MIN in every topic (SGRLD floors its means at DBL_MIN
    before normalising): the kernel scales it by its largest entry without overflowing, so the
    draws equal those of the column times 1e310 (the law ignores a column's scale; the
    subnormals' rounding, ~1e-13, moves no draw of these 74,400)."""
    X, topics = replicated_corpus(600, 10)
    tiny = topics.copy()
    tiny[:, 0::3] *= 1e-310
    tokens = csr_to_tokens(X)
    runs = [sweep_tokens(tokens, t, ALPHA, n_sweeps=30, burn_in=10,
                         streams=document_streams(seed, 0, range(600))).topic_word
            for t in (topics, tiny)]
    np.testing.assert_array_equal(runs[0], runs[1])


def expected_count_moments(phi, alpha, extra_count=0):
    """E[n_wk] (3 words, K) as the counts in expectation estimate it, under the enumerated
    law: token i of word w counts its conditional ``∝ (alpha_k + n_k^{-i}) phi[k, w]`` over the
    topics. ``extra_count=1`` is the plausible bug of leaving the token in its own count."""
    p = enumerated_law(phi, alpha)
    estimate = np.zeros((3, K))
    for s, state in enumerate(STATES):
        for w, k in zip(WORDS, state):
            others = N_DK[s].astype(float)
            others[k] += extra_count - 1
            conditional = (alpha + others) * phi[:, w]
            estimate[w] += p[s] * conditional / conditional.sum()
    return estimate


def test_expected_counts_have_the_expectation_of_the_counts():
    """Checks the next test's exact answer: the conditionals' expectation is E[n_wk]."""
    np.testing.assert_allclose(expected_count_moments(PHI, ALPHA), EXACT[1], rtol=0, atol=1e-12)
    assert np.abs(expected_count_moments(PHI, ALPHA, extra_count=1) - EXACT[1]).max() > 0.04


def expected_word_topic(res, topics):
    """(K, words) word-topic estimate of ``sweep_tokens(rao_blackwell=True)``: the count part
    plus each word's alpha part spread by ``alpha_k phi[k, w]``."""
    columns = topics[:, res.word_ids]
    return (res.word_topic_sums.T.toarray()
            + ALPHA[:, None] * columns / (ALPHA @ columns) * res.alpha_counts)


@pytest.mark.parametrize("direct_margin", [None, REJECTION_ALWAYS], ids=["default", "rejection"])
def test_expected_counts_are_unbiased_and_less_noisy(seed, direct_margin):
    """``rao_blackwell=True``: the count part plus each word's alpha part spread by ``alpha *
    phi[:, w]`` estimates E[n_wk] without bias (100 groups of 40 copies, as above), rejects
    the conditional that leaves the token in its own count, and varies less across the
    groups than the plain counts of the same draws (summed variance ratio 0.21-0.25 over the
    six runs; each cell's variance has 99 degrees of freedom, so 0.45 leaves room). The
    draws are the same: so are the last sweep's counts."""
    n_docs, n_groups = 4000, 100
    X, topics = replicated_corpus(n_docs, n_groups)
    tokens = csr_to_tokens(X)
    variances, last = {}, {}
    for expected in (False, True):
        res = sweep_tokens(tokens, topics, ALPHA, n_sweeps=40, burn_in=20,
                           streams=document_streams(seed, 3, range(n_docs)),
                           direct_margin=direct_margin, rao_blackwell=expected,
                           last_sweep=True)
        last[expected] = res.doc_topic_last
        if expected:
            estimate = expected_word_topic(res, topics)
        else:
            estimate = res.word_topic_sums.T.toarray()
            assert res.alpha_counts is None and res.word_topic_sums.dtype == np.int64
        per_group = estimate.reshape(K, n_groups, 3) / res.n_kept / (n_docs / n_groups)
        mean_wk = per_group.mean(axis=1).T
        se_wk = per_group.std(axis=1, ddof=1).T / np.sqrt(n_groups)
        assert np.all(np.abs(mean_wk - EXACT[1]) <= Z * se_wk), (expected, mean_wk, se_wk)
        variances[expected] = (se_wk ** 2).sum()
    wrong = expected_count_moments(PHI, ALPHA, extra_count=1)
    assert np.any(np.abs(mean_wk - wrong) > Z * se_wk)
    assert variances[True] < 0.45 * variances[False], variances
    np.testing.assert_array_equal(last[True], last[False])


@pytest.mark.parametrize("direct_margin", [None, REJECTION_ALWAYS], ids=["default", "rejection"])
def test_expected_counts_of_a_first_draw_are_its_conditional(seed, direct_margin):
    """With one sweep from a fixed state, a document's first token (word 0, once in the
    document) is drawn given the others' starting topics, so what it counts is exactly its
    conditional ``∝ (alpha_k + n_k) phi[k, 0]`` (n_k: the other tokens' topics, 20 each on
    topics 1 and 2), whatever the draws: 200 copies add it up, each rounded to a multiple of
    2^-24 (``EXPECTATION_UNIT``); the conditional that leaves the token in its own count (on
    topic 0) is another vector."""
    n_docs = 200
    alpha = np.array([0.05, 0.05, 3.0])
    n_other = np.array([0, 20, 20])
    topics = np.array([[1.0, 0.03, 0.01], [0.01, 1.0, 0.01], [0.01, 0.01, 1.0]]).T
    topics = topics / topics.sum(axis=1, keepdims=True)
    X = sp.csr_array(np.tile(np.maximum(n_other, 1), (n_docs, 1)))
    start = np.repeat(np.arange(K), np.maximum(n_other, 1)).astype(np.int32)
    res = sweep_tokens(csr_to_tokens(X), topics, alpha, n_sweeps=1, burn_in=0,
                       streams=document_streams(seed, 0, range(n_docs)),
                       assignments=np.tile(start, n_docs), direct_margin=direct_margin,
                       rao_blackwell=True)
    count_part = res.word_topic_sums.toarray()[0] / n_docs
    conditional = (alpha + n_other) * topics[:, 0]
    total = conditional.sum()
    rounding = 0.5 / 2 ** 24
    np.testing.assert_allclose(count_part, n_other * topics[:, 0] / total, rtol=0,
                               atol=rounding)
    np.testing.assert_allclose(res.alpha_counts[0] / n_docs, alpha @ topics[:, 0] / total,
                               rtol=0, atol=rounding)
    own = conditional + np.array([1.0, 0.0, 0.0]) * topics[:, 0]
    assert np.abs(count_part - n_other * topics[:, 0] / own.sum()).max() > 1e-3


@pytest.mark.parametrize("direct_margin", [None, REJECTION_ALWAYS], ids=["default", "rejection"])
def test_single_word_topic_distribution(seed, direct_margin):
    """With one kept sweep each copy contributes one draw of word 0's topic (it occurs once):
    the histogram over 4000 copies is chi-square tested against the exact marginal."""
    n_docs = 4000
    X, topics = replicated_corpus(n_docs, n_groups=10)
    res = gibbs_topic_counts(X, topics, ALPHA, direct_margin=direct_margin, n_sweeps=21, burn_in=20, seed=seed, iteration=0)
    observed = res.topic_word.reshape(K, 10, 3)[:, :, 0].sum(axis=1)
    assert observed.sum() == n_docs
    assert stats.chisquare(observed, n_docs * EXACT[2][0]).pvalue > P_MIN
    assert stats.chisquare(observed, n_docs * WRONG[2][0]).pvalue < P_MIN


@pytest.mark.parametrize("direct_margin", [None, REJECTION_ALWAYS], ids=["default", "rejection"])
def test_warm_start_is_one_exact_sweep_from_the_given_state(seed, direct_margin):
    """A warm start from a fixed state followed by one sweep: the final assignments of 4000
    copies are chi-square tested against the exact one-sweep law from that state (a row of
    the sweep's transition matrix). The cold start (sequential start, then the sweep) gives
    another law, and the test rejects it, so a kernel that ignored the start would fail."""
    n_docs = 4000
    X, topics = replicated_corpus(n_docs, n_groups=1)
    start = np.array([2, 0, 0, 2])                       # an unlikely state: far from the law
    start_index = int(np.flatnonzero((STATES == start).all(axis=1))[0])
    exact = sweep_matrix(PHI, ALPHA)[start_index]
    # tokens of a document in csr_to_tokens order: word 0, word 1 twice, word 2 = WORDS
    res = gibbs_topic_counts(X, topics, ALPHA, direct_margin=direct_margin, n_sweeps=1, burn_in=0, seed=seed, iteration=0,
                             assignments=np.tile(start, n_docs))
    final = res.assignments.reshape(n_docs, len(WORDS))
    observed = np.bincount(final @ (K ** np.arange(len(WORDS))[::-1]), minlength=len(STATES))
    support = exact > 0
    assert observed[~support].sum() == 0
    assert stats.chisquare(observed[support], n_docs * exact[support]).pvalue > P_MIN
    cold = gibbs_topic_counts(X, topics, ALPHA, direct_margin=direct_margin, n_sweeps=1, burn_in=0, seed=seed, iteration=0,
                              assignments=np.full(n_docs * len(WORDS), -1))
    cold = cold.assignments.reshape(n_docs, len(WORDS)) @ (K ** np.arange(len(WORDS))[::-1])
    cold = np.bincount(cold, minlength=len(STATES))
    assert stats.chisquare(cold[support], n_docs * exact[support]).pvalue < P_MIN


@pytest.mark.parametrize("direct_margin", [None, REJECTION_ALWAYS], ids=["default", "rejection"])
def test_warm_started_chain_has_the_cold_chain_stationary_law(seed, direct_margin):
    """From the same unlikely state in every copy, 20 discarded and 20 kept sweeps: the mean
    n_dk and n_wk match the exact expectations (as for the cold start), and the counts of the
    returned assignments are those of the last sweep."""
    n_docs, n_groups = 4000, 100
    X, topics = replicated_corpus(n_docs, n_groups)
    res = gibbs_topic_counts(X, topics, ALPHA, direct_margin=direct_margin, n_sweeps=40, burn_in=20, seed=seed, iteration=3,
                             assignments=np.tile([2, 0, 0, 2], n_docs), last_sweep=True)
    mean_dk = res.doc_topic.mean(axis=0)
    se_dk = res.doc_topic.std(axis=0, ddof=1) / np.sqrt(n_docs)
    assert np.all(np.abs(mean_dk - EXACT[0]) <= Z * se_dk), (mean_dk, EXACT[0], se_dk)
    assert np.any(np.abs(mean_dk - WRONG[0]) > Z * se_dk)
    per_group = res.topic_word.reshape(K, n_groups, 3) / (n_docs / n_groups)
    mean_wk, se_wk = per_group.mean(axis=1).T, per_group.std(axis=1, ddof=1).T / np.sqrt(n_groups)
    assert np.all(np.abs(mean_wk - EXACT[1]) <= Z * se_wk), (mean_wk, EXACT[1], se_wk)
    final = res.assignments.reshape(n_docs, len(WORDS))
    np.testing.assert_array_equal(res.doc_topic_last, (final[:, :, None] == np.arange(K)).sum(1))


def test_warm_start_errors_and_mixed_batches():
    X, topics = replicated_corpus(3, n_groups=1)
    kwargs = dict(n_sweeps=2, burn_in=0, seed=0, iteration=0)
    with pytest.raises(ValueError, match="one entry per token"):
        gibbs_topic_counts(X, topics, ALPHA, assignments=np.zeros(5, dtype=np.int32), **kwargs)
    for bad in ([0, 1, 3, 0], [0, -1, 1, 1], [-2, 0, 0, 0]):
        with pytest.raises(ValueError, match="assignments of document 1"):
            gibbs_topic_counts(X, topics, ALPHA, assignments=[0, 0, 0, 0, *bad, -1, 0, 0, 0],
                               **kwargs)
    # a cold document (first entry -1) ignores the rest of its entries (the law of a warm
    # start is tested above); the input array is not modified
    z = np.array([-1, 0, 0, 0, 1, 1, 1, 1, -1, 5, 5, 5], dtype=np.int32)
    res = gibbs_topic_counts(X, topics, ALPHA, assignments=z, **kwargs)
    assert z[0] == -1 and res.assignments.min() >= 0 and res.assignments.max() < K
    cold = gibbs_topic_counts(X, topics, ALPHA, assignments=np.full(12, -1), **kwargs)
    plain = gibbs_topic_counts(X, topics, ALPHA, **kwargs)
    np.testing.assert_array_equal(cold.doc_topic, plain.doc_topic)   # -1 everywhere = no start


def random_corpus(rng, n_docs=60, n_words=40, n_empty=5):
    """Counts with varied document lengths, a few empty documents and unused vocabulary."""
    lengths = rng.integers(1, 120, size=n_docs)
    lengths[rng.choice(n_docs, n_empty, replace=False)] = 0
    dense = np.stack([rng.multinomial(n, rng.dirichlet(np.full(n_words, 0.3))) for n in lengths])
    dense[:, :3] = 0
    return sp.csr_array(dense)


def test_invariants(seed):
    rng = np.random.default_rng(seed)
    X = random_corpus(rng)
    topics = rng.dirichlet(np.full(X.shape[1], 0.5), size=6)
    n_sweeps, burn_in = 12, 4
    res = gibbs_topic_counts(X, topics, rng.uniform(0.05, 1.0, 6), n_sweeps=n_sweeps,
                             burn_in=burn_in, seed=seed, iteration=1, n_jobs=2)
    lengths = X.sum(axis=1)
    word_counts = X.sum(axis=0)
    np.testing.assert_array_equal(res.word_ids, np.flatnonzero(word_counts))
    assert res.doc_topic.shape == (X.shape[0], 6)
    assert res.topic_word.shape == (6, len(res.word_ids))
    assert res.topic_word.flags.c_contiguous
    sums = res.word_topic_sums      # a word's topics: positive counts, increasing
    assert np.all(sums.data > 0)
    for w in range(sums.shape[0]):
        assert np.all(np.diff(sums.indices[sums.indptr[w]:sums.indptr[w + 1]]) > 0)
    # sums over kept sweeps are integers; their averages add up to the counts
    for mean in (res.doc_topic, res.topic_word):
        assert np.all(mean >= 0)
        np.testing.assert_array_equal(mean * (n_sweeps - burn_in),
                                      np.round(mean * (n_sweeps - burn_in)))
    np.testing.assert_allclose(res.doc_topic.sum(axis=1), lengths, rtol=1e-12)
    np.testing.assert_allclose(res.topic_word.sum(axis=0), word_counts[res.word_ids], rtol=1e-12)
    np.testing.assert_allclose(res.topic_word.sum(axis=1), res.doc_topic.sum(axis=0), rtol=1e-12)
    assert np.all(res.doc_topic[lengths == 0] == 0)
    only_dk = gibbs_topic_counts(X, topics, 0.3, n_sweeps=3, burn_in=0, seed=seed, iteration=0,
                                 word_topic=False)
    assert only_dk.topic_word is None
    np.testing.assert_allclose(only_dk.doc_topic.sum(axis=1), lengths, rtol=1e-12)


def test_fold_in_is_the_posterior_mean_of_the_averaged_counts(seed):
    rng = np.random.default_rng(seed)
    X = random_corpus(rng, n_docs=20)
    topics = rng.dirichlet(np.full(X.shape[1], 0.5), size=4)
    alpha = np.array([0.1, 0.2, 0.3, 0.4])
    theta = fold_in(topics, alpha, X, n_sweeps=6, burn_in=3, seed=seed)
    counts = gibbs_topic_counts(X, topics, alpha, n_sweeps=6, burn_in=3, seed=seed, iteration=0,
                                word_topic=False, doc_ids="content")
    expected = (counts.doc_topic + alpha) / (X.sum(axis=1) + alpha.sum())[:, None]
    np.testing.assert_allclose(theta, expected, rtol=1e-12)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, rtol=1e-12)
    empty = X.sum(axis=1) == 0
    assert empty.any()
    np.testing.assert_allclose(theta[empty], np.broadcast_to(alpha / alpha.sum(), (empty.sum(), 4)))


def test_fold_in_depends_on_a_documents_content_not_its_row(seed):
    """#12 item 8: the same document repeated, or moved, gets the same proportions; different
    documents still get different streams (two copies of a document differ from two documents
    with equal counts only through their content)."""
    rng = np.random.default_rng(seed)
    X = sp.csr_array(random_corpus(rng, n_docs=12))
    topics = rng.dirichlet(np.full(X.shape[1], 0.5), size=4)
    kwargs = dict(n_sweeps=4, burn_in=1, seed=seed)
    theta = fold_in(topics, 0.3, X, **kwargs)
    perm = rng.permutation(12)
    np.testing.assert_array_equal(fold_in(topics, 0.3, X[perm], **kwargs), theta[perm])
    long_doc = int(np.argmax(X.sum(axis=1)))
    repeated = sp.vstack([X[[long_doc]]] * 3).tocsr()
    np.testing.assert_array_equal(fold_in(topics, 0.3, repeated, **kwargs),
                                  np.repeat(theta[[long_doc]], 3, axis=0))
    # by position, the repeats would draw from different streams: the check above can fail
    by_row = gibbs_topic_counts(repeated, topics, 0.3, iteration=0, word_topic=False, **kwargs)
    assert not np.array_equal(by_row.doc_topic[0], by_row.doc_topic[1])
    with pytest.raises(ValueError, match="doc_ids must be"):
        gibbs_topic_counts(X, topics, 0.3, iteration=0, doc_ids=[0, 1], **kwargs)


def test_all_empty_and_no_documents():
    topics = np.full((4, 7), 1 / 7)
    for X in (sp.csr_array((3, 7), dtype=np.int64), sp.csr_array((0, 7), dtype=np.int64)):
        res = gibbs_topic_counts(X, topics, 0.1, n_sweeps=2, burn_in=1, seed=0, iteration=0)
        assert res.doc_topic.shape == (X.shape[0], 4) and not res.doc_topic.any()
        assert res.topic_word.shape == (4, 0) and res.word_ids.shape == (0,)


def test_reproducible_and_independent_of_n_jobs(seed):
    rng = np.random.default_rng(seed)
    X = random_corpus(rng, n_docs=80)
    topics = rng.dirichlet(np.full(X.shape[1], 0.5), size=5)
    kwargs = dict(n_sweeps=6, burn_in=2, seed=seed, iteration=7)
    one = gibbs_topic_counts(X, topics, 0.2, n_jobs=1, **kwargs)
    for n_jobs in (1, 2, -1, None):
        other = gibbs_topic_counts(X, topics, 0.2, n_jobs=n_jobs, **kwargs)
        np.testing.assert_array_equal(one.doc_topic, other.doc_topic)
        np.testing.assert_array_equal(one.topic_word, other.topic_word)
    # a document's draws depend on (seed, iteration, its stream index) only
    tail = gibbs_topic_counts(X[30:], topics, 0.2, n_jobs=2, doc_ids=np.arange(30, 80), **kwargs)
    np.testing.assert_array_equal(one.doc_topic[30:], tail.doc_topic)
    shifted = gibbs_topic_counts(X[30:], topics, 0.2, **kwargs)
    assert not np.array_equal(one.doc_topic[30:], shifted.doc_topic)
    for change in (dict(iteration=8), dict(seed=seed + 1),
                   dict(seed=np.random.SeedSequence(seed, spawn_key=(1,)))):
        other = gibbs_topic_counts(X, topics, 0.2, n_jobs=1, **{**kwargs, **change})
        assert not np.array_equal(one.doc_topic, other.doc_topic)


def reference_sweeps(doc_ptr, word_ids, vocab, phi, alpha, bit_generators, n_sweeps, burn_in,
                     direct_margin):
    """Pure-Python mirror of ``gibbs_sweeps``: same uniforms, same arithmetic, same order of
    the list of topics in use (swap-remove), so the outputs must be identical. Also counts how
    many draws ended in the exact fallback."""
    n_topics = phi.shape[0]
    tables = []                                 # per word: f, cumulative alpha_k f_k, top, eps
    for v in vocab:
        column = [float(phi[k, v]) for k in range(n_topics)]
        fit = [c * (1.0 / max(column)) for c in column]
        cdf, cum = [], 0.0
        for k in range(n_topics):
            cum = cum + float(alpha[k]) * fit[k]
            cdf.append(cum)
        cut = next((c for c in TOP_CUTS if sum(f > c for f in fit) <= 32), np.inf)
        top = sorted((k for k in range(n_topics) if fit[k] > cut), key=lambda k: -fit[k])
        eps = max([fit[k] for k in range(n_topics) if k not in top], default=0.0)
        tables.append((fit, np.array(cdf), top, eps))
    n_dk_sum = np.zeros((len(doc_ptr) - 1, n_topics), dtype=np.int64)
    n_wk_sum = np.zeros((len(vocab), n_topics), dtype=np.int64)
    fallbacks = 0

    def invert(cdf, x):
        return int(np.searchsorted(cdf, x, side="right"))

    for d, bit_generator in enumerate(bit_generators):
        rng = np.random.Generator(bit_generator)      # .random() is the bitgen's next_double
        words = word_ids[doc_ptr[d]:doc_ptr[d + 1]]
        n_dk = np.zeros(n_topics, dtype=np.int64)
        used = []

        def draw(w, z, i, n_other):
            nonlocal fallbacks
            fit, cdf, top, eps = tables[w]
            mass = cdf[-1]
            top_cdf, top_mass, top_tokens = [], 0.0, 0
            for k in top:
                top_tokens += n_dk[k]
                top_mass += float(n_dk[k]) * fit[k]
                top_cdf.append(top_mass)
            rest = eps * float(n_other - top_tokens)
            total = top_mass + mass + rest
            rejection = len(used) > len(top) + direct_margin
            for _ in range(2 + len(used) // 8 if rejection else 0):
                x = rng.random() * total
                if x < top_mass:
                    return top[next(j for j, c in enumerate(top_cdf) if x < c)]
                x -= top_mass
                if x < mass:
                    k = invert(cdf, x)
                    if fit[k] > eps:
                        return k
                elif rest > 0:
                    while True:
                        j = min(int(rng.random() * n_other), n_other - 1)
                        k = z[j + (j >= i)]
                        if not fit[k] > eps:
                            break
                else:
                    continue
                f = fit[k]
                if rng.random() * (alpha[k] * f + n_dk[k] * eps) < (alpha[k] + n_dk[k]) * f:
                    return k
            fallbacks += rejection
            count_total, used_cdf = 0.0, []
            for k in used:
                count_total += float(n_dk[k]) * fit[k]
                used_cdf.append(count_total)
            x = rng.random() * (count_total + mass)
            if x < count_total:
                return used[next(j for j, c in enumerate(used_cdf) if x < c)]
            x -= count_total
            return invert(cdf, x if x < mass else 0.0)

        def add(k):
            if n_dk[k] == 0:
                used.append(k)
            n_dk[k] += 1

        def remove(k):
            n_dk[k] -= 1
            if n_dk[k] == 0:
                last = used.pop()
                if last != k:
                    used[used.index(k)] = last

        z = []
        for i, w in enumerate(words):
            z.append(draw(w, z, i, i))
            add(z[-1])
        for sweep in range(n_sweeps):
            for i, w in enumerate(words):
                remove(z[i])
                z[i] = draw(w, z, i, len(words) - 1)
                add(z[i])
                if sweep >= burn_in:
                    n_wk_sum[w, z[i]] += 1
            if sweep >= burn_in:
                n_dk_sum[d] += n_dk
    return n_dk_sum, n_wk_sum, fallbacks


@pytest.mark.parametrize("n_topics, direct_margin",
                         [(7, REJECTION_ALWAYS), (7, 0), (40, REJECTION_ALWAYS), (40, 4)])
def test_kernel_matches_python_reference(seed, n_topics, direct_margin):
    """The kernel against its pure-Python mirror, bit for bit, on a corpus where both the
    rejection draws and the exact fallback occur (peaked topics: many proposals rejected);
    ``direct_margin`` REJECTION_ALWAYS forces rejection, else tokens switch between the two ways
    as their document's number of topics crosses their word's top topics plus the margin. Word
    3 has one top topic and a bound far above its other topics (proposals from the document's
    other tokens mostly rejected). With 40 topics, word 1 is equally likely under every topic
    (40 ties: no top topic), word 2 has 36 topics above the first cut-off, 1/32 (more than 32:
    its top topics are those past a higher one), and word 4 has 40 within 4% of its largest
    (more than 32 past every cut-off: none)."""
    rng = np.random.default_rng(seed)
    X = random_corpus(rng, n_docs=30, n_words=15, n_empty=2)
    doc_ptr, word_ids, vocab = csr_to_tokens(X)
    phi = rng.dirichlet(np.full(X.shape[1], 0.03), size=n_topics)
    phi[3, vocab[0]] = 0.0                     # a zero weight must never be drawn
    phi[:, vocab[3]] = 1e-6                    # word 3: topic 0's, topic 1 sets the bound
    phi[0, vocab[3]], phi[1, vocab[3]] = 0.5, 0.5 / 40   # on the others: most rejected
    if n_topics == 40:
        phi[:, vocab[1]] = 0.01
        phi[:36, vocab[2]] = rng.uniform(0.1, 0.2, 36)
        phi[:, vocab[4]] = rng.uniform(0.0096, 0.01, 40)     # flat: no top topics
    alpha = rng.uniform(0.01, 2.0, n_topics)
    n_dk_sum = np.empty((len(doc_ptr) - 1, n_topics), dtype=np.int64)
    gens = pcg64_streams(seed, len(doc_ptr) - 1)
    indptr, topic_ids, counts, alpha_counts = gibbs_sweeps(
        doc_ptr, word_ids, vocab, phi, alpha, bitgen_addresses(gens), 5, 2, n_dk_sum, True, 2,
        direct_margin=direct_margin)
    assert alpha_counts is None                             # plain counts: no alpha part
    n_wk_sum = sp.csr_array((counts, topic_ids, indptr), shape=(len(vocab), n_topics)).toarray()
    assert all((np.diff(topic_ids[a:b]) > 0).all() for a, b in zip(indptr[:-1], indptr[1:]))
    ref_dk, ref_wk, fallbacks = reference_sweeps(doc_ptr, word_ids, vocab, phi, alpha,
                                                 pcg64_streams(seed, len(doc_ptr) - 1), 5, 2,
                                                 direct_margin)
    np.testing.assert_array_equal(n_dk_sum, ref_dk)
    np.testing.assert_array_equal(n_wk_sum, ref_wk)
    assert n_wk_sum[0, 3] == 0
    assert 0 < fallbacks < 0.5 * len(word_ids) * (1 + 5)     # both paths ran


@pytest.mark.parametrize("direct_margin", [0, 4])
def test_words_of_short_documents_only_draw_as_the_reference(seed, direct_margin):
    """The kernel builds a word's top topics only when one of its documents is long enough to
    draw by rejection (more than ``direct_margin`` + 1 tokens). Against the mirror, which
    builds every word's: documents of ``direct_margin`` + 1 tokens (never by rejection) and of
    one token more (a draw whose document uses ``direct_margin`` + 1 topics goes by rejection
    if its word has no top topic), each group with words of its own, some words shared with
    long documents; peaked topics, so that words have top topics and documents many topics."""
    rng = np.random.default_rng(seed)
    n_topics, n_words = 40, 24
    groups = [(direct_margin + 1, np.arange(0, 6)), (direct_margin + 2, np.arange(6, 12)),
              (None, np.arange(3, 24, 2))]        # long documents share words 3, 5 of group 0
    rows = []
    for length, words in groups:
        for _ in range(12):
            n = length if length is not None else rng.integers(20, 60)
            rows.append(np.bincount(rng.choice(words, n), minlength=n_words))
    X = sp.csr_array(np.array(rows))
    doc_ptr, word_ids, vocab = csr_to_tokens(X)
    phi = rng.dirichlet(np.full(n_words, 0.05), size=n_topics)
    alpha = rng.uniform(0.5, 2.0, n_topics)     # many topics in use
    n_dk_sum = np.empty((len(doc_ptr) - 1, n_topics), dtype=np.int64)
    gens = pcg64_streams(seed, len(rows))
    indptr, topic_ids, counts, _ = gibbs_sweeps(
        doc_ptr, word_ids, vocab, phi, alpha, bitgen_addresses(gens), 5, 2, n_dk_sum, True, 2,
        direct_margin=direct_margin)
    ref_dk, ref_wk, fallbacks = reference_sweeps(doc_ptr, word_ids, vocab, phi, alpha,
                                                 pcg64_streams(seed, len(rows)), 5, 2,
                                                 direct_margin)
    n_wk_sum = sp.csr_array((counts, topic_ids, indptr), shape=(len(vocab), n_topics)).toarray()
    np.testing.assert_array_equal(n_dk_sum, ref_dk)
    np.testing.assert_array_equal(n_wk_sum, ref_wk)
    assert fallbacks > 0                        # the rejection way ran


def test_float32_topics_are_read_as_their_float64_values(seed):
    """The kernel reads float32 topics in place; the draws are those of the same values in
    float64, bit for bit."""
    rng = np.random.default_rng(seed)
    X = random_corpus(rng, n_docs=20)
    topics = rng.dirichlet(np.full(X.shape[1], 0.3), size=6).astype(np.float32)
    kwargs = dict(n_sweeps=4, burn_in=1, seed=seed, iteration=0)
    single = gibbs_topic_counts(X, topics, 0.2, **kwargs)
    double = gibbs_topic_counts(X, topics.astype(np.float64), 0.2, **kwargs)
    np.testing.assert_array_equal(single.doc_topic, double.doc_topic)
    np.testing.assert_array_equal(single.topic_word, double.topic_word)


def test_csr_to_tokens():
    # unsorted indices, a duplicate entry (adds up), an explicit zero, an empty row
    X = sp.csr_array((np.array([2, 1, 0, 3, 1]), np.array([5, 2, 7, 2, 5]), np.array([0, 3, 3, 5])),
                     shape=(3, 9))
    doc_ptr, word_ids, vocab = csr_to_tokens(X)
    np.testing.assert_array_equal(vocab, [2, 5])
    np.testing.assert_array_equal(doc_ptr, [0, 3, 3, 7])
    assert word_ids.dtype == np.int32 and doc_ptr.dtype == np.int64
    for d in range(3):
        got = np.bincount(vocab[word_ids[doc_ptr[d]:doc_ptr[d + 1]]], minlength=9)
        np.testing.assert_array_equal(got, X.toarray()[d])
    dense_ptr, dense_words, dense_vocab = csr_to_tokens(X.toarray())   # same tokens, sorted
    np.testing.assert_array_equal(dense_ptr, doc_ptr)
    np.testing.assert_array_equal(dense_vocab, vocab)
    np.testing.assert_array_equal(dense_words, [0, 1, 1, 0, 0, 0, 1])
    for n_jobs in (2, 3):
        for got, want in zip(csr_to_tokens(X, n_jobs), (doc_ptr, word_ids, vocab)):
            np.testing.assert_array_equal(got, want)
    # arrays holding entries past indptr[-1]: not part of the matrix, not tokens
    longer = sp.csr_array((np.append(X.data, 4), np.append(X.indices, 8), X.indptr), shape=(3, 9))
    for got, want in zip(csr_to_tokens(longer), (doc_ptr, word_ids, vocab)):
        np.testing.assert_array_equal(got, want)


def test_token_arrays_and_transpose_on_random_matrices(seed):
    rng = np.random.default_rng(seed)
    X = sp.random_array((40, 30), density=0.2, rng=rng, format="csr",
                        data_sampler=lambda size: rng.integers(0, 4, size))
    X.sort_indices()
    doc_ptr, word_ids, vocab = csr_to_tokens(X, n_jobs=2)
    dense = X.toarray()
    np.testing.assert_array_equal(vocab, np.flatnonzero(dense.sum(axis=0)))
    for d in range(X.shape[0]):
        got = np.bincount(vocab[word_ids[doc_ptr[d]:doc_ptr[d + 1]]], minlength=X.shape[1])
        np.testing.assert_array_equal(got, dense[d])
    # the transpose of word-topic counts, rows the words: as scipy's, for any n_jobs
    counts = sp.csr_array(X.astype(np.int64))
    counts.eliminate_zeros()
    want = sp.csr_array(counts.T)
    want.sort_indices()
    for n_jobs in (1, 2, 5):
        ptr, rows, values = transpose_counts(counts.indptr.astype(np.int64),
                                             counts.indices.astype(np.int32), counts.data,
                                             X.shape[1], n_jobs)
        np.testing.assert_array_equal(ptr, want.indptr)
        np.testing.assert_array_equal(rows, want.indices)
        np.testing.assert_array_equal(values, want.data)


@pytest.mark.parametrize("n_jobs", [1, 2, 3, 7])
def test_transpose_of_few_entries_on_more_threads(n_jobs):
    """More threads than entries (the threads' runs of rows then end past the last entry),
    empty rows between, float counts: scipy's transpose."""
    counts = sp.csr_array(np.array([[0.0, 0.0, 0.0], [0.0, 2.5, 0.0], [0.0, 0.0, 0.0],
                                    [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0],
                                    [0.0, 0.0, 0.0]]))
    want = sp.csr_array(counts.T)
    want.sort_indices()
    ptr, rows, values = transpose_counts(counts.indptr.astype(np.int64),
                                         counts.indices.astype(np.int32), counts.data, 3, n_jobs)
    np.testing.assert_array_equal(ptr, want.indptr)
    np.testing.assert_array_equal(rows, want.indices)
    np.testing.assert_array_equal(values, want.data)


def test_token_arrays_and_transpose_errors():
    ptr = np.array([0, 2, 3], dtype=np.int64)
    cols = np.array([0, 4, 1], dtype=np.int32)
    ones = np.ones(3, dtype=np.int64)
    with pytest.raises(ValueError, match="entry 1: column 4"):
        csr_token_arrays(ptr, cols, ones, 4)
    with pytest.raises(ValueError, match="entry 2: column 1 .* count -1"):
        csr_token_arrays(ptr, cols, np.array([1, 1, -1]), 5)
    with pytest.raises(ValueError, match="indptr must run"):
        csr_token_arrays(np.array([0, 2], dtype=np.int64), cols, ones, 5)
    with pytest.raises(ValueError, match="indptr decreases at row 1"):
        csr_token_arrays(np.array([0, 3, 1, 3], dtype=np.int64), cols, ones, 5)
    with pytest.raises(ValueError, match=r"columns\[1\] = 4"):
        transpose_counts(ptr, cols, ones, 4)
    with pytest.raises(ValueError, match="indptr decreases at row 1"):
        transpose_counts(np.array([0, 3, 1, 3], dtype=np.int64), cols, ones, 5)
    ptr, rows, values = transpose_counts(np.zeros(3, dtype=np.int64), cols[:0], ones[:0], 4)
    np.testing.assert_array_equal(ptr, np.zeros(5))
    assert rows.size == values.size == 0


GOOD = dict(n_sweeps=4, burn_in=1, seed=0, iteration=0)


@pytest.mark.parametrize("change, name", [
    (dict(n_sweeps=0), "n_sweeps"),
    (dict(burn_in=-1), "burn_in"),
    (dict(burn_in=4), "burn_in"),
    (dict(iteration=-1), "iteration"),
    (dict(doc_ids=[-2]), "doc_ids"),
    (dict(doc_ids=[0, 1]), "doc_ids"),
    (dict(doc_ids="position"), "doc_ids"),
    (dict(n_jobs=0), "n_jobs"),
    (dict(alpha=np.ones(2)), "alpha"),
    (dict(alpha=0.0), "alpha"),
    (dict(topics=np.full((3, 5), 0.2)), "topics"),          # wrong vocabulary size
    (dict(topics=np.full((3, 6), 0.5)), "topics"),          # rows do not sum to 1
    (dict(topics=np.full(6, 1 / 6)), "topics"),             # not 2-d
    (dict(X=np.array([[1, -1, 0, 0, 0, 0]])), "X"),
    (dict(X=np.array([[1.5, 0, 0, 0, 0, 0]])), "X"),
    (dict(X=np.ones(6)), "X"),
    (dict(X=np.array([[0, 0, 0, 0, 0, 2]])), "word 5"),       # probability 0 under every topic
])
def test_argument_errors(change, name):
    topics = np.array([[0.2, 0.2, 0.2, 0.2, 0.2, 0.0]] * 3)
    args = dict(X=np.array([[1, 2, 0, 0, 1, 0]]), topics=topics, alpha=0.5, **GOOD)
    args.update(change)
    with pytest.raises(ValueError, match=name):
        gibbs_topic_counts(args.pop("X"), args.pop("topics"), args.pop("alpha"), **args)


def test_kernel_argument_errors():
    doc_ptr = np.array([0, 2], dtype=np.int64)
    phi = np.full((2, 3), 1 / 3)
    alpha = np.ones(3)
    gens = pcg64_streams(0, 1)
    out = np.empty((1, 3), dtype=np.int64)
    call = lambda words, **kw: gibbs_sweeps(  # noqa: E731
        doc_ptr, np.asarray(words, dtype=np.int32), np.arange(2), phi.T.copy(), alpha,
        bitgen_addresses(gens),
        kw.get("n_sweeps", 2), kw.get("burn_in", 0), out, False, 1)
    with pytest.raises(ValueError, match="word_ids"):
        call([0, 2])
    with pytest.raises(ValueError, match="doc_ptr"):
        call([0, 1, 1])
    with pytest.raises(ValueError, match="burn_in"):
        call([0, 1], n_sweeps=2, burn_in=2)
    with pytest.raises(TypeError, match="BitGenerator"):
        bitgen_addresses([np.random.default_rng(0)])


def count_law(p):
    """Law of the document's n_dk under p over STATES: (distinct n_dk rows (m, K), probs (m,))."""
    rows, inverse = np.unique(N_DK, axis=0, return_inverse=True)
    return rows, np.bincount(inverse.ravel(), weights=p, minlength=len(rows))


@pytest.mark.parametrize("direct_margin", [None, REJECTION_ALWAYS], ids=["default", "rejection"])
def test_last_sweep_counts_follow_the_exact_conditional(seed, direct_margin):
    """``doc_topic_last`` of 4000 copies of the toy document after 20 sweeps: one draw of n_dk
    each, chi-square tested against the law of n_dk under the enumerated p(z | words) (cells of
    expected count < 5 pooled); the wrong sampler's law is rejected by the same data."""
    n_docs = 4000
    X, topics = replicated_corpus(n_docs, n_groups=10)
    res = gibbs_topic_counts(X, topics, ALPHA, direct_margin=direct_margin, n_sweeps=20, burn_in=10, seed=seed, iteration=2,
                             last_sweep=True)
    last = res.doc_topic_last
    assert last.dtype == np.int64 and last.shape == (n_docs, K)
    np.testing.assert_array_equal(last.sum(axis=1), len(WORDS))
    rows, exact = count_law(enumerated_law(PHI, ALPHA))
    _, wrong = count_law(sweep_stationary_law(PHI, ALPHA, remove_self=False))
    index = {tuple(r): i for i, r in enumerate(rows)}
    observed = np.bincount([index[tuple(r)] for r in last], minlength=len(rows))

    def pvalue(law):
        expected = n_docs * law
        small = expected < 5
        obs = np.append(observed[~small], observed[small].sum())
        exp = np.append(expected[~small], expected[small].sum())
        keep = exp > 0
        return stats.chisquare(obs[keep], exp[keep]).pvalue

    assert pvalue(exact) > P_MIN
    assert pvalue(wrong) < P_MIN


def test_last_sweep_counts_are_the_last_kept_sweep(seed):
    """With one kept sweep the average is the last sweep's counts; asking for the last-sweep
    counts changes no other output, for any n_jobs."""
    rng = np.random.default_rng(seed)
    X = random_corpus(rng, n_docs=50)
    topics = rng.dirichlet(np.full(X.shape[1], 0.5), size=6)
    kwargs = dict(seed=seed, iteration=4)
    plain = gibbs_topic_counts(X, topics, 0.3, n_sweeps=7, burn_in=3, **kwargs)
    assert plain.doc_topic_last is None
    for n_jobs in (1, 2):
        both = gibbs_topic_counts(X, topics, 0.3, n_sweeps=7, burn_in=3, n_jobs=n_jobs,
                                  last_sweep=True, **kwargs)
        np.testing.assert_array_equal(both.doc_topic, plain.doc_topic)
        np.testing.assert_array_equal(both.topic_word, plain.topic_word)
        one_kept = gibbs_topic_counts(X, topics, 0.3, n_sweeps=7, burn_in=6, n_jobs=n_jobs,
                                      **kwargs)
        np.testing.assert_array_equal(both.doc_topic_last, one_kept.doc_topic)
        np.testing.assert_array_equal(both.doc_topic_last.sum(axis=1), X.sum(axis=1))


def test_skipping_the_averaged_doc_topic_counts_changes_nothing_else(seed):
    """A training step's sweep_tokens(doc_topic=False) returns doc_topic None and the same
    word-topic counts, last-sweep counts and assignments, for any n_jobs."""
    rng = np.random.default_rng(seed)
    X = random_corpus(rng, n_docs=40)
    topics = rng.dirichlet(np.full(X.shape[1], 0.5), size=5)
    tokens = csr_to_tokens(sp.csr_matrix(X))
    alpha = np.full(5, 0.2)

    def run(doc_topic, n_jobs):
        return sweep_tokens(tokens, topics, alpha, n_sweeps=5, burn_in=2,
                            streams=document_streams(seed, 3, range(X.shape[0])), n_jobs=n_jobs,
                            last_sweep=True, assignments=np.full(tokens.word_ids.size, -1,
                                                                 dtype=np.int32),
                            doc_topic=doc_topic)
    full = run(True, 1)
    assert full.doc_topic.shape == (X.shape[0], 5)
    for n_jobs in (1, 2):
        lean = run(False, n_jobs)
        assert lean.doc_topic is None
        np.testing.assert_array_equal(lean.topic_word, full.topic_word)
        np.testing.assert_array_equal(lean.doc_topic_last, full.doc_topic_last)
        np.testing.assert_array_equal(lean.assignments, full.assignments)


def test_kernel_last_sweep_shape_error():
    doc_ptr = np.array([0, 2], dtype=np.int64)
    gens = pcg64_streams(0, 1)
    with pytest.raises(ValueError, match="n_dk_last"):
        gibbs_sweeps(doc_ptr, np.array([0, 1], dtype=np.int32), np.arange(2), np.full((3, 2), 0.5),
                     np.ones(3), bitgen_addresses(gens), 2, 0, np.empty((1, 3), dtype=np.int64),
                     False, 1, np.empty((2, 3), dtype=np.int64))


def test_document_streams_are_reproducible_uniform_and_independent():
    """A stream depends on (seed, iteration, document) only; draws within a stream and across
    the streams of consecutive documents are uniform (KS, p > P_MIN) and uncorrelated (within
    Z standard errors, 1 / sqrt(n))."""
    seed = np.random.SeedSequence(7, spawn_key=(3,))
    a = document_streams(seed, 2, [5, 9, 11])
    b = document_streams(seed, 2, [11, 5])
    np.testing.assert_array_equal(a.doubles(0, 50), b.doubles(1, 50))
    np.testing.assert_array_equal(a.doubles(2, 50), b.doubles(0, 50))
    for other in (document_streams(seed, 3, [5]), document_streams(8, 2, [5]),
                  document_streams(np.random.SeedSequence(7, spawn_key=(4,)), 2, [5])):
        assert not np.array_equal(document_streams(seed, 2, [5]).doubles(0, 4), other.doubles(0, 4))
    within = document_streams(seed, 0, [0]).doubles(0, 100_000)
    assert stats.kstest(within, "uniform").pvalue > P_MIN
    n = 20_000
    streams = document_streams(seed, 0, range(n))
    first = np.array([streams.doubles(d, 2) for d in range(n)])
    for column in first.T:
        assert stats.kstest(column, "uniform").pvalue > P_MIN
    for x, y in ((first[:-1, 0], first[1:, 0]), (first[:, 0], first[:, 1])):
        assert abs(np.corrcoef(x, y)[0, 1]) < Z / np.sqrt(n)
    with pytest.raises(ValueError, match="iteration"):
        document_streams(seed, -1, [0])
    with pytest.raises(ValueError, match=">= 0"):
        document_streams(seed, 0, [-3])


@pytest.mark.parametrize("direct_margin", [None, REJECTION_ALWAYS], ids=["default", "rejection"])
@pytest.mark.parametrize("word", [0, 1, 2])
def test_one_draw_is_the_exact_conditional_whichever_path_draws_it(seed, word, direct_margin):
    """One token drawn given 30 others fixed (a warm start and one sweep: the first token is
    drawn once, given the start of the others: 20 on topic 0, 10 on topic 1). Its topic over
    20000 copies is chi-square tested against ``(alpha_k + n_k) phi[k, w]``. Word 1 suits the
    document's topics (both are its top topics: the rejection path accepts most proposals);
    word 0 does not (topic 4 is its only top topic: about 1% accepted, the exact fallback
    draws most); word 2's only top topic is topic 0, so a third of the other tokens sit off
    its top topics (the part proposed from the document's tokens must count only those).
    The envelope's law ``alpha_k f_k + n_k`` (proposals never rejected) is rejected by the
    same data. Run with the kernel's default (a document of 2 topics is drawn directly) and
    with rejection forced."""
    n_docs, n_topics = 20_000, 6
    topics = np.full((n_topics, 4), 0.005)
    topics[4, 0] = 0.9                                   # word 0: topic 4's word
    topics[0, 1], topics[1, 1] = 0.5, 0.4                # word 1: topics 0 and 1
    topics[0, 2] = 0.9                                   # word 2: topic 0's word
    topics[:, 3] = 1.0                                   # word 3: the other tokens
    topics /= topics.sum(axis=1, keepdims=True)
    alpha = np.full(n_topics, 0.05)
    row = np.zeros(4, dtype=np.int64)
    row[word] += 1
    row[3] += 30
    X = sp.csr_array(np.tile(row, (n_docs, 1)))
    # tokens in csr_to_tokens order: the drawn word first, then word 3's 30 tokens
    start = np.array([0] + [0] * 20 + [1] * 10, dtype=np.int32)
    res = gibbs_topic_counts(X, topics, alpha, n_sweeps=1, burn_in=0, seed=seed, iteration=0,
                             assignments=np.tile(start, n_docs), direct_margin=direct_margin)
    observed = np.bincount(res.assignments.reshape(n_docs, 31)[:, 0], minlength=n_topics)
    others = np.bincount(start[1:], minlength=n_topics)
    column = topics[:, word]
    fit = column / column.max()
    assert (fit > 1 / 32).sum() == (2 if word == 1 else 1)  # the top topics said above
    exact = (alpha + others) * column
    envelope = alpha * fit + others
    assert stats.chisquare(observed, n_docs * exact / exact.sum()).pvalue > P_MIN
    assert stats.chisquare(observed, n_docs * envelope / envelope.sum()).pvalue < P_MIN
