"""LDA on a Dask cluster: the corpus stays on the workers, a step moves topic columns and counts.

``LDA(client=...)`` holds the training corpus in row shards on the workers of a
``dask.distributed.Client`` (``ShardedCorpus``): an in-memory matrix is cut into one shard
per worker thread, sent once; files (``CorpusShards``) are read by the workers themselves.
Each shard is a task, not scattered data, so a shard lost with its worker is recomputed by
the scheduler (from the task's copy of the rows, or from the file).

A step of ``DaskExecutor`` (the executor seam of ``simplexsg.lda.local``), for each shard
holding documents of the minibatch (its share, contiguous positions of the minibatch since
its rows are sorted):

1. the share's vocabulary (sorted word ids) comes back to the driver;
2. the driver sends the share's rows, alpha, and the topics' columns of those words only
   (K x |vocabulary| values, never K x W); the worker runs the Gibbs kernel
   (``simplexsg.lda.gibbs.sweep_tokens``) with the documents' streams keyed by their positions
   in the minibatch (``document_streams``), as ``ThreadExecutor`` does;
3. the shares' sparse (word, topic, count) triples and last-sweep rows are summed by a
   pairwise tree of tasks on the workers; the driver receives the sum, whose size is at most
   the minibatch's vocabulary x K, and takes the global step (``step_topics``).

Counts are integers and each document draws from its own stream, so the sum equals the
in-process counts bit for bit and the fit equals ``LDA(client=None)``'s with the same
``random_state``. A worker lost mid-step changes nothing: its tasks rerun elsewhere from the
same arguments (Dask's recomputation), with the same streams.

Inference (``LDA.transform``, ``LDA.score``) folds documents in the same way: an in-memory
matrix in one chunk per worker thread, ``CorpusShards`` on the workers that read them, each
sent with its words' topic columns.

The shards (``CorpusShards`` included), their placement, the tree sum and the byte accounting
are ``simplexsg._dask``'s, shared with the DP mixture (``simplexsg.dpmixture.distributed``). Dask is imported by the
client's methods only: the package imports without it.
"""
import numpy as np
import scipy.sparse as sp

from .. import metrics
from .._dask import (CorpusShards, ShardedCorpus, add_coo, map_shares, nbytes, submit_shard,
                     tree_sum, worker_slots)
from .._random import content_ids, document_streams
from .gibbs import csr_to_tokens, sweep_tokens
from .global_step import LocalCounts

# ------------------------------------------------------------------ on the workers
def _local_tokens(X):
    """X's ``Tokens`` with word ids local to its vocabulary, and that vocabulary (global ids):
    the kernel then reads the (K, |vocabulary|) topic columns of those words."""
    tokens = csr_to_tokens(X)
    return tokens._replace(vocab=np.arange(len(tokens.vocab))), tokens.vocab


def _share_vocabulary(shard, rows):
    """Sorted global ids of the words of the shard's rows ``rows``."""
    return csr_to_tokens(shard[rows]).vocab


def _share_counts(shard, rows, columns, alpha, seed, step, first, n_sweeps, burn_in,
                  last_sweep, n_jobs, rao_blackwell):
    """The local step of the shard's rows ``rows``, minibatch positions ``first, first + 1,
    ...``, with ``columns`` (K, |vocabulary|) the topics of their words. Returns
    ``LocalCounts`` whose word-topic counts are (W, K) COO triples in canonical order, or
    with ``rao_blackwell`` (W, K + 1) ones whose column K is the alpha part's counts."""
    tokens, vocab = _local_tokens(shard[rows])
    counts = sweep_tokens(tokens, columns, alpha, n_sweeps=n_sweeps, burn_in=burn_in,
                          streams=document_streams(seed, step, range(first, first + len(rows))),
                          n_jobs=n_jobs, last_sweep=last_sweep, doc_topic=False,
                          rao_blackwell=rao_blackwell)
    triples = counts.word_topic_sums.tocoo()
    K = columns.shape[0]
    data, words, topics = triples.data, vocab[triples.row], triples.col
    if rao_blackwell:
        data = np.concatenate([data, counts.alpha_counts])
        words = np.concatenate([words, vocab])
        topics = np.concatenate([topics, np.full(len(vocab), K, dtype=topics.dtype)])
    word_topic = sp.coo_array((data, (words, topics)), shape=(shard.shape[1], K + rao_blackwell))
    word_topic.sum_duplicates()
    word_topic.eliminate_zeros()
    return LocalCounts(word_topic, counts.n_kept, len(rows), counts.doc_topic_last)


