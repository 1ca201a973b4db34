"""The one evaluation of the LDA benchmarks, and topic matching.

Every model, ours or a peer's, is scored the same way: ``document_completion_score`` on
``completion_split(X_test, random_state=0)`` (each test document's tokens shuffled with a
seed, the first half observed, the second scored) with the model's normalised topics and its
alpha, the observed half folded in either by the Gibbs fold-in (``EVALUATION``, the
definition ``LDA.perplexity`` uses) or by the fixed-point fold-in (``EVALUATION_FIXED_POINT``,
the LDA study's, cheaper on large corpora).
"""
import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from simplexsg.lda.gibbs import fold_in
from simplexsg.metrics import completion_split, document_completion_score, fixed_point_fold_in

#: The shared evaluation with the Gibbs fold-in, as stated in each benchmark's JSON.
EVALUATION = ("document_completion_score on completion_split(X_test, random_state=0), Gibbs "
              "fold-in (100 sweeps, 50 discarded, seed 0)")
#: The same with the fixed-point fold-in (the LDA study's).
EVALUATION_FIXED_POINT = (
    "document_completion_score on completion_split(X_test, random_state=0) (tokens shuffled "
    "per document, first half observed), fixed_point_fold_in (100 iterations); alpha = 0.1 "
    "for every model, topics row-normalised")


def gibbs_fold_in(n_jobs=1):
    """The Gibbs fold-in of ``LDA.perplexity`` with a fixed seed:
    ``(topics, alpha, X) -> theta``."""
    def gibbs(topics, alpha, X):
        return fold_in(topics, alpha, X, n_sweeps=100, burn_in=50,
                       seed=np.random.SeedSequence(0), n_jobs=n_jobs)
    return gibbs


def completion_perplexity(X_test, *, fold_in=None, n_jobs=1):
    """``perplexity(topics, alpha)`` by document completion on X_test (``EVALUATION``);
    ``fold_in=None`` uses ``gibbs_fold_in(n_jobs)``. topics (K, W) are normalised first."""
    observed, heldout = completion_split(X_test, random_state=0)
    fold_in = gibbs_fold_in(n_jobs) if fold_in is None else fold_in

    def perplexity(topics, alpha):
        topics = np.asarray(topics, dtype=np.float64)
        topics = topics / topics.sum(axis=1, keepdims=True)
        return document_completion_score(topics, alpha, observed, heldout,
                                         fold_in=fold_in).perplexity
    return perplexity


def fixed_point_perplexity(X_test):
    """``completion_perplexity`` with the fixed-point fold-in (``EVALUATION_FIXED_POINT``)."""
    return completion_perplexity(X_test, fold_in=fixed_point_fold_in)


def match_topics(topics, reference):
    """Topics matched to the reference ones by the Hungarian algorithm on the total-variation
    cost ``0.5 |phi_a - phi_b|_1``: the permutation p with ``topics[p[k]]`` matched to
    ``reference[k]``, and the matched distances."""
    cost = 0.5 * cdist(reference, topics, "cityblock")    # (K_ref, K), no (K, K, W) array
    rows, cols = linear_sum_assignment(cost)
    return cols, cost[rows, cols]
