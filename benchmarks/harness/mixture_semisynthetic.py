"""Semi-synthetic DP-mixture data: clusters fitted on real data, rows drawn from them, the truth
known.

The mixture counterpart of ``semisynthetic`` (Arora et al. 2013's protocol for topic models):
cluster a real data set with a long run of the exact sampler (the *reference mixture*: its
clusters' word profiles and their shares of the rows, with the long tail of small clusters that
real data has), then draw new rows from that mixture of multinomials, so that a fit can be
scored against the clusters that generated the rows as well as by held-out log predictive.

* ``reference_mixture``: the profiles and weights of a data-folder source (msweb or a UCI
  corpus) fitted by ``DPMixture(sampler="gibbs")``, cached as ``.npz``, and the source's row
  lengths;
* ``draw_rows``: rows and their clusters given the profiles' CDFs, the weights and lengths;
* ``row_chunks`` / ``heldout_rows``: a data set of any size as a seeded sequence of chunks, its
  held-out rows from a stream of their own (the same for every size);
* ``truth_scores``: the log predictive of rows under the true mixture (the top of the scale)
  and their most probable true clusters (the ARI a perfect fit reaches on them);
* ``recovery``: which true clusters a fit found, from the labels it gives rows;
* ``partition_log_likelihood`` / ``partition_log_prior``: how probable a partition of the rows
  is under the DP mixture, its components and weights integrated out, so that a chain's
  partition and the true one can be compared; ``base_mode``: the base concentration the rows
  favour given a partition.
"""
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from scipy.special import gammaln, logsumexp

from simplexsg import DPMixture
from simplexsg.datasets import make_multinomial_mixture
from simplexsg.dpmixture.slice_sampler import log_multinomial_coefficient

from .corpora import documents_from_topic_counts, msweb, uci_counts

#: Iterations of the reference fit (the exact sampler with split-merge moves).
REFERENCE_ITERATIONS = 100
#: Base concentration of the reference fit: the estimator's default (0.5) merges the small
#: clusters of short rows (5 clusters on msweb, 12 on healthtweets); 0.05 keeps a long tail of
#: them (110 clusters on 20,000 healthtweets rows, 70 of them with at least 0.1% of the rows).
REFERENCE_BASE = 0.05
#: Rows of a source the reference fit clusters at most (a seeded random subset).
REFERENCE_ROWS = 20_000
#: Pseudo-count per feature added to a reference cluster's counts to make its profile: small,
#: so that a cluster of a few rows keeps its own words (the LDA benchmark's beta 0.01).
PROFILE_PRIOR = 0.01
#: Rows drawn per chunk (memory: the chunk's CSR matrix and its one-hot cluster counts).
CHUNK = 20_000


def source_rows(source, data_dir, features=None, seed=0):
    """The count rows (CSR int64) a reference mixture is fitted on: at most REFERENCE_ROWS
    random non-empty rows of msweb's training set (``source`` "msweb") or of the UCI corpus
    ``source``, on its ``features`` most frequent columns (None: all of them; rows left empty
    dropped)."""
    X = (msweb(data_dir, "train").X if source == "msweb" else uci_counts(source, data_dir))
    X = sp.csr_matrix(X, dtype=np.int64)
    if features is not None and features < X.shape[1]:
        frequent = np.argsort(-np.asarray(X.sum(axis=0)).ravel(), kind="stable")[:features]
        X = X[:, np.sort(frequent)]
    X = X[np.asarray(X.sum(axis=1)).ravel() > 0]
    if X.shape[0] > REFERENCE_ROWS:
        keep = np.random.default_rng(seed).choice(X.shape[0], REFERENCE_ROWS, replace=False)
        X = X[np.sort(keep)]
    return X


