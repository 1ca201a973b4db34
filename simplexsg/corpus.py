"""Corpus inputs: count matrices and gensim bag-of-words corpora, in memory or streamed.

A corpus is documents x vocabulary non-negative integer counts, given as

* a scipy.sparse matrix/array or a dense array-like (kept in memory as CSR, int64), or
* a gensim-style bag-of-words corpus: a re-iterable of documents, each a list of
  ``(word_id, count)`` pairs. A list or tuple is converted to CSR; any other iterable is
  streamed in minibatches and never held in full (``BowStream``).
"""
import warnings
from itertools import islice

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from ._validation import physical_memory


#: Bytes per token of the expanded corpus in the local step (word id and topic, int32 each).
BYTES_PER_TOKEN = 8


def _bad_entry(message, row, column, value):
    return ValueError(f"{message}; found {value!r} at document {row}, word {column}")


#: Counts at or past this are refused (``check_counts``): float64, in which the kernels add
#: them, holds every integer below it exactly, and int64 sums of them cannot overflow.
LARGEST_COUNT = 2.0 ** 53


def check_counts(X):
    """X as CSR int64 after checking it is a 2-d array of finite non-negative integer counts
    below LARGEST_COUNT, summing to less than that too.

    Generic array checks (dimensions, dtype, NaN/inf) are scikit-learn's ``check_array``, with its
    messages; negative, non-integer and too large counts raise a ValueError naming document and
    word. Whether the machine can expand the counts into tokens (LDA's Gibbs kernel) is the
    caller's check (``check_token_memory``): the DP mixture never expands them.
    """
    if isinstance(X, (str, bytes)):
        raise TypeError("X must be a count matrix or a bag-of-words corpus, got a string")
    X = sp.csr_array(check_array(X, accept_sparse="csr", dtype="numeric"))
    data = X.data
    negative = data < 0
    if negative.any():
        j = int(np.flatnonzero(negative)[0])
        raise _bad_entry("Negative values in data passed to X: counts must be non-negative",
                         int(np.searchsorted(X.indptr, j, side="right") - 1), int(X.indices[j]),
                         data[j].item())
    fractional = data != np.round(data)
    if fractional.any():
        j = int(np.flatnonzero(fractional)[0])
        raise _bad_entry("X must hold integer counts", int(np.searchsorted(X.indptr, j, side="right") - 1),
                         int(X.indices[j]), data[j].item())
    if data.size and data.max() >= LARGEST_COUNT:          # before int64 could overflow
        j = int(np.argmax(data))
        raise _bad_entry(f"counts must be below 2^53 = {LARGEST_COUNT:.4g}",
                         int(np.searchsorted(X.indptr, j, side="right") - 1), int(X.indices[j]),
                         data[j].item())
    total = data.sum(dtype=np.float64)
    if total >= LARGEST_COUNT:
        raise ValueError(f"X's counts sum to {total:.4g}: they must sum to less than 2^53 = "
                         f"{LARGEST_COUNT:.4g}")
    X = X.astype(np.int64)
    X.sum_duplicates()
    return X


def check_token_memory(n_tokens, bytes_per_token=BYTES_PER_TOKEN, what="X holds", hint=""):
    """Refuse ``n_tokens`` tokens (``bytes_per_token`` each once expanded for the Gibbs
    kernel) that exceed the machine's memory, with a MemoryError that says how much they
    need; ``what`` starts the message, ``hint`` ends it."""
    memory = physical_memory()
    if memory is not None and n_tokens * bytes_per_token > memory:
        raise MemoryError(f"{what} {n_tokens:.3g} tokens: the Gibbs kernel needs about "
                          f"{n_tokens * bytes_per_token / 2**30:.3g} GB for them, of "
                          f"{memory / 2**30:.1f} GB{hint}")


def bow_to_csr(documents, n_features=None):
    """A list of bag-of-words documents as a CSR int64 matrix (n_docs, n_features).

    ``n_features`` defaults to the largest word id + 1.
    """
    indptr, indices, data = [0], [], []
    for d, doc in enumerate(documents):
        try:
            pairs = [(int(w), c) for w, c in doc]
        except (TypeError, ValueError):
            raise TypeError(f"document {d} is not a list of (word_id, count) pairs") from None
        for w, c in pairs:
            if w < 0 or (n_features is not None and w >= n_features):
                raise _bad_entry(f"word ids must lie in [0, {n_features})", d, w, w)
        indices.extend(w for w, _ in pairs)
        data.extend(c for _, c in pairs)
        indptr.append(len(indices))
    if n_features is None:
        n_features = max(indices, default=-1) + 1
    data = np.asarray(data, dtype=np.float64) if data else np.zeros(0)
    X = sp.csr_array((data, np.asarray(indices, dtype=np.int64), np.asarray(indptr)),
                     shape=(len(indptr) - 1, n_features))
    return check_counts(X)


