"""The LDA training loop: minibatch source -> local step -> global step -> averaging.

``Trainer(model, params)`` runs the steps of ``LDA.fit`` and ``LDA.partial_fit`` on the model's
state (its fitted attributes: the estimator is the state, the trainer the loop). A step:

1. the local step: an executor (``simplexsg.lda.local``) runs the Gibbs kernel on the
   minibatch's documents with the topics fixed and returns sparse counts;
2. with ``learn_doc_topic_prior``, one SGLD-CV step of alpha (``simplexsg.lda.alpha``);
3. the global step: every topic row moves by SCIR or SGRLD with the counts scaled by
   D / batch (``simplexsg.lda.global_step``), and the new local topics join the running average.

Every draw derives from the model's SeedSequence through the namespaces below, the step number
and the document or topic index, so a fit is the same for any ``n_jobs`` and any executor.
Each step runs in a transaction: an exception (Ctrl-C included) leaves the model as it was
after the previous step. ``fit`` clocks each step's phases (``PHASES``) into ``timings_``.
"""
import copy
import enum
import itertools
from time import perf_counter

import numpy as np

from .._fitting import Laps, clocked, progress_bar, transaction, write_checkpoint
from .._random import substream
from ..corpus import BowStream
from ..simplex import to_simplex
from .defaults import ALPHA_WARMUP_STEPS, SHUFFLE_BATCHES
from .local import ThreadExecutor
from .global_step import draw_theta, step_topics

class Stream(enum.IntEnum):
    """The namespaces of the random streams derived from the estimator's SeedSequence (their
    values are part of every draw: never renumber them)."""
    GIBBS = 0        # the local step's sweeps
    GLOBAL = 1       # the global step
    ORDER = 2        # the minibatches of a pass
    INIT = 3         # the initial topics
    EVAL = 4         # fold-in of transform, score and perplexity
    ALPHA = 5        # the doc-topic prior's sampler
    MONITOR = 6      # the convergence check
    SAMPLE = 7       # the kept topic samples, drawn from a state of shapes

#: What a step changes in place, with how to copy it (``Trainer.transaction``); everything
#: else a step touches is rebound. TailAverage, ThinnedTail and the convergence check
#: (``simplexsg.stopping.PlateauMonitor``) rebind their sums, lists and counters, so a shallow
#: copy is a snapshot. The doc-topic counts (D, K) are not copied: a step writes its
#: documents' rows last (``Trainer.step``), and a step redone after an interruption writes
#: the same values.
_IN_PLACE = {"_topic_average": copy.copy, "_alpha_average": copy.copy, "_alpha_history": list,
             "history_": list, "_alpha_sampler": copy.deepcopy, "_assignments": copy.deepcopy,
             "_monitor": copy.copy, "_topic_samples": copy.copy}

#: The phases of a step that ``timings_`` clocks, in their order in the step.
PHASES = ("read", "local", "alpha", "global")


def minibatches(corpus, batch_size, seed, epoch, shuffle_buffer=None):
    """Yield (global document indices, CSR minibatch) of pass ``epoch``: a seeded permutation
    of an in-memory corpus cut into ``batch_size`` documents (indices sorted within a
    minibatch), or a stream through its seeded shuffle buffer (``shuffle_buffer`` documents;
    None: SHUFFLE_BATCHES minibatches)."""
    rng = np.random.default_rng(substream(seed, Stream.ORDER, epoch))
    if isinstance(corpus, BowStream):
        yield from corpus.minibatches(
            batch_size, SHUFFLE_BATCHES * batch_size if shuffle_buffer is None else shuffle_buffer,
            rng)
        return
    order = rng.permutation(corpus.shape[0])
    for start in range(0, len(order), batch_size):
        indices = np.sort(order[start:start + batch_size])
        yield indices, corpus[indices]


