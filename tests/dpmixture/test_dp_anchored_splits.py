"""Word-anchored splits (``simplexsg.dpmixture.anchored_splits``), the pilot that ends with
them (``init.with_anchored_splits``) and the exact chain's warm-up that does on short rows."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln
from sklearn.metrics import adjusted_rand_score

from simplexsg import DPMixture
from simplexsg.dpmixture import init
from simplexsg.dpmixture.anchored_splits import anchored_splits
from simplexsg.dpmixture.slice_sampler import ChainState, summary
from simplexsg.dpmixture.split_merge import log_labelled_prior

BASE, ALPHA = 0.5, 1.0
SEED = np.random.SeedSequence(0)


def short_rows(sizes, supports, n_features=40, length=5, seed=0):
    """Rows of ``length`` counts, ``sizes[c]`` of them from cluster c, uniform over the
    categories ``supports[c]``; returns the CSR rows and their clusters."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    X = np.zeros((labels.size, n_features), dtype=np.int64)
    for row, label in enumerate(labels):
        np.add.at(X[row], rng.choice(supports[label], size=length), 1)
    return sp.csr_matrix(X), labels


def log_joint(X, z):
    """log p(z, X) up to a constant: the labelled stick-breaking prior and each component's
    Dirichlet(BASE)-multinomial marginal, written out here."""
    d, total = X.shape[1], log_labelled_prior(np.bincount(z), ALPHA)
    for label in np.unique(z):
        counts = np.asarray(X[z == label].sum(axis=0)).ravel()
        total += (gammaln(d * BASE) - gammaln(d * BASE + counts.sum())
                  + np.sum(gammaln(BASE + counts) - gammaln(BASE)))
    return total


# a host of 600 rows over categories 0-19 that holds a cluster of 60 rows over 15-29, whose
# words 20-29 the host never has; a third cluster of 300 rows over 30-39 apart
SIZES, SUPPORTS = [600, 60, 300], [np.arange(20), np.arange(15, 30), np.arange(30, 40)]


def test_a_small_cluster_merged_into_a_large_one_is_split_out():
    """Rows of five words: the block of host and guest, allocated together, splits along
    the guest's words, and the joint density (written out here) rises; the third cluster,
    alone in its component, stays whole."""
    X, truth = short_rows(SIZES, SUPPORTS)
    z = np.where(truth == 2, 0, 1).astype(np.int64)
    before = log_joint(X, z)
    made = anchored_splits(X, z, BASE, ALPHA, np.random.default_rng(0))
    assert made >= 1
    assert adjusted_rand_score(truth, z) > 0.95
    assert log_joint(X, z) > before
    assert np.unique(z[truth == 2]).size == 1


@pytest.mark.parametrize("seed", range(3))
def test_every_split_raises_the_joint_density_and_clusters_as_they_are_stay(seed):
    """On the true partition of clusters over disjoint words nothing gains and nothing
    moves; from one block of every row the splits made raise the joint density."""
    supports = [np.arange(0, 12), np.arange(12, 24), np.arange(24, 36)]
    X, truth = short_rows([300, 200, 100], supports, seed=seed)
    z = truth.astype(np.int64)
    assert anchored_splits(X, z, BASE, ALPHA, np.random.default_rng(seed)) == 0
    np.testing.assert_array_equal(z, truth)
    z = np.zeros(X.shape[0], dtype=np.int64)
    before = log_joint(X, z)
    assert anchored_splits(X, z, BASE, ALPHA, np.random.default_rng(seed)) >= 2
    assert log_joint(X, z) > before
    assert adjusted_rand_score(truth, z) > 0.95


def test_the_splits_are_those_of_the_generator_and_stop_at_the_deadline():
    X, truth = short_rows(SIZES, SUPPORTS)
    merged = np.where(truth == 2, 0, 1).astype(np.int64)
    runs = [merged.copy() for _ in range(3)]
    for z in runs[:2]:
        anchored_splits(X, z, BASE, ALPHA, np.random.default_rng(5))
    np.testing.assert_array_equal(runs[0], runs[1])
    assert anchored_splits(X, runs[2], BASE, ALPHA, np.random.default_rng(5), deadline=0.0) == 0
    np.testing.assert_array_equal(runs[2], merged)


