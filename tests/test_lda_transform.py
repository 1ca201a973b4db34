"""LDA inference on new documents: transform and perplexity depend on each document's content
and the model's seed, not on row positions (#12 item 8)."""
import numpy as np
import scipy.sparse as sp

from simplexsg import SCIRLDA
from simplexsg.datasets import make_lda_corpus


def fitted_model():
    X = make_lda_corpus(n_docs=120, n_words=40, n_topics=3, doc_length=30, random_state=0)[0]
    return SCIRLDA(3, max_iter=5, random_state=0).fit(X[:100]), X[100:]


def test_transform_gives_a_document_the_same_proportions_in_any_batch():
    model, X = fitted_model()
    theta = model.transform(X)
    perm = np.random.default_rng(1).permutation(X.shape[0])
    np.testing.assert_array_equal(model.transform(X[perm]), theta[perm])
    np.testing.assert_array_equal(model.transform(sp.vstack([X[[3]]] * 3)),
                                  np.repeat(theta[[3]], 3, axis=0))
    np.testing.assert_array_equal(model.transform(X[[3]]), theta[[3]])


def test_perplexity_does_not_depend_on_the_order_of_the_documents():
    model, X = fitted_model()
    values = {model.perplexity(X[np.random.default_rng(seed).permutation(X.shape[0])])
              for seed in range(4)}
    assert len(values) == 1 and np.isfinite(values.pop())