class Trainer:
    """The loop of one ``fit`` or ``partial_fit`` call on ``model`` with the resolved
    parameters ``params`` (``simplexsg.lda.validation.check_params``). ``executor``: where the
    local step runs (default: ``ThreadExecutor(params["n_jobs"])``)."""

    def __init__(self, model, params, executor=None):
        self.model, self.params = model, params
        self._bar = None                        # the progress bar of ``run``
        self._evaluated = "held-out"            # what ``run``'s evaluations score
        self.executor = ThreadExecutor(params["n_jobs"]) if executor is None else executor

    # ---------------------------------------------------------------- fit
    def run(self, corpus, heldout, in_sample=False):
        """Run the fit planned in ``model._run`` from where it is; ``in_sample``: ``heldout``
        is the training corpus itself (so the verbose lines say "in-sample"). Any exception (Ctrl-C
        included) keeps the state after the last completed step, ``interrupted_`` True and
        ``stop_reason_`` "interrupted", ``components_`` consistent with it."""
        model, params = self.model, self.params
        run = model._run
        progress = self._progress(None if params["tol"] is not None else run.steps_left)
        self._bar = progress
        self._evaluated = "in-sample" if in_sample else "held-out"
        try:
            while model.stop_reason_ is None and model._run.epoch < run.end_epoch:
                batches = minibatches(corpus, model._run.batch_size, model.random_state_,
                                      model._run.epoch, model.shuffle_buffer)
                for laps, (doc_indices, batch) in clocked(
                        itertools.islice(batches, model._run.step, None)):
                    with self.transaction():
                        self._fit_step(batch, doc_indices, heldout, laps)
                    if progress is not None:
                        progress.update(1)
                    if (params["checkpoint_every"]
                            and model.n_batch_iter_ % params["checkpoint_every"] == 0):
                        model._update_components()
                        write_checkpoint(model, params["checkpoint_path"])
                    if (params["max_time"] is not None
                            and model.training_seconds_ >= params["max_time"]):
                        model.stop_reason_ = "max_time"
                        break
                else:
                    with self.transaction():
                        self._end_pass()
        except BaseException:
            model.stop_reason_ = "interrupted"
            model._update_components()
            raise
        finally:
            if progress is not None:
                progress.close()
        model.stop_reason_ = model.stop_reason_ or "max_iter"
        model.interrupted_ = False
        model.n_iter_ = model._run.passes_done                      # complete passes
        model.monitor_history_ = [] if model._monitor is None else model._monitor.history
        model._update_components()

    def transaction(self):
        """A block that updates the model, undone if it raises (Ctrl-C included): the objects
        a step changes in place are copied first (``_IN_PLACE``), the rest is rebound
        (``simplexsg._fitting.transaction``)."""
        return transaction(self.model, _IN_PLACE)

    def _fit_step(self, batch, doc_indices, heldout, laps):
        """One step of ``fit``: the step itself, the warm-start store, the clocks (``laps``,
        started when the minibatch was asked for: reading and parsing a streamed corpus count
        as training), the position in the pass, the ``evaluate_every`` history."""
        model = self.model
        store = model._assignments
        z = self.step(batch, doc_indices, None if store is None else store.gather(doc_indices),
                      laps)
        if store is not None:
            store.scatter(doc_indices, z)
        laps.lap("global")
        model.training_seconds_ += laps.last - laps.start
        model.timings_ = laps.added_to(model.timings_)
        model._run = model._run.advance()
        self._maybe_evaluate(heldout)

    def _end_pass(self):
        """After a complete pass: the convergence check, then the position moves to the next
        pass."""
        model = self.model
        run = model._run
        done = run.epoch + 1 - run.first_epoch
        if model._monitor is not None and self._converged() and done >= run.min_passes:
            model.stop_reason_ = "converged"
        model._run = run.next_pass()

    def _converged(self):
        """The convergence check after a pass (``simplexsg.lda.monitor``), its entry noting
        the training ``seconds`` and ``timings`` so far; True on a plateau."""
        model, monitor = self.model, self.model._monitor
        scored = len(monitor.history)
        plateau = monitor.check(model, model.n_batch_iter_, seconds=model.training_seconds_,
                                timings=dict(model.timings_))
        if model.verbose >= 2 and len(monitor.history) > scored:
            print(f"step {model.n_batch_iter_}: monitor perplexity "
                  f"{monitor.history[-1]['perplexity']:.1f}")
        return plateau

    # ---------------------------------------------------------------- one step
    def step(self, batch, doc_indices, assignments=None, laps=None):
        """Local step on ``batch`` (CSR, the documents ``doc_indices`` of the corpus, taken
        modulo D by the alpha sampler), the alpha step when learning alpha, the global step.
        Returns the tokens' final assignments when ``assignments`` (a warm start) are given.
        ``laps`` (a ``Laps``, or None): takes the laps "local" and "alpha" at their ends."""
        laps = Laps(perf_counter()) if laps is None else laps
        model, params = self.model, self.params
        K = model.topic_state_.shape[0]
        t = model.n_batch_iter_
        learning = model._alpha_sampler is not None
        store = getattr(model, "_doc_topic_counts", None)
        alpha = model._alpha_sampler.alpha if learning else model.doc_topic_prior_
        counts = self.executor.topic_counts(
            batch, doc_indices, model._local, np.broadcast_to(alpha, (K,)),
            seed=substream(model.random_state_, Stream.GIBBS), step=t,
            n_sweeps=params["n_gibbs"], burn_in=params["gibbs_burn_in"],
            last_sweep=learning or store is not None, assignments=assignments,
            rao_blackwell=params["rao_blackwell"])
        laps.lap("local")
        if learning:
            self._alpha_step(counts.doc_topic_last, doc_indices, t)
            laps.lap("alpha")
        model.topic_state_, model._local, model.topic_state_scale_ = step_topics(
            model.topic_state_, counts, state_scale=model.topic_state_scale_,
            beta=model.topic_word_prior_,
            scale=model.total_samples_ / counts.n_documents, h=params["schedule"](t),
            sampler=model.sampler, local_mean=model.local_topics == "mean",
            seed=substream(model.random_state_, Stream.GLOBAL), step=t,
            average=model._topic_average, n_jobs=params["n_jobs"], alpha=alpha,
            topics=model._local)
        self._keep_sample(t)
        if store is not None:           # doc_topic_: fit's documents, rows of the corpus
            store[doc_indices] = counts.doc_topic_last
        model.n_batch_iter_ = t + 1
        model.n_documents_seen_ += counts.n_documents
        return counts.assignments

    def _keep_sample(self, t):
        """Offer step t's topics, a draw of theta normalised, in float32, to the thinned
        store of ``n_topic_samples`` (the averaging window: the topic average's)."""
        model = self.model
        samples = getattr(model, "_topic_samples", None)
        if samples is not None:
            samples.add(t, model._topic_average.start, lambda: to_simplex(draw_theta(
                model.topic_state_, model.topic_state_scale_,
                substream(model.random_state_, Stream.SAMPLE, t))).astype(np.float32))

    def _alpha_step(self, last_counts, doc_indices, t):
        """Store the minibatch's last-sweep counts in the alpha sampler, recentre when due
        (``learn_doc_topic_prior`` in the LDA docstring), take one SGLD-CV step."""
        model = self.model
        sampler = model._alpha_sampler
        D = sampler.n_documents
        # a document met twice in one minibatch (indices taken modulo D) keeps its last counts
        reversed_idx = (np.asarray(doc_indices, dtype=np.int64) % D)[::-1]
        idx, first = np.unique(reversed_idx, return_index=True)
        sampler.update_counts(idx, last_counts[::-1][first])
        seen = model.n_documents_seen_
        end_of_pass = (seen + len(doc_indices)) // D > seen // D
        if t < ALPHA_WARMUP_STEPS or (end_of_pass and t < model._alpha_average.start):
            sampler.recentre(move=True)
        elif end_of_pass and not model._alpha_average.fixed:
            sampler.recentre(move=False)       # the chain keeps its state: no jump in the average
        rng = np.random.default_rng(substream(model.random_state_, Stream.ALPHA, t))
        alpha = sampler.step(idx, rng)
        model._alpha_history.append(alpha)
        model._alpha_average.add(t, alpha)

    # ---------------------------------------------------------------- output
    def _maybe_evaluate(self, heldout):
        """Append (step, documents, training seconds, perplexity on ``heldout``) to
        ``history_``."""
        model, every = self.model, self.params["evaluate_every"]
        if not every or heldout is None or model.n_batch_iter_ % every:
            return
        model._update_components()
        entry = dict(step=model.n_batch_iter_, documents=model.n_documents_seen_,
                     seconds=model.training_seconds_, perplexity=model.perplexity(heldout))
        model.history_.append(entry)
        if self._bar is not None:
            self._bar.set_postfix(perplexity=f"{entry['perplexity']:.1f}")
        if model.verbose >= 2:
            print(f"step {entry['step']}: {entry['documents']} documents, "
                  f"{entry['seconds']:.1f} s, {self._evaluated} perplexity "
                  f"{entry['perplexity']:.1f}")

    def _progress(self, total):
        return progress_bar(self.model.verbose, total, f"{self.model.sampler.upper()}-LDA",
                            "step")