def test_components_too_small_or_without_a_marking_word_are_left_as_they_are():
    """A block below ANCHOR_MIN_ROWS rows is not tried, nor one whose every word is held by
    more than half or fewer than 2% of its rows."""
    X, truth = short_rows([30, 10], [np.arange(5), np.arange(5, 10)])
    z = np.zeros(X.shape[0], dtype=np.int64)
    assert anchored_splits(X, z, BASE, ALPHA, np.random.default_rng(0)) == 0
    X = sp.csr_matrix(np.ones((200, 3), dtype=np.int64))     # every row holds every word
    z = np.zeros(200, dtype=np.int64)
    assert anchored_splits(X, z, BASE, ALPHA, np.random.default_rng(0)) == 0


def pilot_state(X, labels, rng):
    """A pilot's last state whose components are its clusters' posterior draws, with an
    empty component after the first, weighted by their rows, and that state's ``Summary``
    given ``labels``."""
    n = labels.max() + 1
    counts = np.vstack([np.asarray(X[labels == j].sum(axis=0)).ravel() for j in range(n)])
    theta = rng.gamma(BASE + np.vstack([counts[:1], np.zeros(X.shape[1]), counts[1:]]))
    shares = np.bincount(labels) / labels.size
    weights = np.concatenate([shares[:1], [0.05], shares[1:]])
    state = ChainState(theta, init._sticks(weights / weights.sum(), ALPHA), ALPHA)
    return state, summary(state, np.where(labels == 0, 0, labels + 1))


def test_a_pilot_ends_with_its_splits_and_keeps_what_they_leave():
    """``with_anchored_splits``: a cluster split out of its host gets a component drawn from
    its rows and a share of the host's weight in proportion to its rows; the host's rows left
    get a new draw too; a cluster the splits leave keeps its component and weight. With no
    split the pilot's state and summary come back as they were."""
    X, truth = short_rows(SIZES, SUPPORTS)
    merged = np.where(truth == 2, 0, 1)                     # label 0: the third cluster
    state, found = pilot_state(X, merged, np.random.default_rng(0))
    params = DPMixture("scir", base_concentration=BASE)._check_params(X.shape[0])
    new_state, new_found = init.with_anchored_splits(state, found, X, params, SEED, None)
    assert new_found.occupied.size > found.occupied.size
    assert adjusted_rand_score(truth, new_found.labels) > 0.95
    np.testing.assert_allclose(new_found.weights.sum(), 1.0)
    np.testing.assert_allclose(new_found.weights[0], found.weights[0])
    np.testing.assert_array_equal(new_state.theta[0], state.theta[found.occupied[0]])
    host = found.weights[1]
    parts = np.unique(new_found.labels[merged == 1])
    np.testing.assert_allclose(new_found.weights[parts].sum(), host)
    for part in parts:
        share = np.mean(new_found.labels[merged == 1] == part)
        np.testing.assert_allclose(new_found.weights[part], host * share)
        assert not np.array_equal(new_state.theta[part], state.theta[found.occupied[1]])
    true_state, true_found = pilot_state(X, truth, np.random.default_rng(0))
    assert init.with_anchored_splits(true_state, true_found, X, params, SEED, None) == (
        true_state, true_found)


@pytest.mark.parametrize("row_length, calls", [(4, 1), (200, 0)])
def test_the_exact_chains_warmup_ends_with_the_splits_on_short_rows(row_length, calls,
                                                                     monkeypatch):
    """The exact sampler's warm-up ends (``_moves_scale`` set) with one call of the anchored
    splits on every row's allocations, on rows of fewer than 10 stored counts a row only
    (2.5 and 11.7 here); the state it leaves represents every label the splits made."""
    from simplexsg.datasets import make_multinomial_mixture
    from simplexsg.dpmixture import training
    X = make_multinomial_mixture(3000, 60, 6, row_length=row_length, random_state=0)[0]
    seen, split = [], training.anchored_splits

    def recorded(X_rows, z, *args):
        seen.append(X_rows.shape[0])
        return split(X_rows, z, *args)

    monkeypatch.setattr(training, "anchored_splits", recorded)
    dp = DPMixture("gibbs", max_iter=12, tol=None, random_state=0).fit(X)
    assert seen == [3000] * calls and dp._moves_scale is not None
    assert dp.theta_.shape[0] == dp.sticks_.shape[0] > dp._z.max()
