"""Where the local step runs: an executor turns a minibatch into sparse ``LocalCounts``.

The training loop hands an executor the minibatch, the current local topics and alpha; the
executor runs the Gibbs kernel (``simplexsg.lda.gibbs``) wherever the documents are and returns
only sparse counts, so that an executor whose documents live on other machines moves no K x W
array and no documents. ``ThreadExecutor`` runs it in this process on OpenMP threads.

Each document draws from its own stream, keyed by the seed, the step and the document's
position in the minibatch (``simplexsg._random.document_streams``): the counts do not depend
on where or on how many threads the documents are sampled, and ``partial_fit`` over the
minibatches of a ``fit`` repeats it.
"""
import numpy as np
import scipy.sparse as sp

from .._random import document_streams
from .gibbs import csr_to_tokens, sweep_tokens
from .global_step import LocalCounts


class ThreadExecutor:
    """The local step in this process, on ``n_jobs`` threads (the result does not depend on
    them)."""

    def __init__(self, n_jobs=1):
        self.n_jobs = n_jobs

    def topic_counts(self, batch, doc_indices, topics, alpha, *, seed, step, n_sweeps, burn_in,
                     last_sweep=False, assignments=None, rao_blackwell=False):
        """Gibbs sweeps of the minibatch ``batch`` (CSR int64 (n, W), the documents
        ``doc_indices`` of the corpus; row i draws from the stream of position i) with the
        topics ``topics`` (K, W) and alpha (K,) fixed.

        ``seed``: the SeedSequence of the local step's streams; ``step``: the step number.
        ``assignments``: the tokens' starting topics (warm start), or None. ``rao_blackwell``:
        count the draws by their conditional expectations (``LocalCounts.alpha_counts`` holds
        their alpha part). Returns ``LocalCounts``.
        """
        tokens = csr_to_tokens(batch, self.n_jobs)
        counts = sweep_tokens(tokens, topics, alpha, n_sweeps=n_sweeps, burn_in=burn_in,
                              streams=document_streams(seed, step, range(batch.shape[0])),
                              n_jobs=self.n_jobs, last_sweep=last_sweep,
                              assignments=assignments, doc_topic=False,
                              rao_blackwell=rao_blackwell)
        alpha_counts = None
        if rao_blackwell:
            alpha_counts = np.zeros(batch.shape[1])
            alpha_counts[tokens.vocab] = counts.alpha_counts
        return LocalCounts(_full_vocabulary(counts.word_topic_sums, tokens.vocab, batch.shape[1]),
                           counts.n_kept, tokens.n_documents, counts.doc_topic_last,
                           counts.assignments, alpha_counts)


def _full_vocabulary(word_topic, vocab, n_words):
    """The (len(vocab), K) CSR rows of the words ``vocab`` as a (n_words, K) CSR array."""
    lengths = np.zeros(n_words + 1, dtype=np.int64)
    lengths[vocab + 1] = np.diff(word_topic.indptr)
    return sp.csr_array((word_topic.data, word_topic.indices, np.cumsum(lengths)),
                        shape=(n_words, word_topic.shape[1]))
