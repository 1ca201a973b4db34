"""Paired checks of SCIRLDA's training defaults: each lever (a set of overrides) against the
defaults on the same corpus, K, beta and seed, by held-out perplexity and training time.

``lda_study.py`` compares the defaults with the peers; this asks whether another setting of
ours would have been better, on the study's corpora (``--corpora tuning`` by default: the ones
the defaults may be chosen on), its grid of K and beta (``harness.study.K_SMALL`` / ``K_LARGE``
by corpus size, beta in {0.01, 0.1}, alpha 0.1) and its evaluator (document completion with
the fixed-point fold-in). Everything runs on one thread. Levers (``LEVERS``):

* ``step4``, ``step8``: SCIR step size 4 or 8 at the default decay (the default is itself 4.0,
  so ``step4`` repeats it; before 2026-12-02 it was 2.0 at beta above 0.01): the topics
  forget the previous minibatches faster (e^-h = 0.02, 3e-4);
* ``sweeps4x30``, ``sweeps3x40``: fewer local sweeps per visit and more passes, about the
  same number of sweeps per token as the default 6 x 20;
* ``sweeps5b1``, ``sweeps4b1``, ``sweeps4b0``: fewer sweeps per visit at the default 20
  passes, with less burn-in: 5 (1 discarded), 4 (1 discarded), 4 (none discarded; the
  sequential start is itself a draw given the earlier tokens); ``sweeps6b2``: 6 (2
  discarded), the default until 2026-11-26 (6 with 1 discarded since; the runs of the LDA
  benchmarks page compare the others with it); ``sweeps7b1``, ``sweeps8b1``: 7 or 8 (1
  discarded), more sweeps kept at more cost;
* ``batch2``: two steps a pass (``batch_size = ceil(D / 2)``), 20 passes: 40 global steps
  instead of 60; ``batch4``, ``batch5``: four or five steps a pass (80 or 100 steps);
  ``batch5x16``: five steps a pass for 16 passes (80 steps, fewer local sweeps);
* ``warm``: each document's local chain starts from its assignments at its last visit
  (``local_warm_start=True``) instead of the sequential start;
* ``plain_counts``: the local step's plain counts of the draws (``rao_blackwell=False``, the
  default until 2026-11-26) instead of the alpha part's expected topics;
* ``batch10``: ten steps per pass (``batch_size = ceil(D / 10)``) with the default step;
* ``batch10_matched``: the same with the step shrunk so that the minibatch noise the topics
  carry stays that of the default three steps per pass (``noise_matched``);
* ``constant``: every pass's minibatch the first pass's (about 20 sqrt(T) tokens, the default
  until 2026-12-01) instead of growing with the pass;
* ``root40``, ``root60``, ``root120``: every pass's minibatch of about 40, 60 or 120 sqrt(T)
  tokens (``default_batch_size``'s ``root_tokens``): fewer, less noisy steps at the default
  passes;
* ``decay05``: the SCIR step decaying as t^-0.5 instead of the default's t^-0.33 (beta <=
  0.01; t^-0.6 above): the topics remember more or fewer minibatches late in the fit;
* ``step4_decay06``: step 4.0 decaying as t^-0.6, the default at beta above 0.01 since
  2026-12-02; ``step2_decay033``: the default there before (2.0 decaying as t^-0.33, larger
  after about 120 steps);
* ``no_balance``: the default minibatches without their floor of ``K W / (6 n_gibbs)`` tokens
  (``DRAW_COST_COORDINATES``; the default until 2026-12-01): more, cheaper steps whose time
  goes to the global step on a large vocabulary; ``cost12``: that floor halved
  (``DRAW_COST_COORDINATES`` = 12), for a cheaper global step;
* ``theta_state``: SCIR's global step on theta (``simplexsg.lda.global_step.INTEGRATE_THETA``
  False; the default until 2026-12-02) instead of with theta integrated out: the same law of
  the samples; the local topics are the step's mean given the last draw of theta instead of
  given the gammas' shapes.

Reported per lever: the median, smallest and largest ratio of its perplexity (and time) to the
defaults' over the rows (corpus, K, beta, seed), and how many rows it makes more than 1% worse
or better.

    SIMPLEXSG_DATA=/path/to/data python benchmarks/lda_levers.py --corpora tuning \\
        --out benchmarks/results/lda_levers.json
    python benchmarks/lda_levers.py --summary-only benchmarks/results/lda_levers*.json
"""
import json
import math
import statistics
from unittest import mock

from simplexsg import SCIRLDA
from simplexsg.lda import defaults, global_step
from simplexsg.lda.defaults import SAMPLER_DEFAULTS, STEPS_PER_PASS, default_batch_size

from harness import cli
from harness.measure import timed_fit
from harness.study import (ALPHA, QUICK, add_grid_options, print_ratio_summary, ratio_summary,
                           study_grid)


def noise_matched(steps_per_pass):
    """Step size and offset for ``steps_per_pass`` steps a pass that keep the default's noise.

    A step's counts are scaled by D / batch = S (steps per pass), so the minibatch noise they
    add to the topics has variance proportional to S, and the SCIR step (an AR(1) with
    coefficient e^-h over steps) keeps a fraction (1 - e^-h) / (1 + e^-h) = tanh(h / 2) of it:
    S tanh(h / 2) is held at the value of three steps a pass with ``SAMPLER_DEFAULTS``' step
    (S = 3, h = 2; the default at beta > 0.01), and the offset is scaled so that the schedule
    decays over the same number of passes."""
    scir = SAMPLER_DEFAULTS["scir"]
    ratio = STEPS_PER_PASS / steps_per_pass * math.tanh(scir["step_size"] / 2)
    return dict(step_size=2 * math.atanh(ratio),
                step_offset=scir["step_offset"] * steps_per_pass / STEPS_PER_PASS)


