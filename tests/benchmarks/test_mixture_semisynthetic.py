"""The semi-synthetic DP-mixture data of ``benchmarks/harness/mixture_semisynthetic.py``: the rows
follow their mixture (cluster shares against their multinomial, each cluster's rows' first and
second moments against the multinomial's), the data set is reproducible chunk by chunk, the
truth's score is the mixture's log likelihood, the reference mixture is the clusters a fit
finds, the recovery count is right under relabelling, merges and splits, and a partition's
log joint density is a normalised likelihood and prior whose base mode finds a known
concentration."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import multinomial

from harness import mixture_semisynthetic as mixture
from harness.semisynthetic import topic_cdfs
from helpers.stats import Z
from simplexsg.datasets import make_multinomial_mixture

#: Three clusters on six features, overlapping on feature 2.
PROFILES = np.array([[0.5, 0.3, 0.2, 0.0, 0.0, 0.0],
                     [0.0, 0.0, 0.2, 0.5, 0.3, 0.0],
                     [0.1, 0.0, 0.1, 0.0, 0.1, 0.7]])
WEIGHTS = np.array([0.6, 0.3, 0.1])


def test_rows_have_the_given_lengths():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 30, size=500)
    X, labels = mixture.draw_rows(rng, topic_cdfs(PROFILES), WEIGHTS, lengths)
    assert X.shape == (500, 6) and labels.shape == (500,)
    np.testing.assert_array_equal(np.asarray(X.sum(axis=1)).ravel(), lengths)


def test_clusters_follow_the_weights():
    n = 50_000
    _, labels = mixture.draw_rows(np.random.default_rng(1), topic_cdfs(PROFILES), WEIGHTS,
                                  np.full(n, 3))
    counts = np.bincount(labels, minlength=3)
    np.testing.assert_array_less(np.abs(counts - n * WEIGHTS),
                                 Z * np.sqrt(n * WEIGHTS * (1 - WEIGHTS)))


def test_rows_follow_their_clusters_multinomial():
    n, L = 60_000, 7
    X, labels = mixture.draw_rows(np.random.default_rng(2), topic_cdfs(PROFILES), WEIGHTS,
                                  np.full(n, L))
    X = X.toarray().astype(float)
    for k, p in enumerate(PROFILES):
        rows = X[labels == k]
        m = rows.shape[0]
        np.testing.assert_array_less(np.abs(rows.mean(axis=0) - L * p),
                                     Z * rows.std(axis=0) / np.sqrt(m) + 1e-12)
        # E[x x^T] of Multinomial(L, p): L (L - 1) p p^T + L diag(p)
        second = L * (L - 1) * np.outer(p, p) + L * np.diag(p)
        products = rows[:, :, None] * rows[:, None, :]
        se = products.std(axis=0) / np.sqrt(m)
        np.testing.assert_array_less(np.abs(products.mean(axis=0) - second), Z * se + 1e-12)
    # the test has power: rows of the pooled profile would fail it for the smallest cluster
    pooled = WEIGHTS @ PROFILES
    smallest = X[labels == 2]
    se = smallest.std(axis=0) / np.sqrt(smallest.shape[0])
    assert np.any(np.abs(smallest.mean(axis=0) - L * pooled) > 20 * se)


def test_data_is_the_same_chunk_by_chunk_and_heldout_apart():
    cdfs, lengths = topic_cdfs(PROFILES), np.array([2, 5, 9])
    small = list(mixture.row_chunks(cdfs, WEIGHTS, lengths, 25, seed=4, chunk=10))
    large = list(mixture.row_chunks(cdfs, WEIGHTS, lengths, 45, seed=4, chunk=10))
    for (a, la), (b, lb) in zip(small[:2], large[:2]):
        assert (a != b).nnz == 0
        np.testing.assert_array_equal(la, lb)
    assert [X.shape[0] for X, _ in small] == [10, 10, 5]
    X_test, labels_test = mixture.heldout_rows(cdfs, WEIGHTS, lengths, 7, seed=4)
    again = mixture.heldout_rows(cdfs, WEIGHTS, lengths, 7, seed=4)
    assert (X_test != again[0]).nnz == 0 and np.array_equal(labels_test, again[1])
    assert (X_test != mixture.heldout_rows(cdfs, WEIGHTS, lengths, 7, seed=5)[0]).nnz > 0


def test_truth_scores_are_the_mixture_log_likelihood():
    X, _ = mixture.draw_rows(np.random.default_rng(3), topic_cdfs(PROFILES), WEIGHTS,
                             np.array([1, 4, 6, 9]))
    scores, best = mixture.truth_scores(PROFILES, WEIGHTS, X)
    dense = X.toarray()
    joint = np.array([[w * multinomial.pmf(x, x.sum(), p) for w, p in zip(WEIGHTS, PROFILES)]
                      for x in dense])
    np.testing.assert_allclose(scores, np.log(joint.sum(axis=1)), rtol=1e-10)
    np.testing.assert_array_equal(best, joint.argmax(axis=1))


def test_reference_mixture_is_the_clusters_of_its_fit(tmp_path, monkeypatch):
    """The fit's clusters, largest first: the three true ones, each within a row of its true
    share, and at most a stray row or two beside them (with the sharp base measure 0.05 the
    exact chain often keeps a row that fits no cluster well on its own: 4 of 8 seeds)."""
    weights = np.array([0.5, 0.3, 0.2])
    X, labels, _, _ = make_multinomial_mixture(600, 30, 3, weights=weights, concentration=0.1,
                                               row_length=40, random_state=5)
    monkeypatch.setattr(mixture, "source_rows",
                        lambda source, data_dir, features, seed: sp.csr_matrix(X))
    profiles, found, lengths = mixture.reference_mixture("toy", None, tmp_path, iterations=30)
    assert profiles.shape == (found.size, 30) and found.size >= 3
    np.testing.assert_allclose(profiles.sum(axis=1), 1.0)
    np.testing.assert_allclose(found.sum(), 1.0)
    assert np.all(np.diff(found) <= 0)                           # largest first
    np.testing.assert_allclose(found[:3], np.sort(np.bincount(labels) / 600)[::-1],
                               atol=1.5 / 600)
    assert found[3:].sum() <= 2 / 600
    np.testing.assert_array_equal(lengths, np.asarray(X.sum(axis=1)).ravel())
    cached = mixture.reference_mixture("toy", None, tmp_path, iterations=30)
    np.testing.assert_array_equal(cached[0], profiles)


def test_recovery_counts_the_clusters_found():
    labels = np.repeat([0, 1, 2, 3], [500, 300, 195, 5])
    assert mixture.recovery(labels, labels) == (3, 0)            # cluster 3 is under 1%
    assert mixture.recovery(labels, labels, fraction=0.005) == (4, 0)
    relabelled = np.array([7, 2, 0, 4])[labels]
    assert mixture.recovery(labels, relabelled) == (3, 0)
    merged = np.where(labels == 1, 0, labels)                  # 0 and 1 merged: 1 is lost
    assert mixture.recovery(labels, merged) == (2, 0)
    split = labels.copy()
    split[:250] = 9                                              # 0 in two halves
    assert mixture.recovery(labels, split) == (2, 2)


@pytest.mark.parametrize("fraction", [0.001, 0.01])
def test_a_perfect_fit_recovers_every_cluster_above_the_threshold(fraction):
    n = 20_000
    weights = np.array([0.7, 0.25, 0.045, 0.005])
    labels = np.random.default_rng(6).choice(4, size=n, p=weights)
    expected = int(np.sum(np.bincount(labels) >= fraction * n))
    assert mixture.recovery(labels, labels, fraction) == (expected, 0)


def test_the_synthetic_mixture_is_the_issues_and_reproducible():
    """100 clusters over 500 categories, rows of 20 counts, the same for the same seed; the
    Dirichlet(1) weights leave many clusters between 0.1% and 1% of the rows."""
    profiles, weights, lengths = mixture.synthetic_mixture()
    assert profiles.shape == (100, 500) and lengths.tolist() == [20]
    np.testing.assert_allclose(profiles.sum(axis=1), 1.0)
    assert weights.sum() == pytest.approx(1.0) and np.all(weights > 0)
    assert np.sum((weights >= 0.001) & (weights < 0.01)) >= 20
    again = mixture.synthetic_mixture()
    np.testing.assert_array_equal(again[0], profiles)
    assert not np.array_equal(mixture.synthetic_mixture(seed=1)[1], weights)


def test_the_partition_likelihood_of_a_row_sums_to_one_over_its_counts():
    """One row of 4 tokens over 3 categories in a cluster of its own: the Dirichlet-multinomial
    probabilities of every count vector, times their orderings, sum to one."""
    total = 0.0
    for c0 in range(5):
        for c1 in range(5 - c0):
            c = np.array([[c0, c1, 4 - c0 - c1]])
            orderings = multinomial.pmf(c[0], 4, [1 / 3] * 3) * 3 ** 4
            total += orderings * np.exp(mixture.partition_log_likelihood(
                sp.csr_matrix(c), np.zeros(1, dtype=int), 0.3))
    assert total == pytest.approx(1.0, rel=1e-12)


def _set_partitions(n):
    """Every partition of n items as restricted growth strings (labels in first-seen order)."""
    if n == 1:
        yield [0]
        return
    for head in _set_partitions(n - 1):
        for label in range(max(head) + 2):
            yield head + [label]


def test_the_partition_prior_sums_to_one_and_its_alpha_is_the_best():
    partitions = [np.array(z) for z in _set_partitions(5)]
    assert len(partitions) == 52                                  # Bell(5)
    total = sum(np.exp(mixture.partition_log_prior(z, 0.7)[0]) for z in partitions)
    assert total == pytest.approx(1.0, rel=1e-12)
    z = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3])
    best, alpha = mixture.partition_log_prior(z)
    for other in (alpha * 1.05, alpha / 1.05):
        assert mixture.partition_log_prior(z, other)[0] < best


def test_the_partition_measures_ignore_the_labels_names():
    rng = np.random.default_rng(3)
    X = sp.csr_matrix(rng.poisson(0.5, size=(40, 6)))
    z = rng.integers(4, size=40)
    renamed = np.array([9, 2, 5, 0])[z]
    assert mixture.partition_log_likelihood(X, renamed, 0.2) == pytest.approx(
        mixture.partition_log_likelihood(X, z, 0.2), rel=1e-12)
    assert mixture.partition_log_prior(renamed, 1.5)[0] == pytest.approx(
        mixture.partition_log_prior(z, 1.5)[0], rel=1e-12)


def test_the_base_mode_finds_the_profiles_concentration():
    """Rows of 300 clusters whose profiles are Dirichlet(0.2) draws over 40 categories: the
    base concentration that the true partition favours is 0.2 within Z standard errors of its
    estimate (from the curvature of the log likelihood in log b at its mode)."""
    rng = np.random.default_rng(11)
    profiles = rng.dirichlet(np.full(40, 0.2), size=300)
    labels = np.repeat(np.arange(300), 20)
    X = sp.csr_matrix(np.vstack([rng.multinomial(8, profiles[j]) for j in labels]))
    mode = mixture.base_mode(X, labels)
    step = 0.01
    curve = [mixture.partition_log_likelihood(X, labels, mode * np.exp(d))
             for d in (-step, 0.0, step)]
    sd = 1.0 / np.sqrt(-(curve[0] - 2 * curve[1] + curve[2]) / step**2)
    assert abs(np.log(mode / 0.2)) < Z * sd + 0.012               # + half the grid's spacing
