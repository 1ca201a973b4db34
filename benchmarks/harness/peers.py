"""One runner per peer LDA library, and the fit of ours, each giving ``Fit(topics, alpha,
seconds)``: the topic-word matrix (K, W) over our whole vocabulary, the alpha to score it with,
and the training seconds (plus any input conversion a user of that library needs: tomotopy's
and gensim's documents), never the evaluation.

* ``fit``: one fit of a budget: ``simplexsg_fit``, ``tomotopy_fit``, ``gensim_fit``
  (``LdaModel``, or ``LdaMulticore`` with ``workers``), ``sklearn_fit`` (online or batch VB),
  ``lda_fit`` (the ``lda`` package's collapsed Gibbs);
* curves, generators of ``(budget, Fit)`` along one model, the caller's work between two
  checkpoints not timed: ``tomotopy_curve`` (cumulative iterations), ``gensim_passes`` and
  ``sklearn_passes`` (a pass a checkpoint, up to a time limit), and their streamed forms
  ``gensim_stream_passes`` (``LdaMulticore``) and ``sklearn_stream_passes``.

The topics are what each script has always scored: normalised here where the script's fit
normalised them (``*_fit``), as the library gives them in the curves (rows summing to one up to
rounding); ``evaluation.completion_perplexity`` normalises again either way.
"""
import logging
import time
from functools import partial
from typing import NamedTuple

import numpy as np

from .measure import timed_fit


class Fit(NamedTuple):
    topics: np.ndarray
    alpha: float
    seconds: float


def _normalise(weights):
    weights = np.asarray(weights, dtype=np.float64)
    return weights / weights.sum(axis=1, keepdims=True)


# ------------------------------------------------------------------------------------ ours
def simplexsg_fit(model, X):
    """A simplexsg LDA estimator fitted on X: its ``components_``, its ``doc_topic_prior_``
    (the fixed alpha, or the learned one) and the seconds of ``fit``."""
    model, seconds = timed_fit(model, X)
    return Fit(model.components_, model.doc_topic_prior_, seconds)


# ------------------------------------------------------------------------------------ tomotopy
def tomotopy_model(X, k, alpha, beta, seed):
    """A tomotopy ``LDAModel`` holding the rows of CSR X as documents (word ids as strings),
    hyperparameter optimisation off."""
    import tomotopy as tp

    model = tp.LDAModel(k=k, alpha=alpha, eta=beta, seed=seed)
    for d in range(X.shape[0]):
        row = slice(X.indptr[d], X.indptr[d + 1])
        model.add_doc(np.repeat(X.indices[row], X.data[row]).astype(str).tolist())
    model.optim_interval = 0
    return model


def tomotopy_topics(model, n_words, beta):
    """tomotopy's topics over our full vocabulary: ``(n_kw + beta) / (n_k + W beta)``; a word it
    never saw gets the smoothing value."""
    columns = np.array(model.used_vocabs, dtype=np.int64)
    weights = np.full((model.k, n_words), beta)
    for k in range(model.k):
        weights[k, columns] = model.get_topic_word_dist(k, normalize=False)  # n_kw + beta
    return weights / weights.sum(axis=1, keepdims=True)


def tomotopy_train(model, iterations, n_words, alpha, beta, workers=1, seconds=0.0):
    """Train a ``tomotopy_model`` built with ``alpha`` and ``beta`` to each cumulative count
    of ``iterations`` in turn; yield ``(count, Fit)``, its seconds ``seconds`` plus the
    ``train`` calls so far."""
    done = 0
    for target in iterations:
        start = time.perf_counter()
        model.train(target - done, workers=workers)
        seconds, done = seconds + time.perf_counter() - start, target
        yield target, Fit(tomotopy_topics(model, n_words, beta), alpha, seconds)


def tomotopy_curve(X, K, alpha, beta, seed, iterations, workers=1):
    """tomotopy ``LDAModel`` (no hyperparameter optimisation) on X, ``tomotopy_train``'s
    checkpoints; the seconds count building the model (the documents' conversion)."""
    start = time.perf_counter()
    model = tomotopy_model(X, K, alpha, beta, seed)
    yield from tomotopy_train(model, iterations, X.shape[1], alpha, beta, workers,
                              time.perf_counter() - start)


def tomotopy_fit(X, K, alpha, beta, seed, iterations, workers=1):
    """``tomotopy_curve`` of one checkpoint: a model trained ``iterations`` iterations."""
    return next(tomotopy_curve(X, K, alpha, beta, seed, (iterations,), workers))[1]


# ------------------------------------------------------------------------------------ gensim
def _gensim_corpus(X):
    from gensim.matutils import Sparse2Corpus
    return Sparse2Corpus(X, documents_columns=False), {w: str(w) for w in range(X.shape[1])}


def gensim_fit(X, K, alpha, beta, seed, passes, workers=None):
    """gensim ``LdaModel`` (``LdaMulticore`` of ``workers`` processes if given), one call of
    ``passes`` passes, its default chunks (2000 documents) and dtype (float32),
    ``eval_every=None`` (its default, 10, spends most of the time on a logged bound)."""
    from gensim.models import LdaModel, LdaMulticore

    start = time.perf_counter()
    corpus, id2word = _gensim_corpus(X)
    settings = dict(num_topics=K, id2word=id2word, passes=passes, alpha=alpha, eta=beta,
                    random_state=seed, eval_every=None)
    model = (LdaModel(corpus, **settings) if workers is None
             else LdaMulticore(corpus, workers=workers, **settings))
    seconds = time.perf_counter() - start
    return Fit(_normalise(model.get_topics()), alpha, seconds)


