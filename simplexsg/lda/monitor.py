"""The convergence check behind ``LDA(tol=...)``: which documents it scores, and its score.

The check itself, the plateau rule and its history, is ``simplexsg.stopping.PlateauMonitor``;
this module supplies its documents (``monitor_documents``) and its score
(``CompletionPerplexity``), which ``ConvergenceMonitor`` puts together."""
import numpy as np

from .. import metrics
from ..corpus import BowStream
from .gibbs import fold_in
from ..stopping import PlateauMonitor
from .defaults import MONITOR_BURN_IN, MONITOR_FRACTION, MONITOR_SWEEPS, MONITOR_TOKENS


def monitor_documents(corpus, heldout, seed):
    """The convergence check's documents: ``heldout`` if given, else documents of the corpus
    in a seeded random order up to ``min(MONITOR_TOKENS, MONITOR_FRACTION * tokens)`` tokens
    (a stream: its first documents up to MONITOR_TOKENS tokens)."""
    if heldout is not None:
        return heldout
    if isinstance(corpus, BowStream):
        return corpus.head(MONITOR_TOKENS)
    order = np.random.default_rng(seed).permutation(corpus.shape[0])
    lengths = np.asarray(corpus.sum(axis=1)).ravel()[order]
    n_tokens = min(MONITOR_TOKENS, MONITOR_FRACTION * lengths.sum())
    n = int(np.searchsorted(np.cumsum(lengths), n_tokens)) + 1
    return corpus[np.sort(order[:n])]


class CompletionPerplexity:
    """The score of the convergence check: ``score(model)`` brings the model's
    ``components_`` (the running posterior mean) up to date, then returns their
    document-completion perplexity on ``documents`` (``simplexsg.metrics``, split once with
    ``random_state=0``), the observed halves folded in by a cheaper Gibbs fold-in
    (``MONITOR_SWEEPS``, ``MONITOR_BURN_IN``) on ``n_jobs`` threads with the same random
    streams (``seed``) each time, so that successive scores differ by the model only."""

    def __init__(self, documents, seed, n_jobs=1):
        self.observed, self.heldout = metrics.completion_split(documents, random_state=0)
        self.seed, self.n_jobs = seed, n_jobs

    def __call__(self, model):
        model._update_components()
        return metrics.document_completion_score(
            model.components_, model.doc_topic_prior_, self.observed, self.heldout,
            fold_in=self._fold_in).perplexity

    def _fold_in(self, topics, alpha, X):
        return fold_in(topics, alpha, X, n_sweeps=MONITOR_SWEEPS, burn_in=MONITOR_BURN_IN,
                       seed=self.seed, n_jobs=self.n_jobs)


class ConvergenceMonitor(PlateauMonitor):
    """The convergence check of ``LDA.fit`` (``tol``, ``n_iter_no_change``, ``n_jobs`` of the
    resolved ``params``), checked after each pass: the ``CompletionPerplexity`` of
    ``documents`` with the fold-in streams of ``seed``, from the pass ``first_pass`` (numbered
    from 0 in this fit) on, under the ``Plateau`` rule; ``history`` entries name the score
    "perplexity". Holds no reference to the model, so that it pickles and copies on its own.
    """

    def __init__(self, documents, params, seed, first_pass=0):
        super().__init__(CompletionPerplexity(documents, seed, params["n_jobs"]), params["tol"],
                         params["n_iter_no_change"], first_check=first_pass, name="perplexity")
