"""Defaults of the LDA estimator, and the one place where a parameter left at None gets its
value: ``resolve_params`` (the defaults that need no data) and ``fit_length`` (those that
depend on the corpus size). ``shuffle_buffer=None`` is resolved where the stream is read
(``simplexsg.lda.training.minibatches``: SHUFFLE_BATCHES minibatches).

The measurements behind the values are in docs/benchmarks/lda.rst, section "Why the defaults
are what they are"; each constant's comment names its subsection there in quotes.
"""
import math
from typing import NamedTuple


#: Schedule h_t = step_size (1 + t / step_offset)^-step_decay of each sampler ("Step sizes").
SAMPLER_DEFAULTS = {
    "scir": dict(step_size=4.0, step_offset=10.0, step_decay=0.6),
    "sgrld": dict(step_size=0.1, step_offset=1000.0, step_decay=0.6),
}
#: SCIR's step_decay when topic_word_prior <= SMALL_BETA: sharp topics keep learning from the
#: large step late in a fit; smoother ones need it to shrink faster (0.6), or it leaves them
#: more minibatch noise ("Step sizes").
SMALL_BETA_STEP_DECAY = 0.33
#: See SMALL_BETA_STEP_DECAY.
SMALL_BETA = 0.01
#: Smallest step_size: SCIR's Poisson rate, about theta / h, must not overflow ("Step sizes").
MIN_STEP_SIZE = 1e-8

#: Symmetric Dirichlet parameter alpha of the documents' topic proportions when None.
DOC_TOPIC_PRIOR = 0.1
#: Symmetric Dirichlet parameter beta of the topics when None.
TOPIC_WORD_PRIOR = 0.1

#: Local Gibbs sweeps per document and step, ``n_gibbs`` ("Counts in expectation").
DEFAULT_SWEEPS = 10
#: Of which discarded (at most ``n_gibbs // 2``) before averaging ("Minibatches and sweeps").
DEFAULT_SWEEP_BURN_IN = 1
#: Smallest default minibatch, in documents ("Minibatches and sweeps").
MIN_BATCH = 50
#: Fewest default steps a pass: minibatches of ceil(D / STEPS_PER_PASS) documents at most
#: ("Minibatches and sweeps").
STEPS_PER_PASS = 3
#: A default minibatch of the chain's pass p (1, 2, ...) holds about p * BATCH_ROOT_TOKENS *
#: sqrt(T) of the corpus's T tokens: the first pass has sqrt(T) / BATCH_ROOT_TOKENS steps
#: ("Counts in expectation"), later passes fewer, quieter ones ("Minibatches that grow by
#: pass").
BATCH_ROOT_TOKENS = 20
#: The first pass of a default fit on a large corpus has at least this many steps: its
#: minibatch holds at most max(T / FIRST_PASS_STEPS, FIRST_PASS_MIN_TOKENS) tokens (then the
#: floors below); sqrt(T) / BATCH_ROOT_TOKENS steps can be too few for one pass over a large
#: corpus to learn the topics ("The first pass of a large corpus").
FIRST_PASS_STEPS = 250
#: See FIRST_PASS_STEPS: the smallest first-pass minibatch it imposes, in tokens; on corpora
#: of about a million tokens a smaller first minibatch learns less at equal time.
FIRST_PASS_MIN_TOKENS = 30_000
#: A kept draw of the local step, counted in expectation, costs about as much as this many
#: coordinates of the global step, which passes over all K x W of them every step: a default
#: minibatch holds at least K W / (n_gibbs x DRAW_COST_COORDINATES) tokens, so that a step's
#: local part costs at least its global part ("Minibatches and the global step"; kept for
#: the cheaper step with theta integrated out: "The global step with theta integrated out").
DRAW_COST_COORDINATES = 6
#: The floor of DRAW_COST_COORDINATES holds at most T / BALANCE_MIN_STEPS of the corpus's T
#: tokens, a first pass of this many steps: on a small corpus the steps, not the seconds, are
#: what a default fit runs short of ("Minibatches and the global step").
BALANCE_MIN_STEPS = 40
#: Tokens of a default minibatch at most, which bounds a streamed corpus's memory ("Minibatch
#: size at scale").
BATCH_TOKENS = 1_000_000
#: Tokens of a default minibatch at least: below about a million tokens smaller minibatches
#: are noisier without learning faster ("Counts in expectation").
MIN_BATCH_TOKENS = 20_000
#: A streamed corpus's mean document length is that of its first documents up to this many
#: tokens (``BowStream.head``), read when the minibatch size is left to the default.
LENGTH_SAMPLE_TOKENS = 100_000
#: Passes of ``fit`` when ``max_iter=None``: with DEFAULT_SWEEPS, 60 draws a token ("Counts
#: in expectation").
DEFAULT_PASSES = 6
#: Fewest steps of a fit with max_iter=None: small corpora make more passes ("How many passes").
MIN_STEPS = 60
#: Most passes when ``tol`` decides when to stop and ``max_iter=None`` ("How many passes").
MAX_PASSES = 100

