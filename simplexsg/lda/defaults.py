"""Defaults of the LDA estimator and the measurements behind them."""

#: Step-size schedule defaults per sampler, h_t = step_size (1 + t / step_offset)^-step_decay.
#: SCIR: the SCIR paper's offset and decay for LDA, with step 2.0 instead of its 0.5.
#: Bundled corpus, K = 20, alpha 0.1, 3 seeds, medians (Gibbs fold-in perplexity; tomotopy
#: 3962 / 3589): step 0.5 -> 4050 (beta 0.01) / 3616 (beta 0.1); 1.0 -> 3895 / 3540;
#: 2.0 -> 3833 / 3461; 4.0 -> 3778 / 3442. Larger steps forget the previous state faster (the
#: chain averages fewer minibatches); 2.0 takes most of the gain and keeps e^-h_t >= 0.13 at
#: t >= 0 and ~0.5 after 200 steps. Checked again on the study's corpora
#: (benchmarks/lda_levers.py, paired by corpus, K, beta and seed): step 4.0 gives a median
#: 0.996 of the perplexity on the tuning corpora but 1.005 on the held-out ones, up to 7% worse
#: on the smallest (lee, reuters), where a minibatch's counts are sparse; 2.0 stays.
#: SGRLD: Patterson & Teh's offset and decay; their step 0.01 gives 4392 on the bundled
#: corpus, 0.1 gives 3891 (best of 0.001, 0.01, 0.05, 0.1, 0.3 at alpha = beta = 0.1).
#: Smallest step_size accepted: SCIR draws a Poisson of rate theta e^-h / (1 - e^-h), about
#: theta / h, which must stay far below numpy's limit (~9e18) for theta up to ~1e9 (a word's
#: count scaled by D / batch); the global step checks the rate itself too.
MIN_STEP_SIZE = 1e-8
SAMPLER_DEFAULTS = {
    "scir": dict(step_size=2.0, step_offset=10.0, step_decay=0.33),
    "sgrld": dict(step_size=0.1, step_offset=1000.0, step_decay=0.6),
}

#: Defaults of the training schedule, chosen on the tuning corpora of ``benchmarks/lda_study.py``
#: (news, fortunes, the bundled Wikipedia sample, a synthetic Zipf corpus; K 20-200, beta 0.01
#: and 0.1) and checked on the others; the study table of the LDA benchmarks page
#: (docs/benchmarks/lda.rst) has the results.
#: What the study showed:
#:
#: * passes over the corpus (local sweeps per token), not steps, set the quality: on news
#:   (K 50) 8 passes give perplexity 2438 whether in 32, 56 or 112 steps, 16 passes 2409;
#: * so minibatches are large, ``ceil(D / STEPS_PER_PASS)`` documents: few global steps,
#:   each O(K V), per pass. A whole-corpus batch mixes badly (fortunes: 2529 against 2404
#:   at D / 3), since the minibatch noise is what lets the topics move;
#: * a few sweeps per visit, more passes: 6 sweeps (2 discarded) for 20 passes beat 10 (5
#:   discarded) for 8 at equal time on every tuning corpus; fewer still does not pay (4 for
#:   30 passes: median 0.998 of the perplexity in 1.28 of the time; 3 for 40: 1.004 in 1.50);
#: * of the 6 sweeps, one is discarded, not two: the sweeps kept (averaged into the counts the
#:   global step sees) set the noise of the topics' gradient, and the sequential start is
#:   already a draw given the earlier tokens. Paired with 2 discarded (same corpus, K, beta,
#:   seed; ``benchmarks/lda_levers.py``, 2026-11-26): 1 discarded (5 kept) gives a median
#:   0.998 of the perplexity on the tuning corpora (0.958-1.012, 48 rows) and 0.992 on the
#:   held-out ones (0.925-1.041, 64 rows; wordnet_glosses 0.979, healthtweets 0.991) at the
#:   same time; keeping 4 of 5 sweeps is as good as 4 of 6 (1.001 tuning, 0.998 held-out) in
#:   0.94-0.97 of the time, while 3 of 4 is worse (1.012) and 4 of 4 too (1.007). More kept
#:   sweeps pay less and cost more: 6 of 7 gives 0.998 in 1.04 of the time, 7 of 8 0.995 in
#:   1.11 (tuning corpora, 44 rows), about what more passes buy;
#: * three steps a pass, not more: ten (``batch_size = ceil(D / 10)``) give a median 1.024 of
#:   the perplexity in 1.85 of the time, 1.027 with the step shrunk so that the topics keep
#:   the minibatch noise of three (``benchmarks/lda_levers.py``, 48 tuning rows), four give
#:   0.999 in 1.14 of the time, five 1.001 in 1.31, five for 16 passes 1.006 in 1.07; and not
#:   fewer: two (40 steps in 20 passes) take 0.83-0.85 of the time for a median 1.004 of the
#:   perplexity on the tuning corpora and 1.002 on the held-out ones, a move along the
#:   time-quality front, not past it: better on the smallest corpora (lee 0.958, reuters
#:   0.973), worse on short documents (healthtweets 1.014, wordnet_glosses 1.016);
#: * the counts take the alpha part's expected topics, not its draws (``rao_blackwell=True``):
#:   the same expectation, less noise where tokens sit alone on their topic (a third of them
#:   on documents of 8-13 tokens). Paired with the plain counts (2 seeds): plain / new
#:   perplexity median 1.001 on the tuning corpora (fortunes 1.007) and 1.009 on the
#:   held-out ones (wordnet_glosses 1.021, reuters 1.014, healthtweets 1.010), for 0.96-1.18
#:   of the time (more where the global step dominates: it spreads the alpha counts);
#: * warm starts of the local chain (``local_warm_start``) do not help: within seed noise and
#:   slightly worse on all three (news 2445 / 2438 cold, fortunes 2452 / 2447, Wikipedia
#:   3518 / 3465 at 8 passes), and with 3 sweeps per visit a warm chain can persist in a worse
#:   mode: the restarted chain decorrelates the counts of successive visits. Re-measured at
#:   the current defaults on short documents, where the visits are most alike (lever ``warm``
#:   of ``benchmarks/lda_levers.py``, paired, 2 seeds, 2026-11-26): fortunes 1.008 of the cold
#:   start's perplexity (16 rows), healthtweets 1.010, wordnet_glosses 1.011 (8 each), at 0.94-0.98
#:   of the time;
#: * 20 passes reach tomotopy's perplexity after 200 iterations on the tuning corpora, most
#:   in less time. No fixed number suits every corpus: on the held-out check, the short
#:   glosses of a dictionary (7.6 tokens a document) need about 40 (K 50, beta 0.01: 3112 after
#:   20 passes, 2783 after 40, tomotopy 2829 after 200 iterations). ``tol=1e-3`` (the
#:   convergence check after the default passes) finds that by itself (56 passes, 2709), but
#:   as a default it would add 25-100% to the time of the tuning corpora for 1-6% of
#:   perplexity, so it is an option. Measured per pass on every study corpus
#:   (``benchmarks/lda_passes.py``, one seed): the passes at which a fit first reaches
#:   tomotopy-200's perplexity run from 4 (lee, synth1e4) to more than 40 (gcide): mostly 4-14 on
#:   the real corpora below 250k tokens, 12-40 and more above; 20 passes leave 43 of 60 rows at
#:   or below it, 30 passes 51, ``tol=1e-3`` after the 20 passes 51 in 1.5 times the time, and
#:   the in-sample check cannot tell when to stop sooner (it follows how fast the chain moves,
#:   not tomotopy-200).
#:
#: ``fit`` with ``max_iter=None`` makes ``max(DEFAULT_PASSES, ceil(MIN_STEPS / steps per
#: pass))`` passes (a corpus of one or two minibatches still takes MIN_STEPS steps), or up to
#: MAX_PASSES when ``tol`` or ``max_time`` decides when to stop.
DEFAULT_PASSES, MIN_STEPS, MAX_PASSES = 20, 60, 100
MIN_BATCH, STEPS_PER_PASS = 50, 3
#: Documents sampled from the training corpus whose completion perplexity the convergence
#: check follows (when no ``X_heldout`` is given): at least ``min(MONITOR_TOKENS,
#: MONITOR_FRACTION * tokens)`` tokens, so that a check costs a small part of a pass.
MONITOR_TOKENS, MONITOR_FRACTION = 20_000, 0.05
#: Default local sweeps per visit, and how many of them are discarded.
DEFAULT_SWEEPS, DEFAULT_SWEEP_BURN_IN = 6, 1