def reference_mixture(source, data_dir, cache_dir, features=None,
                      iterations=REFERENCE_ITERATIONS, base_concentration=REFERENCE_BASE,
                      seed=0):
    """(profiles (J, W), weights (J,), lengths (n,)): the J clusters the exact sampler (with
    ``base_concentration``) finds on ``source_rows(source, features)`` after ``iterations``
    iterations, each cluster's profile
    ``(n_jw + PROFILE_PRIOR) / (n_j + W PROFILE_PRIOR)`` from its rows' counts and its weight
    its share of the rows, largest first; and the rows' lengths (tokens a row). Cached in
    ``cache_dir`` by source, features, iterations, base concentration and seed."""
    path = (Path(cache_dir) / f"{source}_W{features or 'all'}_it{iterations}"
                              f"_base{base_concentration:g}_seed{seed}.npz")
    if path.is_file():
        with np.load(path) as stored:
            return stored["profiles"], stored["weights"], stored["lengths"]
    X = source_rows(source, data_dir, features, seed)
    dp = DPMixture("gibbs", base_concentration=base_concentration, max_iter=iterations,
                   random_state=seed).fit(X)
    members = sp.csr_matrix((np.ones(X.shape[0]), (dp.labels_, np.arange(X.shape[0]))))
    counts = np.asarray((members @ X).todense())
    profiles = (counts + PROFILE_PRIOR) / (counts.sum(axis=1, keepdims=True)
                                           + X.shape[1] * PROFILE_PRIOR)
    weights = np.bincount(dp.labels_) / X.shape[0]
    order = np.argsort(-weights, kind="stable")
    lengths = np.asarray(X.sum(axis=1)).ravel().astype(np.int64)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, profiles=profiles[order], weights=weights[order], lengths=lengths)
    return profiles[order], weights[order], lengths


#: Categories of the synthetic mixture's rows unless told otherwise.
SYNTHETIC_FEATURES = 500


def synthetic_mixture(n_clusters=100, n_features=SYNTHETIC_FEATURES, row_length=20, seed=0):
    """(profiles, weights, lengths) of a mixture fitted on no data, the one #38 was filed
    with: ``n_clusters`` weights ~ Dirichlet(1), so that many clusters hold 0.1-1% of the
    rows; profiles ~ Dirichlet(0.05) over ``n_features`` categories
    (``make_multinomial_mixture``'s); rows of ``row_length`` counts."""
    rng = np.random.default_rng([38, seed])
    weights = rng.dirichlet(np.ones(n_clusters))
    profiles = make_multinomial_mixture(1, n_features, n_clusters, weights=weights,
                                        random_state=int(rng.integers(2**31)))[2]
    return profiles, weights, np.array([row_length])


def draw_rows(rng, cdfs, weights, lengths):
    """Rows of the given ``lengths`` (n,) from the mixture: cluster ~ Categorical(weights),
    counts ~ Multinomial(length, profile of the cluster) (``cdfs``: the profiles' cumulative
    sums, ``semisynthetic.topic_cdfs``). Returns (CSR counts (n, W) int64, clusters (n,))."""
    lengths = np.asarray(lengths, dtype=np.int64)
    labels = rng.choice(len(weights), size=lengths.size, p=weights)
    per_cluster = np.zeros((lengths.size, len(weights)), dtype=np.int64)
    per_cluster[np.arange(lengths.size), labels] = lengths
    return documents_from_topic_counts(rng, cdfs, per_cluster), labels


def row_chunks(cdfs, weights, lengths, n_rows, seed, chunk=CHUNK):
    """``n_rows`` training rows (and their clusters) in chunks of ``chunk``, their lengths
    resampled with replacement from ``lengths``, from stream ``(seed, 0)``: a chunk is the
    same whatever follows it."""
    rng = np.random.default_rng([seed, 0])
    for start in range(0, n_rows, chunk):
        n = min(chunk, n_rows - start)
        yield draw_rows(rng, cdfs, weights, rng.choice(lengths, size=n))