#: name -> overrides of the defaults; "steps_per_pass" S sets batch_size = ceil(D / S).
LEVERS = {
    "step4": dict(step_size=4.0),
    "step8": dict(step_size=8.0),
    "sweeps4x30": dict(n_gibbs=4, gibbs_burn_in=1, max_iter=30),
    "sweeps3x40": dict(n_gibbs=3, gibbs_burn_in=1, max_iter=40),
    "sweeps5b1": dict(n_gibbs=5, gibbs_burn_in=1),
    "sweeps4b1": dict(n_gibbs=4, gibbs_burn_in=1),
    "sweeps4b0": dict(n_gibbs=4, gibbs_burn_in=0),
    "sweeps6b2": dict(n_gibbs=6, gibbs_burn_in=2),
    "sweeps7b1": dict(n_gibbs=7, gibbs_burn_in=1),
    "sweeps8b1": dict(n_gibbs=8, gibbs_burn_in=1),
    "batch2": dict(steps_per_pass=2, max_iter=20),
    "batch4": dict(steps_per_pass=4),
    "batch5": dict(steps_per_pass=5),
    "batch5x16": dict(steps_per_pass=5, max_iter=16),
    "warm": dict(local_warm_start=True),
    "plain_counts": dict(rao_blackwell=False),
    "batch10": dict(steps_per_pass=10),
    "batch10_matched": dict(steps_per_pass=10, **noise_matched(10)),
    "constant": dict(batch_root_tokens=20),
    "root40": dict(batch_root_tokens=40),
    "root60": dict(batch_root_tokens=60),
    "root120": dict(batch_root_tokens=120),
    "decay05": dict(step_decay=0.5),
    "step4_decay06": dict(step_size=4.0, step_decay=0.6),
    "step2_decay033": dict(step_size=2.0, step_decay=0.33),
    "no_balance": dict(draw_cost_coordinates=math.inf),
    "cost12": dict(draw_cost_coordinates=12),
    "theta_state": dict(integrate_theta=False),
}
#: The levers of the short form (``--quick``).
QUICK_LEVERS = ["step4", "batch2", "warm"]


def fit_and_score(overrides, X, K, beta, seed, score):
    """(perplexity, training seconds) of ``SCIRLDA`` with the defaults plus ``overrides``."""
    settings = dict(overrides)
    steps = settings.pop("steps_per_pass", None)
    if steps is not None:
        settings["batch_size"] = -(-X.shape[0] // steps)
    root_tokens = settings.pop("batch_root_tokens", None)
    if root_tokens is not None:
        settings["batch_size"] = default_batch_size(X.shape[0], X.sum() / X.shape[0],
                                                    root_tokens=root_tokens)
    cost = settings.pop("draw_cost_coordinates", defaults.DRAW_COST_COORDINATES)
    integrate = settings.pop("integrate_theta", global_step.INTEGRATE_THETA)
    with mock.patch.object(defaults, "DRAW_COST_COORDINATES", cost), \
            mock.patch.object(global_step, "INTEGRATE_THETA", integrate):
        model, seconds = timed_fit(SCIRLDA(n_components=K, doc_topic_prior=ALPHA,
                                           topic_word_prior=beta, random_state=seed, n_jobs=1,
                                           **settings), X)
    return float(score(model.components_, ALPHA)), seconds


def paired_with(row):
    """The fit a row is compared with: same corpus, K, beta and seed."""
    return row["corpus"], row["K"], row["beta"], row["seed"]


def summarise(rows, levers):
    """Per lever: ratios to the defaults' perplexity and time over the paired rows."""
    base = {paired_with(r): r for r in rows if r["lever"] == "default"}
    summary = {}
    for lever in levers:
        pairs = [(r, base[paired_with(r)]) for r in rows
                 if r["lever"] == lever and paired_with(r) in base]
        if pairs:
            summary[lever] = dict(
                ratio_summary([r["perplexity"] / b["perplexity"] for r, b in pairs]),
                time_median=statistics.median([r["seconds"] / b["seconds"] for r, b in pairs]))
    return summary


def main():
    parser = cli.Parser(__file__, __doc__, quick=dict(QUICK, levers=QUICK_LEVERS), seeds=2,
                        data=True, summary_only=True)
    add_grid_options(parser, ["tuning"])
    parser.add_argument("--levers", nargs="+", choices=sorted(LEVERS), default=list(LEVERS))
    args = parser.parse_args()
    if args.summary_only:
        runs = cli.read_results(args.summary_only)
        levers = list(dict.fromkeys(lever for run in runs for lever in run["levers"]))
        print_ratio_summary(summarise([row for run in runs for row in run["rows"]], levers),
                            "lever")
        return
    results = dict(settings=vars(args), levers={name: LEVERS[name] for name in args.levers},
                   corpora={}, skipped={}, rows=[], summary={})
    for name, X_train, score, K, beta, seed in study_grid(args, results):
        for lever in ["default", *args.levers]:
            perplexity, seconds = fit_and_score(LEVERS.get(lever, {}), X_train, K, beta, seed,
                                                score)
            results["rows"].append(dict(corpus=name, K=K, beta=beta, seed=seed, lever=lever,
                                        perplexity=perplexity, seconds=seconds))
            print(json.dumps(results["rows"][-1]), flush=True)
        results["summary"] = summarise(results["rows"], args.levers)
        cli.write_results(results, args.out)
    print_ratio_summary(results["summary"], "lever")


if __name__ == "__main__":
    main()
