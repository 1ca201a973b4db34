"""How an LDA fit starts: the data read and checked, the fit planned (a new chain, the chain
continued or the interrupted fit resumed: ``start_fit``; a ``partial_fit`` minibatch:
``start_partial_fit``), and a new chain's fitted state and averages set up on the model
(``new_chain``, ``new_averages``). Functions of the model, which ``Trainer`` then trains."""
import warnings

import numpy as np

from .._fitting import (check_unchanged, first_partial_fit_total, fit_plan, restore_on_error,
                        result_params)
from .._random import seed_sequence, substream
from ..averaging import TailAverage, ThinnedTail
from ..corpus import BowStream, is_bow_corpus
from .gibbs import AssignmentStore
from .alpha import DocTopicPriorSampler
from ..simplex import to_simplex
from . import distributed, inputs
from .defaults import fit_length
from .monitor import ConvergenceMonitor, monitor_documents
from .run import FitRun, data_fingerprint
from .training import PHASES, Stream


@restore_on_error
def start_fit(model, X, id2word, X_heldout, params):
    """Read the data, then plan the fit in ``model._run`` (a ``FitRun``) with the checked
    ``params``: a new chain, the chain continued (``warm_start`` after a finished fit), or
    the interrupted fit resumed (``warm_start`` with ``interrupted_``). Returns
    ``(corpus, heldout)``; on an error, the model is left as it was."""
    plan = fit_plan(model, params["warm_start"], "topic_state_")
    resume, extend = plan == "resume", plan == "continue"
    corpus = inputs.read(model, X, id2word, reset=not (resume or extend))
    heldout = None if X_heldout is None else inputs.read(model, X_heldout, None, reset=False)
    if isinstance(heldout, BowStream):
        raise TypeError("X_heldout must be a matrix or a list of documents, not a stream")
    if model.client is not None and isinstance(corpus, BowStream):
        raise TypeError("with a client, fit takes a matrix or CorpusShards (files the "
                        "workers read): a streamed corpus is read by this process")
    sharded = isinstance(corpus, distributed.ShardedCorpus)
    fingerprint = data_fingerprint(None if sharded else corpus, heldout,
                                   result_params(model))
    if sharded:
        fingerprint["X"] = corpus.fingerprint
    if resume:
        check_unchanged(model._run.fingerprint, fingerprint)
        model.stop_reason_ = None
        return corpus, evaluation_documents(corpus, heldout, params)
    n_docs = corpus.n_documents if isinstance(corpus, BowStream) else corpus.shape[0]
    D = params["total_samples"] or n_docs
    if sharded and params["tol"] is not None and heldout is None:
        raise ValueError("the convergence check of a corpus read by the workers needs "
                         "X_heldout")
    if isinstance(corpus, BowStream) and D is None:
        raise ValueError("a streamed corpus without len() needs total_samples")
    # a continued chain goes on from its pass count (0 after partial_fit alone)
    first_epoch = model._run.epoch if extend and hasattr(model, "_run") else 0
    length = fit_length(params["batch_size"], params["max_iter"], params["tol"], n_docs, D,
                        mean_length=lambda: inputs.mean_document_length(corpus),
                        n_topics=params["n_components"], n_words=model.n_features_in_,
                        n_gibbs=params["n_gibbs"], first_epoch=first_epoch)
    largest = length.largest_batch()
    if not isinstance(corpus, (BowStream, distributed.ShardedCorpus)):
        inputs.check_step_memory(corpus, largest, params)
    if D < min(largest, n_docs or largest):
        raise ValueError(f"total_samples ({D}) is below batch_size ({largest}): the "
                         "minibatch counts would be scaled by D / batch < 1")
    steps = length.steps_from(0)
    if params["burn_in"] is not None and params["burn_in"] >= steps:
        warnings.warn(f"burn_in={params['burn_in']} is not below the {steps}"
                      " steps of fit: components_ will be the last step's topics, not an "
                      "average", UserWarning)
    if extend:
        if model.topic_state_.shape[0] != params["n_components"]:
            raise ValueError(f"warm_start continues a model of {model.topic_state_.shape[0]} "
                             f"topics: n_components={params['n_components']} differs")
        seed, first_step = model.random_state_, model.n_batch_iter_
    else:
        seed, first_step = seed_sequence(model.random_state), 0
        new_chain(model, params, seed, n_documents=D)
    model.burn_in_ = (None if params["burn_in"] is None     # TailAverage's growing blocks
                      else first_step + params["burn_in"])
    new_averages(model, params["n_topic_samples"])
    model.total_samples_, model.batch_size_ = D, length.batch_size(0)
    model._run = FitRun(fingerprint, length, first_epoch)
    model._monitor = None if params["tol"] is None else ConvergenceMonitor(
        monitor_documents(corpus, heldout, substream(seed, Stream.MONITOR, 0)), params,
        seed=substream(seed, Stream.MONITOR, 1),
        first_pass=length.min_passes - params["n_iter_no_change"] - 1)
    model._assignments = (AssignmentStore(corpus) if params["local_warm_start"]
                          and not isinstance(corpus, BowStream) else None)
    model._doc_topic_counts = (None if isinstance(corpus, BowStream) else np.zeros(
        (n_docs, params["n_components"]), dtype=inputs.doc_topic_dtype(corpus)))
    model.stop_reason_, model.interrupted_, model.training_seconds_ = None, True, 0.0
    model.timings_ = dict.fromkeys(PHASES, 0.0)        # goes on with training_seconds_
    return corpus, evaluation_documents(corpus, heldout, params)