def _add(a, b):
    """Counts of two shares, ``a`` before ``b`` in the minibatch: triples summed (canonical
    COO), last-sweep rows stacked in order."""
    last = (None if a.doc_topic_last is None
            else np.concatenate([a.doc_topic_last, b.doc_topic_last]))
    return LocalCounts(add_coo(a.word_topic, b.word_topic), a.n_kept,
                       a.n_documents + b.n_documents, last)


def _proportions(tokens, topics, alpha, streams, n_sweeps, burn_in, n_jobs):
    """The last lines of ``simplexsg.lda.gibbs.fold_in``: (alpha + mean n_dk) / (n_d + sum alpha)
    after the sweeps of ``tokens`` with ``topics`` read at ``tokens.vocab``."""
    counts = sweep_tokens(tokens, topics, alpha, n_sweeps=n_sweeps, burn_in=burn_in,
                          streams=streams, n_jobs=n_jobs, word_topic=False)
    weights = counts.doc_topic + alpha
    return weights / weights.sum(axis=1, keepdims=True)


def _fold_in_chunk(X, columns, alpha, seed, n_sweeps, burn_in, n_jobs):
    """``simplexsg.lda.gibbs.fold_in`` of the rows X with ``columns`` the topics of their words
    (K, |vocabulary|), alpha (K,): the same streams (keyed by content), the same result."""
    tokens, _ = _local_tokens(X)
    return _proportions(tokens, columns, alpha, document_streams(seed, 0, content_ids(X)),
                        n_sweeps, burn_in, n_jobs)


def _completion_score(shard, columns, alpha, seed, n_sweeps, burn_in, n_jobs):
    """(held-out log-likelihood, held-out tokens) of the shard by ``LDA.score``'s document
    completion, with ``columns`` (K, |vocabulary|) the topics of its words: the same split and
    fold-in as in process. The words are renumbered into the vocabulary, plus one column
    holding the other words' mass so that the topics' rows sum to 1 (no token reads it)."""
    vocab = csr_to_tokens(shard).vocab
    observed, heldout = metrics.completion_split(shard, random_state=0)
    streams = document_streams(seed, 0, content_ids(observed))
    topics = np.hstack([columns, np.maximum(0.0, 1.0 - columns.sum(axis=1, keepdims=True))])

    def renumbered(X):
        return sp.csr_matrix((X.data, np.searchsorted(vocab, X.indices), X.indptr),
                             shape=(X.shape[0], topics.shape[1]))

    def gibbs(topics, _, X):
        return _proportions(csr_to_tokens(X), topics, alpha, streams, n_sweeps, burn_in, n_jobs)
    score = metrics.document_completion_score(topics, alpha, renumbered(observed),
                                              renumbered(heldout), fold_in=gibbs)
    return score.log_likelihood, score.n_tokens


