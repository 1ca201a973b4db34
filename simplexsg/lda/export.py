"""A fitted LDA in other tools' terms: a gensim ``LdaModel`` (``get_document_topics``,
``CoherenceModel(model=...)``, ``save``/``load``) and the arguments of ``pyLDAvis.prepare``
(Sievert & Shirley 2014), without importing pyLDAvis."""
import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..corpus import BowStream, as_corpus
from .inspection import feature_names, gensim_dictionary


def to_gensim(model):
    """A gensim ``LdaModel`` holding the model's topics.

    Its ``get_topics()`` equals ``components_`` (K, W) (float64), its ``alpha`` is
    ``doc_topic_prior_`` (K,) and ``eta`` is ``topic_word_prior_`` (W,); ``id2word`` is a
    ``Dictionary`` of the model's words (``feature_names``). gensim's variational inference
    (``get_document_topics``, ``model[bow]``) weighs words by ``expElogbeta``, here the topics
    themselves: a plug-in estimate, as ``transform`` conditions on ``components_``. gensim's
    ``lambda`` (``state.get_lambda()``) is set to ``components_`` (rows summing to 1), so
    gensim's ``bound`` and ``log_perplexity``, which read it as a Dirichlet posterior, are not
    meaningful: use ``model.perplexity``.
    """
    from gensim.models import LdaModel

    check_is_fitted(model, "components_")
    topics = np.asarray(model.components_, dtype=np.float64)
    topics = topics / topics.sum(axis=1, keepdims=True)
    K, W = topics.shape
    alpha = np.broadcast_to(np.asarray(model.doc_topic_prior_, dtype=np.float64), (K,))
    eta = np.full(W, float(model.topic_word_prior_))
    lda = LdaModel(num_topics=K, id2word=gensim_dictionary(feature_names(model)),
                   alpha=alpha.copy(), eta=eta, dtype=np.float64)
    lda.state.sstats = topics - eta          # lambda = eta + sstats = topics
    lda.expElogbeta = topics.copy()
    return lda


def pyldavis_data(model, X):
    """The keyword arguments of ``pyLDAvis.prepare`` for documents X (n_docs, W) counts.

    ``topic_term_dists`` (K, W) = ``components_``, ``doc_topic_dists`` (n_docs, K) =
    ``model.transform(X)``, ``doc_lengths`` (n_docs,) tokens per document, ``vocab`` the W
    words, ``term_frequency`` (W,) each word's count in X. Use as
    ``pyLDAvis.prepare(**pyldavis_data(model, X))``.
    """
    check_is_fitted(model, "components_")
    counts = as_corpus(X, model.components_.shape[1])
    if isinstance(counts, BowStream):
        raise TypeError("pyldavis_data takes a matrix or a list of documents, not a stream")
    return {
        "topic_term_dists": np.asarray(model.components_, dtype=np.float64),
        "doc_topic_dists": model.transform(X),
        "doc_lengths": np.asarray(counts.sum(axis=1)).ravel(),
        "vocab": list(feature_names(model)),
        "term_frequency": np.asarray(counts.sum(axis=0)).ravel(),
    }