#: The convergence check's sample holds min(MONITOR_TOKENS, MONITOR_FRACTION * tokens) at least.
MONITOR_TOKENS = 20_000
#: See MONITOR_TOKENS: the fraction of the training tokens.
MONITOR_FRACTION = 0.05
#: Gibbs sweeps of the cheaper fold-in behind the convergence check.
MONITOR_SWEEPS = 20
#: Of the MONITOR_SWEEPS, those discarded.
MONITOR_BURN_IN = 10

#: Gibbs sweeps of the fold-in of transform, score and perplexity ("Fold-in and perplexity").
FOLD_IN_SWEEPS = 100
#: Of the FOLD_IN_SWEEPS, those discarded ("Fold-in and perplexity").
FOLD_IN_BURN_IN = 50

#: A streamed corpus's default shuffle buffer, in minibatches ("Minibatch size at scale").
SHUFFLE_BATCHES = 4

#: First steps after each of which the alpha sampler's centre is re-optimised ("Learning alpha").
ALPHA_WARMUP_STEPS = 5

#: ``learn_doc_topic_prior`` as the alpha sampler's mode (None: alpha fixed).
_LEARN_ALPHA = {False: None, True: "symmetric", "symmetric": "symmetric", "per_topic": "per_topic"}


def default_passes(pass_steps):
    """``max_iter=None``: the fewest passes, at least DEFAULT_PASSES, whose steps
    (``pass_steps[p]`` steps in pass p) add up to MIN_STEPS; ``len(pass_steps)`` if none do."""
    total = 0
    for passes, steps in enumerate(pass_steps, start=1):
        total += steps
        if passes >= DEFAULT_PASSES and total >= MIN_STEPS:
            return passes
    return len(pass_steps)


def balance_tokens(n_topics, n_words, n_gibbs):
    """Tokens of a minibatch whose local step (``n_gibbs`` sweeps) costs about as much as the
    global step over ``n_topics`` x ``n_words`` coordinates (DRAW_COST_COORDINATES); the
    default minibatch holds at least these, up to BALANCE_MIN_STEPS steps a pass."""
    return n_topics * n_words / (n_gibbs * DRAW_COST_COORDINATES)