def evaluation_documents(corpus, heldout, params):
    """The documents of the ``evaluate_every`` history: X_heldout, else the training ones."""
    if heldout is None and params["evaluate_every"] and not isinstance(
            corpus, (BowStream, distributed.ShardedCorpus)):
        return corpus
    return heldout


def start_partial_fit(model, X, id2word, params):
    """Read and check ``partial_fit``'s minibatch X, and on a first call start a new chain
    scaled to ``total_samples`` D. Returns the minibatch's corpus. The caller
    (``LDA.partial_fit``, ``restore_on_error``) undoes it on an error."""
    first = not hasattr(model, "topic_state_")
    if first and id2word is None and is_bow_corpus(X):
        raise ValueError("a first partial_fit on bag-of-words documents needs id2word: the "
                         "vocabulary size cannot be read from one minibatch")
    corpus = inputs.read(model, X, id2word, reset=first)
    if isinstance(corpus, BowStream):
        raise TypeError("partial_fit takes one minibatch: a matrix or a list of documents")
    inputs.check_step_memory(corpus, corpus.shape[0], params)
    total = (first_partial_fit_total(params["total_samples"], "documents") if first
             else model.total_samples_)
    if total < corpus.shape[0]:
        raise ValueError(f"total_samples ({total}) is below the minibatch's "
                         f"{corpus.shape[0]} documents: the counts would be scaled by "
                         "D / batch < 1")
    if first:
        new_chain(model, params, seed_sequence(model.random_state), n_documents=total)
        model.burn_in_ = params["burn_in"]      # None: TailAverage's growing blocks
        new_averages(model, params["n_topic_samples"])
        model.total_samples_ = total
        model.stop_reason_ = None
    model._doc_topic_counts = None      # doc_topic_: fit's training documents only
    return corpus


def new_chain(model, params, seed, n_documents):
    """Start the fitted state of a new chain of seed ``seed`` on ``model``'s
    ``n_features_in_`` words: random topics, step counters, empty histories and, with
    ``learn_doc_topic_prior``, the alpha sampler of ``n_documents`` documents."""
    K, W = params["n_components"], model.n_features_in_
    inputs.check_memory(K, W, params["dtype"].itemsize, params["n_topic_samples"])
    model.random_state_ = seed
    model.doc_topic_prior_, model.topic_word_prior_ = params["alpha"], params["beta"]
    init = np.random.default_rng(substream(seed, Stream.INIT))
    model.topic_state_ = init.gamma(1.0, size=(K, W)).astype(params["dtype"])
    model.topic_state_scale_ = None
    model.n_batch_iter_ = 0
    model.n_documents_seen_ = 0
    model.n_iter_ = 0
    model.history_ = []
    model._local = to_simplex(model.topic_state_).astype(params["dtype"])
    model._alpha_sampler = None
    model._alpha_history = []
    model.doc_topic_prior_samples_ = None
    if params["learn_alpha"] is not None:
        model._alpha_sampler = DocTopicPriorSampler(
            K, n_documents, symmetric=params["learn_alpha"] == "symmetric",
            prior=params["alpha_prior"], initial=params["alpha"])


def new_averages(model, n_samples):
    """Posterior-mean accumulators of the topics and alpha from ``model.burn_in_`` on (None:
    the growing-block rule of ``simplexsg.averaging``, for a chain of unknown length), and the
    store of ``n_samples`` topic samples from the same window."""
    model._topic_average = TailAverage(model.burn_in_)
    model._alpha_average = TailAverage(model.burn_in_)
    model._topic_samples = ThinnedTail(n_samples) if n_samples else None
