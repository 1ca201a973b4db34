"""The convergence check behind ``LDA(tol=...)``: which documents it scores, and when it stops."""
import numpy as np

from .. import metrics
from ..corpus import BowStream
from .gibbs import fold_in
from ..stopping import Plateau
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


class ConvergenceMonitor:
    """The convergence check of ``LDA.fit`` (``tol``, ``n_iter_no_change``).

    ``converged(model, epoch)`` scores the model's ``components_`` (the running posterior mean)
    on the monitor documents by document completion, folded in by a cheaper Gibbs fold-in
    (``MONITOR_SWEEPS``, ``MONITOR_BURN_IN``) with the same random streams (``seed``) each time,
    so that successive scores differ by the model only, and says whether ``n_iter_no_change``
    successive scores failed to beat the best one before them by the fraction ``tol``
    (``simplexsg.stopping.Plateau``). ``history``: (step, perplexity) of each score. Holds no
    reference to the model, so that it pickles and copies on its own.
    """

    def __init__(self, documents, params, seed, first_pass=0):
        self.n_jobs, self.seed, self.first_pass = params["n_jobs"], seed, first_pass
        self.plateau = Plateau(params["tol"], params["n_iter_no_change"])
        self.observed, self.heldout = metrics.completion_split(documents, random_state=0)
        self.history = []

    def converged(self, model, epoch):
        """Score ``model`` after its pass ``epoch`` of this fit (none before ``first_pass``);
        True on a plateau. Calls ``model._update_components()``."""
        if epoch < self.first_pass:
            return False
        model._update_components()

        def gibbs(topics, alpha, X):
            return fold_in(topics, alpha, X, n_sweeps=MONITOR_SWEEPS, burn_in=MONITOR_BURN_IN,
                           seed=self.seed, n_jobs=self.n_jobs)
        perplexity = metrics.document_completion_score(
            model.components_, model.doc_topic_prior_, self.observed, self.heldout,
            fold_in=gibbs).perplexity
        self.history.append(dict(step=model.n_batch_iter_, perplexity=perplexity))
        if model.verbose >= 2:
            print(f"step {model.n_batch_iter_}: monitor perplexity {perplexity:.1f}")
        return self.plateau.update(perplexity)