def gensim_passes(X, K, alpha, beta, seed, max_passes, time_limit):
    """gensim ``LdaModel``, float64, chunks of 2000, no logged bound; each ``update`` call is
    one pass (repeated calls decay the step size with all documents seen, where ``passes=n``
    in one call would count passes instead); ``pass_curve``'s checkpoints."""
    from gensim.models import LdaModel

    def build():
        corpus, id2word = _gensim_corpus(X)
        model = LdaModel(None, num_topics=K, id2word=id2word, alpha=alpha, eta=beta,
                         random_state=seed, eval_every=None, chunksize=2000, passes=1,
                         dtype=np.float64)
        return model, partial(model.update, corpus, passes=1)
    return pass_curve(build, lambda model: model.get_topics(), alpha, max_passes, time_limit)


def gensim_stream_passes(corpus, K, alpha, beta, seed, workers, max_passes, time_limit):
    """gensim ``LdaMulticore`` (online VB, ``workers`` processes, its default chunks of 2000
    documents and float32) on a streamed bag-of-words ``corpus`` of ``corpus.n_features``
    words, no logged bound; each ``update`` call is one pass; ``pass_curve``'s checkpoints."""
    from gensim.models import LdaMulticore

    def build():
        id2word = {w: str(w) for w in range(corpus.n_features)}
        model = LdaMulticore(None, num_topics=K, id2word=id2word, workers=workers, alpha=alpha,
                             eta=beta, random_state=seed, eval_every=None, passes=1)
        return model, partial(model.update, corpus)
    return pass_curve(build, lambda model: model.get_topics(), alpha, max_passes, time_limit)


# ------------------------------------------------------------------------------------ sklearn
def sklearn_fit(X, K, alpha, beta, seed, learning_method, max_iter):
    """scikit-learn ``LatentDirichletAllocation``, ``learning_method`` VB ("online" or
    "batch"), ``max_iter`` passes."""
    from sklearn.decomposition import LatentDirichletAllocation

    model = LatentDirichletAllocation(
        n_components=K, doc_topic_prior=alpha, topic_word_prior=beta,
        learning_method=learning_method, max_iter=max_iter, random_state=seed)
    model, seconds = timed_fit(model, X)
    return Fit(_normalise(model.components_), alpha, seconds)


def sklearn_passes(X, K, alpha, beta, seed, max_passes, time_limit):
    """scikit-learn online VB; ``partial_fit(X)`` is one pass in batches of 128;
    ``pass_curve``'s checkpoints."""
    from sklearn.decomposition import LatentDirichletAllocation

    def build():
        model = LatentDirichletAllocation(
            n_components=K, doc_topic_prior=alpha, topic_word_prior=beta,
            learning_method="online", batch_size=128, total_samples=X.shape[0],
            random_state=seed, n_jobs=1)
        return model, partial(model.partial_fit, X)
    return pass_curve(build, lambda model: model.components_, alpha, max_passes, time_limit)


def sklearn_stream_passes(blocks, n_documents, K, alpha, beta, seed, n_jobs, max_passes,
                          time_limit):
    """scikit-learn online VB on a streamed corpus: ``blocks()`` yields its CSR blocks in
    order, a pass is one ``partial_fit`` per block (its minibatches of 128 inside), counts
    scaled to ``n_documents``; ``pass_curve``'s checkpoints."""
    from sklearn.decomposition import LatentDirichletAllocation

    def build():
        model = LatentDirichletAllocation(
            n_components=K, doc_topic_prior=alpha, topic_word_prior=beta,
            learning_method="online", batch_size=128, total_samples=n_documents,
            random_state=seed, n_jobs=n_jobs)

        def one_pass():
            for X in blocks():
                model.partial_fit(X)
        return model, one_pass
    return pass_curve(build, lambda model: model.components_, alpha, max_passes, time_limit)


# ------------------------------------------------------------------------------------ lda
def lda_fit(X, K, alpha, beta, seed, n_iter, refresh=10):
    """The ``lda`` package's collapsed Gibbs sampler, ``n_iter`` iterations (its log
    likelihood computed every ``refresh``, as its default)."""
    import lda

    # it logs progress, and warns that words seen only in the test documents have no counts
    logging.getLogger("lda").setLevel(logging.ERROR)
    model = lda.LDA(n_topics=K, n_iter=n_iter, alpha=alpha, eta=beta, random_state=seed,
                    refresh=refresh)
    model, seconds = timed_fit(model, X)
    return Fit(_normalise(model.topic_word_), alpha, seconds)


# ------------------------------------------------------------------------------------ curves
def pass_curve(build, topics, alpha, max_passes, time_limit):
    """``build() -> (model, one_pass)``, timed with the first pass; yield ``(passes, Fit)``
    after each pass (``topics(model)``) until ``max_passes`` or until the training seconds
    pass ``time_limit``."""
    start = time.perf_counter()
    model, one_pass = build()
    seconds, passes = time.perf_counter() - start, 0
    while passes < max_passes and seconds <= time_limit:
        start = time.perf_counter()
        one_pass()
        seconds += time.perf_counter() - start
        passes += 1
        yield passes, Fit(topics(model), alpha, seconds)