def default_batch_size(n_documents, mean_length, epoch=0, root_tokens=BATCH_ROOT_TOKENS,
                       balance=0.0):
    """``batch_size=None``: pass ``epoch`` (0-based, counted along the chain) takes the
    documents of about ``(epoch + 1) * root_tokens * sqrt(T)`` tokens, in the first pass at
    most ``max(T / FIRST_PASS_STEPS, FIRST_PASS_MIN_TOKENS)``, then at least ``max(min(balance,
    T / BALANCE_MIN_STEPS), MIN_BATCH_TOKENS)`` and at most BATCH_TOKENS, where T = D x
    ``mean_length`` (tokens a document, floored at 1) and ``balance`` is the model's
    ``balance_tokens`` (0: none); at most ``ceil(D / STEPS_PER_PASS)`` documents, at least
    MIN_BATCH. ``root_tokens`` other than BATCH_ROOT_TOKENS is for benchmarks that vary the
    rule."""
    mean_length = max(float(mean_length), 1.0)
    total = n_documents * mean_length
    tokens = (epoch + 1) * root_tokens * math.sqrt(total)
    if epoch == 0:
        tokens = min(tokens, max(total / FIRST_PASS_STEPS, FIRST_PASS_MIN_TOKENS))
    floor = max(min(balance, total / BALANCE_MIN_STEPS), MIN_BATCH_TOKENS)
    tokens = min(max(tokens, floor), BATCH_TOKENS)
    per_pass = -(-n_documents // STEPS_PER_PASS)
    return max(MIN_BATCH, min(per_pass, math.ceil(tokens / mean_length)))


def resolve_params(params):
    """The values of the parameters ``params`` (``LDA.get_params()``, validated) that need no
    data: a dict of ``alpha``, ``beta``, ``step_size``, ``step_offset``, ``step_decay``,
    ``gibbs_burn_in`` (each None replaced by its default) and ``learn_alpha`` (None, "symmetric"
    or "per_topic"). SCIR's default step_decay is SMALL_BETA_STEP_DECAY when beta <= SMALL_BETA."""
    def value(name, default):
        return default if params[name] is None else params[name]

    beta = float(value("topic_word_prior", TOPIC_WORD_PRIOR))
    schedule = dict(SAMPLER_DEFAULTS[params["sampler"]])
    if params["sampler"] == "scir" and beta <= SMALL_BETA:
        schedule["step_decay"] = SMALL_BETA_STEP_DECAY
    learn = params["learn_doc_topic_prior"]
    return dict(
        alpha=float(value("doc_topic_prior", DOC_TOPIC_PRIOR)),
        beta=beta,
        **{name: float(value(name, schedule[name])) for name in schedule},
        gibbs_burn_in=int(value("gibbs_burn_in",
                                min(DEFAULT_SWEEP_BURN_IN, params["n_gibbs"] // 2))),
        learn_alpha=_LEARN_ALPHA[bool(learn) if not isinstance(learn, str) else learn])


class FitLength(NamedTuple):
    """The plan of one ``fit`` (``fit_length``): ``batch_sizes[p]`` documents a minibatch and
    ``pass_steps[p]`` steps in its pass p (0-based), the last entry standing for every later
    pass (the default minibatch stops growing within MAX_PASSES passes: its caps bind by about
    the 30th), ``passes`` passes at most and ``min_passes`` before the convergence check may
    stop it."""
    batch_sizes: tuple
    pass_steps: tuple
    passes: int
    min_passes: int

    def batch_size(self, p):
        """Documents a minibatch in pass p."""
        return self.batch_sizes[min(p, len(self.batch_sizes) - 1)]

    def steps(self, p):
        """Steps of pass p."""
        return self.pass_steps[min(p, len(self.pass_steps) - 1)]

    def largest_batch(self):
        """Documents of the largest minibatch of the ``passes`` passes."""
        return max(self.batch_sizes[:self.passes])

    def steps_from(self, p):
        """Steps of passes p, ..., ``passes`` - 1."""
        later = max(0, self.passes - max(p, len(self.pass_steps)))
        return sum(self.pass_steps[p:self.passes]) + later * self.pass_steps[-1]


def fit_length(batch_size, max_iter, tol, n_documents, total_samples, mean_length, *,
               n_topics, n_words, n_gibbs, first_epoch=0):
    """The ``FitLength`` of a fit from ``batch_size`` and ``max_iter`` (None: the defaults),
    ``tol``, and the corpus: ``n_documents`` (None: a stream without len()), its size D
    ``total_samples``, ``mean_length`` (a callable giving its mean document length in tokens,
    called only when ``batch_size`` is None); the model's ``n_topics``, ``n_words`` and
    ``n_gibbs``, which the default minibatch's floor follows (``balance_tokens``);
    ``first_epoch``: the chain's passes before this fit, which the default minibatch grows
    with."""
    if batch_size:
        batch_sizes = (batch_size,)
    else:
        length = mean_length()
        balance = balance_tokens(n_topics, n_words, n_gibbs)
        batch_sizes = tuple(default_batch_size(total_samples, length, first_epoch + p,
                                               balance=balance)
                            for p in range(MAX_PASSES))
    pass_steps = tuple(-(-(n_documents or total_samples) // b) for b in batch_sizes)
    plan = FitLength(batch_sizes, pass_steps, MAX_PASSES, 0)
    min_passes = default_passes([plan.steps(p) for p in range(MAX_PASSES)])
    passes = max_iter or (MAX_PASSES if tol is not None else min_passes)
    return plan._replace(passes=passes, min_passes=0 if max_iter else min_passes)