#: Gibbs sweeps (and how many are discarded) of the fold-in behind ``transform``, ``score``
#: and ``perplexity``: more than a training step needs, since a test document has one chance.
FOLD_IN_SWEEPS, FOLD_IN_BURN_IN = 100, 50

#: Gibbs sweeps (discarded) of the cheaper fold-in behind the convergence check.
MONITOR_SWEEPS, MONITOR_BURN_IN = 20, 10


def default_passes(steps_per_pass):
    """``max_iter=None``: ``max(DEFAULT_PASSES, ceil(MIN_STEPS / steps_per_pass))`` passes."""
    return max(DEFAULT_PASSES, -(-MIN_STEPS // steps_per_pass))


#: A streamed corpus's default minibatch is capped at STREAM_MAX_BATCH documents, so that
#: streaming holds a bounded number of documents (the shuffle buffer's pool: SHUFFLE_BATCHES
#: + 2 minibatches) whatever the corpus size. A memory bound, not a tuned value; what it costs
#: was measured on the 99k-document synthetic corpus of benchmarks/lda_study.py (K 50, beta
#: 0.1, 20 passes, UCIBowCorpus): default batch 33k, 60 steps, perplexity 410.6 in 55 s;
#: batch 10k, 200 steps, 410.3 in 59 s; batch 3k, 660 steps, 410.5 in 85 s (more steps pay
#: the O(K V) global step more often).
STREAM_MAX_BATCH = 10_000


def default_batch_size(n_documents, streamed=False):
    """``batch_size=None``: ``max(MIN_BATCH, ceil(D / STEPS_PER_PASS))`` documents, at most
    STREAM_MAX_BATCH for a streamed corpus."""
    size = max(MIN_BATCH, -(-n_documents // STEPS_PER_PASS))
    return min(size, STREAM_MAX_BATCH) if streamed else size


#: ``learn_doc_topic_prior``: the alpha sampler's centre is re-optimised (and the chain moved
#: to it) after each of the first ALPHA_WARMUP_STEPS steps, from the counts stored so far.
ALPHA_WARMUP_STEPS = 5

#: A streamed corpus's default shuffle buffer, in minibatches (``LDA(shuffle_buffer=None)``).
SHUFFLE_BATCHES = 4
