"""The LDA estimator's inputs: corpora read and checked against the model (``read``), their
vocabularies, and the memory a fit needs, refused up front when the machine lacks it."""
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import physical_memory
from ..corpus import (BowStream, as_corpus, check_counts, check_token_memory, corpus_features,
                      is_bow_corpus)
from .defaults import LENGTH_SAMPLE_TOKENS
from .gibbs import step_bytes_per_token
from . import distributed

#: K x W arrays of the topic dtype alive at once at the peak of a step: the state and the local
#: topics, old and new (the global step writes fresh arrays: a step cut half-way changes
#: nothing), the average's previous sum, its current sum old and new, and components_.
TOPIC_MATRICES = 8
#: Bytes per (topic, word) of the local step's per-word tables (f and the alpha sums, float64),
#: built for the minibatch's words (at most W).
TABLE_BYTES = 16


def read(model, X, id2word, reset):
    """X validated for ``model``: a CSR int64 matrix, a ``BowStream`` or a ``ShardedCorpus``.
    With ``reset`` (a new fit), sets the model's ``n_features_in_`` and ``vocabulary_`` (and
    drops a previous ``feature_names_in_`` for a bag-of-words corpus); else checks X against
    the fitted vocabulary size.

    Raises on bad counts, an all-empty corpus when ``reset``, or a vocabulary size that
    differs from the fitted one.
    """
    if not reset:
        check_is_fitted(model, "n_features_in_")
    if isinstance(X, distributed.CorpusShards):
        raise TypeError("CorpusShards are read by the workers of a Dask client: "
                        "LDA(client=...) only")
    if id2word is None and reset and isinstance(X, distributed.ShardedCorpus):
        id2word = X.id2word
    if id2word is None and reset and is_bow_corpus(X):
        id2word = getattr(X, "id2word", None)   # simplexsg.readers' corpora name words
    n_features = len(id2word) if id2word is not None else (
        None if reset else model.n_features_in_)
    if id2word is not None and _empty_documents(X):       # documents, not 0 columns
        X = np.zeros((len(X), n_features), dtype=np.int64)
    if isinstance(X, distributed.ShardedCorpus):      # held by the workers, checked there
        if not reset and X.shape[1] != n_features:
            raise ValueError(f"the corpus has {X.shape[1]} words, but the model was "
                             f"fitted on {n_features}")
        corpus = X
        if reset:
            model.n_features_in_ = X.shape[1]
    elif is_bow_corpus(X):
        declared = corpus_features(X)
        if declared is not None and n_features is not None and declared != n_features:
            raise ValueError(f"the corpus has {declared} words, but "
                             + (f"id2word has {n_features}" if reset else
                                f"the model was fitted on {n_features}"))
        corpus = as_corpus(X, n_features)
        if reset:
            model.n_features_in_ = (corpus.n_features if isinstance(corpus, BowStream)
                                    else corpus.shape[1])
    else:  # sklearn's checks and messages first (feature count), then the counts'
        corpus = check_counts(validate_data(model, X, accept_sparse="csr", reset=reset))
    if not isinstance(corpus, (BowStream, distributed.ShardedCorpus)):
        if reset and corpus.sum() == 0:
            raise ValueError("X has no tokens: every document is empty")
        check_token_memory(corpus.sum())
    if reset:
        if id2word is not None and len(id2word) != model.n_features_in_:
            raise ValueError(f"id2word has {len(id2word)} words but X has "
                             f"{model.n_features_in_} columns")
        if is_bow_corpus(X) and hasattr(model, "feature_names_in_"):
            del model.feature_names_in_          # a refit without column names
        model.vocabulary_ = None if id2word is None else vocabulary(id2word)
    return corpus


def _empty_documents(X):
    """True if X is a non-empty list or tuple of empty documents (a bag-of-words corpus
    without tokens, which array checks would read as a matrix of no columns)."""
    return (isinstance(X, (list, tuple)) and len(X) > 0
            and all(isinstance(doc, (list, tuple)) and not doc for doc in X))


def vocabulary(id2word):
    """The words of ``id2word`` (a gensim Dictionary, a mapping id -> word or a sequence) in
    id order, as an object array; ValueError if a word has two ids (None, a mapping that
    gives only the vocabulary size, names no word)."""
    words = np.array([id2word[i] for i in range(len(id2word))], dtype=object)
    first = {}
    for i, word in enumerate(words):
        if word is not None and first.setdefault(word, i) != i:
            raise ValueError(f"id2word names {word!r} twice (ids {first[word]} and {i}): "
                             "each word needs a single id")
    return words


def doc_topic_dtype(corpus):
    """The dtype of ``doc_topic_``'s counts: uint16 when every document of an in-memory corpus
    has fewer than 2^16 tokens, else int32."""
    if isinstance(corpus, distributed.ShardedCorpus):
        return np.int32
    return np.uint16 if np.asarray(corpus.sum(axis=1)).max(initial=0) < 2 ** 16 else np.int32


def mean_document_length(corpus):
    """Mean tokens a document of ``corpus`` (CSR, ``BowStream`` or ``ShardedCorpus``), for the
    default minibatch size: a stream's is that of its first documents, up to
    LENGTH_SAMPLE_TOKENS tokens (one partial read). 0.0 for a corpus with no documents."""
    if isinstance(corpus, BowStream):
        corpus = corpus.head(LENGTH_SAMPLE_TOKENS)
    if isinstance(corpus, distributed.ShardedCorpus):
        return corpus.total / max(corpus.shape[0], 1)
    return float(corpus.sum()) / max(corpus.shape[0], 1)


def check_memory(n_topics, n_words, itemsize=8, n_samples=0):
    """Refuse a topic matrix whose working set exceeds the machine's memory; warn above half.
    ``itemsize``: bytes of the topic matrices' dtype; ``n_samples``: kept float32 topic
    samples (``n_topic_samples``)."""
    needed = ((TOPIC_MATRICES * itemsize + TABLE_BYTES + 4 * n_samples)
              * float(n_topics) * n_words)
    total = physical_memory()
    if total is None:                                  # not a POSIX system: no check
        return
    message = (f"{n_topics} topics x {n_words} words need about {needed / 2**30:.1f} GB "
               f"({TOPIC_MATRICES} matrices of K x W at {itemsize} bytes, the local "
               f"step's tables and {n_samples} topic samples), of {total / 2**30:.1f} GB")
    if needed > total:
        raise MemoryError(message + ": fewer topics, a smaller vocabulary or dtype=float32")
    if needed > total / 2:
        warnings.warn(message, UserWarning)


def check_step_memory(corpus, batch_size, params):
    """Refuse an in-memory corpus (CSR) whose largest possible minibatch, its ``batch_size``
    longest documents, the local step could not hold (``step_bytes_per_token``)."""
    lengths = np.asarray(corpus.sum(axis=1), dtype=np.float64).ravel()
    batch_size = min(batch_size, lengths.size)
    lengths = np.partition(lengths, lengths.size - batch_size)[-batch_size:]
    check_token_memory(lengths.sum(),
                       step_bytes_per_token(params["n_gibbs"] - params["gibbs_burn_in"]),
                       what=f"a minibatch of {batch_size} documents can hold",
                       hint=": a smaller batch_size, or long documents split in parts")