# ------------------------------------------------------------------ on the driver
class DaskExecutor:
    """The local step on the workers holding ``corpus`` (a ``ShardedCorpus``), with the
    interface of ``simplexsg.lda.local.ThreadExecutor``; ``n_jobs`` threads per task.

    ``traffic``: per step, a dict of the bytes of the arrays the driver ``sent`` (rows, topic
    columns, alpha) and ``received`` (vocabularies, summed counts), and the minibatch's
    vocabulary size ``words``.
    """

    def __init__(self, client, corpus, n_jobs=1):
        self.client, self.corpus, self.n_jobs = client, corpus, n_jobs
        self.traffic = []

    def topic_counts(self, batch, doc_indices, topics, alpha, *, seed, step, n_sweeps, burn_in,
                     last_sweep=False, assignments=None, rao_blackwell=False):
        """``ThreadExecutor.topic_counts`` with ``batch`` the minibatch's sorted global rows
        (``ShardedCorpus[rows]``); ``assignments`` must be None (no warm start)."""
        if assignments is not None:
            raise ValueError("a DaskExecutor keeps no per-token assignments")
        client, shares = self.client, self.corpus.shares(np.asarray(batch))
        vocabularies = map_shares(client, _share_vocabulary, shares)
        alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        parts, sent = [], 0
        for (shard, rows, first), vocab in zip(shares, vocabularies):
            columns = np.ascontiguousarray(topics[:, vocab])
            parts.append(client.submit(_share_counts, shard, rows, columns, alpha, seed, step,
                                       first, n_sweeps, burn_in, last_sweep, self.n_jobs,
                                       rao_blackwell, pure=False))
            sent += nbytes(rows, rows, columns, alpha)
        counts = self._gather(tree_sum(client, _add, parts))
        self.traffic.append(dict(
            sent=sent, words=len(np.unique(np.concatenate(vocabularies))),
            received=nbytes(*vocabularies, counts.word_topic, counts.doc_topic_last)))
        word_topic, alpha_counts = sp.csr_array(counts.word_topic), None
        if rao_blackwell:               # column K holds the alpha part's counts
            K = topics.shape[0]
            alpha_counts = word_topic[:, [K]].toarray().ravel()
            word_topic = word_topic[:, :K]
        return counts._replace(word_topic=word_topic, alpha_counts=alpha_counts)

    def _gather(self, future):
        return future.result()


def _per_shard(client, corpus, function, topics, *args):
    """``function(shard, topic columns of its words, *args)`` on each shard of ``corpus`` (a
    ``ShardedCorpus``), gathered in order."""
    vocabularies = client.gather([client.submit(_share_vocabulary, shard, slice(None),
                                                pure=False) for shard in corpus.shards])
    return client.gather([client.submit(function, shard, np.ascontiguousarray(topics[:, vocab]),
                                        *args, pure=False)
                          for shard, vocab in zip(corpus.shards, vocabularies)])


def transform_shards(client, corpus, topics, alpha, *, n_sweeps, burn_in, seed, n_jobs=1):
    """``fold_in`` of every document of ``corpus`` (a ``ShardedCorpus``) on its worker:
    (D, K), rows in corpus order."""
    alpha = np.ascontiguousarray(np.broadcast_to(alpha, topics.shape[:1]), dtype=np.float64)
    return np.concatenate(_per_shard(client, corpus, _fold_in_chunk, topics, alpha, seed,
                                     n_sweeps, burn_in, n_jobs))


def completion_score(client, corpus, topics, alpha, *, n_sweeps, burn_in, seed, n_jobs=1):
    """(held-out log-likelihood, held-out tokens) of ``corpus`` (a ``ShardedCorpus``) by
    document completion, each shard scored on its worker: the documents' terms equal the
    in-process ones, their sum runs in another order (equal to the last bits)."""
    alpha = np.ascontiguousarray(np.broadcast_to(alpha, topics.shape[:1]), dtype=np.float64)
    scores = _per_shard(client, corpus, _completion_score, topics, alpha, seed, n_sweeps,
                        burn_in, n_jobs)
    return sum(s for s, _ in scores), sum(n for _, n in scores)


def fold_in(client, topics, alpha, X, *, n_sweeps, burn_in, seed, n_jobs=1):
    """``simplexsg.lda.gibbs.fold_in(topics, alpha, X, ...)`` on the workers: X's rows cut into
    one chunk per worker thread, each sent with the topic columns of its words. Equal to the
    in-process fold-in bit for bit (each document's stream is keyed by its content)."""
    X = sp.csr_array(X)
    alpha = np.ascontiguousarray(np.broadcast_to(alpha, topics.shape[:1]), dtype=np.float64)
    slots = worker_slots(client)
    cuts = np.linspace(0, X.shape[0], min(len(slots), X.shape[0]) + 1).astype(np.int64)
    futures = []
    for a, b, slot in zip(cuts[:-1], cuts[1:], slots):
        vocab = csr_to_tokens(X[a:b]).vocab
        futures.append(submit_shard(client, _fold_in_chunk, X[a:b], np.ascontiguousarray(
            topics[:, vocab]), alpha, seed, n_sweeps, burn_in, n_jobs, slot=slot))
    if not futures:
        return np.empty((0, topics.shape[0]))
    return np.concatenate(client.gather(futures))
