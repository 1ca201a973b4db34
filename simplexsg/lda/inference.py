"""The methods of a fitted LDA that fold new documents in with its topics: ``transform``,
``score`` and ``perplexity``, by the Gibbs kernel of ``simplexsg.lda.gibbs`` (on the client's
workers when there is one: ``simplexsg.lda.distributed``). ``LDA`` inherits them from
``InferenceMethods``."""
import functools

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .. import metrics
from .._random import substream
from .._validation import check_n_jobs
from ..corpus import BowStream
from .gibbs import fold_in
from . import distributed, inputs
from .defaults import FOLD_IN_BURN_IN, FOLD_IN_SWEEPS
from .training import Stream


class InferenceMethods:
    """``LDA``'s methods over new documents, given its fitted ``components_`` and
    ``doc_topic_prior_``."""

    def transform(self, X):
        """Documents' topic proportions by Gibbs fold-in with ``components_``:
        (alpha + mean n_dk) / (n_d + K alpha). Empty documents get the prior.

        A Monte Carlo estimate (FOLD_IN_SWEEPS sweeps, FOLD_IN_BURN_IN discarded) whose random
        stream is keyed by the model's seed and the document's words and counts, not its row:
        a document gets the same proportions in any batch, and equal documents equal ones.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_docs, n_features), or a list of bag-of-words documents
            Non-negative integer counts (not a stream); with a ``client``, also
            ``CorpusShards`` (files the workers read and fold in).

        Returns
        -------
        ndarray (n_docs, n_components), rows summing to 1
        """
        check_is_fitted(self, "components_")
        if isinstance(X, distributed.CorpusShards) and self.client is not None:
            return distributed.transform_shards(self.client, self._read_shards(X),
                                                self.components_, self.doc_topic_prior_,
                                                **self._fold_in_options())
        X = inputs.read(self, X, None, reset=False)
        if isinstance(X, BowStream):
            raise TypeError("transform takes a matrix or a list of documents, not a stream")
        return self._fold_in(self.components_, self.doc_topic_prior_, X)

    def _fold_in(self, topics, alpha, X):
        """Documents' topic proportions given ``topics`` by the Gibbs kernel (FOLD_IN_SWEEPS),
        on the client's workers when there is one."""
        gibbs = fold_in if self.client is None else functools.partial(distributed.fold_in,
                                                                       self.client)
        return gibbs(topics, alpha, X, **self._fold_in_options())

    def _fold_in_options(self):
        return dict(n_sweeps=FOLD_IN_SWEEPS, burn_in=FOLD_IN_BURN_IN,
                    seed=substream(self.random_state_, Stream.EVAL),
                    n_jobs=check_n_jobs(self.n_jobs))

    def _read_shards(self, X):
        """``CorpusShards`` X read by the client's workers: a ``ShardedCorpus`` of the fitted
        vocabulary size."""
        return inputs.read(self, X.read(self.client), None, reset=False)

    def perplexity(self, X):
        """Held-out perplexity of X by document completion (``simplexsg.metrics``): each
        document's tokens are split in halves by a seeded shuffle, the first half is folded in
        by the Gibbs kernel, the second half scored. Lower is better.

        The split and the fold-in are seeded per document by its content, so the value does
        not depend on the order of the rows, and every model is scored on the same split. It
        is a Monte Carlo estimate (its spread over seeds is measured in
        docs/benchmarks/lda.rst, "Fold-in and perplexity"). Differences between models scored
        on the same documents share the split; the split's error of an absolute figure
        shrinks with the number of test documents, about as one over its square root.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_docs, n_features), or a list of bag-of-words documents
            Non-negative integer counts of the test documents (not a stream: score a sample).

        Returns
        -------
        float
            ``exp(-score(X))``.
        """
        return float(np.exp(-self.score(X)))

    def score(self, X, y=None):
        """Mean held-out log-likelihood per token by document completion (= -log perplexity);
        higher is better.

        Parameters
        ----------
        X : scipy.sparse or array-like (n_docs, n_features), or a list of bag-of-words documents
            Non-negative integer counts of the test documents (not a stream); with a
            ``client``, also ``CorpusShards`` (each file scored on a worker; the documents'
            terms are those of the in-process score, summed in another order).
        y : ignored

        Returns
        -------
        float
        """
        check_is_fitted(self, "components_")
        if isinstance(X, distributed.CorpusShards) and self.client is not None:
            log_likelihood, n_tokens = distributed.completion_score(
                self.client, self._read_shards(X), self.components_, self.doc_topic_prior_,
                **self._fold_in_options())
            return log_likelihood / n_tokens
        X = inputs.read(self, X, None, reset=False)
        if isinstance(X, BowStream):
            raise TypeError("score and perplexity take a matrix or a list of documents, not a "
                            "stream: pass a sample of the corpus (e.g. list(islice(corpus, n)))")
        observed, heldout = metrics.completion_split(X, random_state=0)
        result = metrics.document_completion_score(self.components_, self.doc_topic_prior_,
                                                   observed, heldout, fold_in=self._fold_in)
        return result.log_likelihood / result.n_tokens