class BowStream:
    """A re-iterable bag-of-words corpus read in minibatches without being materialised.

    ``n_features`` (vocabulary size) must be known up front: pass it or a gensim ``id2word``.
    ``n_documents`` is ``len(corpus)`` when the corpus has one, else counted on the first pass.
    """

    def __init__(self, corpus, n_features):
        if iter(corpus) is corpus:
            raise TypeError("a one-shot iterator (e.g. a generator) cannot be read once per pass; "
                            "pass a re-iterable corpus (a list, a gensim corpus object)")
        self.corpus = corpus
        self.n_features = n_features
        self.n_documents = len(corpus) if hasattr(corpus, "__len__") else None

    def head(self, n_tokens):
        """The first documents, up to the first that brings their tokens to ``n_tokens`` (or
        every document), as CSR."""
        documents, total = [], 0
        for doc in self.corpus:
            documents.append(doc)
            total += sum(count for _, count in doc)
            if total >= n_tokens:
                break
        return bow_to_csr(documents, self.n_features)

    def minibatches(self, batch_size, shuffle_buffer=0, rng=None):
        """Yield (global document indices, CSR minibatch) over one pass.

        ``shuffle_buffer`` 0: corpus order. Otherwise documents are read in blocks of
        ``batch_size`` (through the corpus's ``iter_csr`` when it has one, as
        ``simplexsg.readers``' corpora do) into a pool; once the pool holds ``shuffle_buffer +
        batch_size`` documents, a minibatch of ``batch_size`` of them is drawn uniformly
        without replacement with ``rng``, and the pool's last documents leave in random order.
        Memory: the pool, ``shuffle_buffer + 2 batch_size`` documents at most.
        """
        if hasattr(self.corpus, "iter_csr"):
            blocks = self.corpus.iter_csr(batch_size)
        else:
            iterator = iter(self.corpus)
            blocks = (bow_to_csr(batch, self.n_features)
                      for batch in iter(lambda: list(islice(iterator, batch_size)), []))
        pool = sp.csr_matrix((0, self.n_features), dtype=np.int64)
        pool_ids, start = np.empty(0, dtype=np.int64), 0
        for block in blocks:
            ids = np.arange(start, start + block.shape[0])
            start += block.shape[0]
            if not shuffle_buffer:
                yield ids, block
                continue
            pool, pool_ids = sp.vstack([pool, block], format="csr"), np.concatenate([pool_ids, ids])
            while pool.shape[0] >= shuffle_buffer + batch_size:
                chosen = np.zeros(pool.shape[0], dtype=bool)
                chosen[rng.choice(pool.shape[0], batch_size, replace=False)] = True
                yield pool_ids[chosen], pool[chosen]
                pool, pool_ids = pool[~chosen], pool_ids[~chosen]
        order = rng.permutation(pool.shape[0]) if pool.shape[0] else np.empty(0, dtype=np.int64)
        for first in range(0, order.size, batch_size):
            rows = np.sort(order[first:first + batch_size])
            yield pool_ids[rows], pool[rows]
        if self.n_documents is None:
            self.n_documents = start
        elif start != self.n_documents:
            raise ValueError(f"the corpus yielded {start} documents on this pass, "
                             f"{self.n_documents} before: it must be re-iterable and unchanged")


def _warn_unused_ids(counts):
    """Warn when fewer than half of the word ids of ``counts`` (CSR, its width inferred from
    the largest id) occur in it."""
    used = np.unique(counts.indices[counts.data > 0]).size
    if used < counts.shape[1] / 2:
        warnings.warn(f"the vocabulary size is taken from the largest word id + 1 "
                      f"({counts.shape[1]}), but only {used} ids occur in the documents: pass "
                      "id2word to fix the vocabulary", UserWarning, stacklevel=4)


def is_bow_corpus(X):
    """True if X looks like a bag-of-words corpus rather than a count matrix."""
    if sp.issparse(X) or isinstance(X, (np.ndarray, str, bytes)) or hasattr(X, "__array__"):
        return False
    if isinstance(X, (list, tuple)):
        for doc in X:
            if len(doc):
                first = doc[0]
                return isinstance(first, tuple) or (
                    isinstance(first, list) and len(first) == 2 and not isinstance(first[0], list))
        return False  # empty documents only: treat as a matrix (and fail there)
    return hasattr(X, "__iter__")


def corpus_features(corpus):
    """The vocabulary size a streamed corpus declares (``n_features``, as
    ``simplexsg.readers``' corpora do), or None. gensim's ``num_terms`` is not one: it can
    be the largest word id + 1 in the file, short of the dictionary, so it serves only where
    no id2word is given (``as_corpus``)."""
    return getattr(corpus, "n_features", None)


def as_corpus(X, n_features=None):
    """A CSR int64 count matrix, or a ``BowStream`` for a streamed bag-of-words corpus.

    ``n_features``: the vocabulary size (id2word's). None: for a list of documents, the
    largest word id + 1, with a warning when fewer than half of the ids occur (a stray id
    would otherwise make a vocabulary of mostly unused words); for a stream, the size it
    declares (``corpus_features``), else gensim's ``num_terms`` (a Matrix Market header's).
    """
    if is_bow_corpus(X):
        if isinstance(X, (list, tuple)):
            counts = bow_to_csr(X, n_features)
            if n_features is None:
                _warn_unused_ids(counts)
            return counts
        n_features = n_features or corpus_features(X) or getattr(X, "num_terms", None)
        if not n_features:
            raise ValueError("a streamed bag-of-words corpus needs the vocabulary size: pass "
                             "id2word (a gensim Dictionary or a mapping id -> word)")
        return BowStream(X, n_features)
    X = check_counts(X)
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} columns, the vocabulary has {n_features} words")
    return X