def heldout_rows(cdfs, weights, lengths, n_rows, seed):
    """``n_rows`` held-out rows (and clusters) drawn as ``row_chunks`` does, from stream
    ``(seed, 1)``: the same for every training size."""
    rng = np.random.default_rng([seed, 1])
    return draw_rows(rng, cdfs, weights, rng.choice(lengths, size=n_rows))


def truth_scores(profiles, weights, X):
    """Under the true mixture: each row's log predictive (n,), with the multinomial
    coefficient as ``DPMixture.score_samples`` has it, and its most probable cluster (n,)."""
    X = sp.csr_matrix(X)
    with np.errstate(divide="ignore"):           # a zero probability is a log of -inf
        log_joint = np.asarray(X @ np.log(profiles).T) + np.log(weights)
    return (logsumexp(log_joint, axis=1) + log_multinomial_coefficient(X),
            np.argmax(log_joint, axis=1))


def recovery(labels, found, fraction=0.01):
    """(recovered, extra) of a fit that gave the rows with true clusters ``labels`` the
    clusters ``found``: the true clusters with at least ``fraction`` of the rows that are the
    majority label of exactly one found cluster with at least ``fraction`` of the rows, and the
    found clusters above ``fraction`` beyond those (a merge of smaller true clusters, or a true
    cluster split in two)."""
    labels, found = np.asarray(labels), np.asarray(found)
    threshold = fraction * labels.size
    true_sizes = np.bincount(labels)
    majority = [int(np.bincount(labels[found == j]).argmax())
                for j in np.flatnonzero(np.bincount(found) >= threshold)]
    counts = np.bincount(majority, minlength=true_sizes.size)
    recovered = int(np.sum((counts == 1) & (true_sizes >= threshold)))
    return recovered, len(majority) - recovered


def partition_log_likelihood(X, labels, base):
    """log p(X | z, b): the rows X (CSR counts (n, W)) given their clusters ``labels`` (n,),
    each cluster's profile integrated out under the symmetric Dirichlet(``base``) prior,
    ``sum_j [lgamma(W b) - lgamma(W b + n_j) + sum_w (lgamma(b + n_jw) - lgamma(b))]`` (n_jw:
    cluster j's counts; the probability of the rows' tokens in order, without the multinomial
    coefficients, which no partition changes). From the histogram of the counts' values, so
    that many ``base`` values cost little."""
    X = sp.csr_matrix(X)
    members = sp.csr_matrix((np.ones(X.shape[0]), (labels, np.arange(X.shape[0]))))
    counts = (members @ X).tocsr()
    totals = np.asarray(counts.sum(axis=1)).ravel()
    values, times = np.unique(counts.data[counts.data > 0], return_counts=True)
    W = X.shape[1]
    return float(np.sum(gammaln(W * base) - gammaln(W * base + totals[totals > 0]))
                 + times @ (gammaln(base + values) - gammaln(base)))


def partition_log_prior(labels, alpha=None):
    """(log p(z | alpha), alpha): the Chinese-restaurant probability of the partition of the
    rows into the clusters ``labels`` (n,), ``K log alpha + lgamma(alpha) - lgamma(alpha + n)
    + sum_j lgamma(n_j)``, at ``alpha`` (None: the alpha that maximises it)."""
    sizes = np.bincount(labels)
    sizes = sizes[sizes > 0]

    def log_prior(log_alpha):
        a = np.exp(log_alpha)
        return (sizes.size * log_alpha + gammaln(a) - gammaln(a + sizes.sum())
                + np.sum(gammaln(sizes)))
    if alpha is None:
        alpha = float(np.exp(minimize_scalar(lambda x: -log_prior(x), bounds=(-10.0, 15.0),
                                             method="bounded").x))
    return float(log_prior(np.log(alpha))), alpha


def base_mode(X, labels, grid=np.geomspace(0.005, 5.0, 301)):
    """The base concentration of ``grid`` that maximises ``partition_log_likelihood``: the
    value the rows favour given their partition (a grid 2.3% apart by default)."""
    return float(grid[np.argmax([partition_log_likelihood(X, labels, b) for b in grid])])
