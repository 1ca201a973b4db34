"""LDA inference on new documents: transform and perplexity depend on each document's content
and the model's seed, not on row positions (#12 item 8)."""
import numpy as np
import scipy.sparse as sp

from simplexsg import SCIRLDA


def fitted_model(X):
    """A model fitted to the first 100 documents of ``X``, and the others."""
    return SCIRLDA(3, max_iter=5, random_state=0).fit(X[:100]), X[100:]


def test_transform_gives_a_document_the_same_proportions_in_any_batch(three_topic_counts):
    model, X = fitted_model(three_topic_counts)
    theta = model.transform(X)
    perm = np.random.default_rng(1).permutation(X.shape[0])
    np.testing.assert_array_equal(model.transform(X[perm]), theta[perm])
    np.testing.assert_array_equal(model.transform(sp.vstack([X[[3]]] * 3)),
                                  np.repeat(theta[[3]], 3, axis=0))
    np.testing.assert_array_equal(model.transform(X[[3]]), theta[[3]])


def test_perplexity_does_not_depend_on_the_order_of_the_documents(three_topic_counts):
    model, X = fitted_model(three_topic_counts)
    values = {model.perplexity(X[np.random.default_rng(seed).permutation(X.shape[0])])
              for seed in range(4)}
    assert len(values) == 1 and np.isfinite(values.pop())
