"""Which steps should SCIRLDA's posterior mean average? Windows of the chain compared on the
same fits, by held-out perplexity, after 5, 10 and 20 passes.

A fit of unknown length (``max_time``, ``tol``, an interruption) must hold an average at every
step, so the window is a rule of the steps taken so far, T (``simplexsg.averaging``). This
scores such rules on the study's corpora, grid and evaluator (``harness.study``: K
20-200 by corpus size, alpha 0.1, beta in {0.01, 0.1}, document completion with the fixed-point
fold-in), one thread. Each row is one default fit that keeps every step's topics
(``burn_in=0, n_topic_samples`` = its steps: the same chain as the defaults, the window does not
move it); a rule's perplexity after T steps is that of the mean of the kept topics of the steps
it averages. Rules (``RULES``):

* ``default``: the package's rule (``TailAverage(None)``);
* ``doubling``: blocks [0, 1), [1, 2), [2, 4), [4, 8), ...; the last completed one and the one
  in progress (the default until 2026-11-25: it discards a quarter to a half of the chain);
* ``growth1.25``: the same with blocks that grow by a quarter;
* ``half``, ``quarter``, ``fifth``: the last half, quarter, fifth of the T steps (a fit that
  knows T);
* ``last``: the step's own sample, no average;
* ``poly4``, ``poly8``: every step t < T weighted by (t + 1)^eta, eta = 4, 8 (polynomial-decay
  averaging, Shamir & Zhang 2013: one running sum, no window, whenever the chain stops; its
  weights have the effective sample size of a uniform window of (2 eta + 1) / (eta + 1)^2 of
  the steps, 0.36 T and 0.21 T, their mean lag T / (eta + 2)).

The kept topics (``--kept``) are the steps' samples (``theta``: drawn from the state,
normalised, as ``n_topic_samples`` keeps them), or the topics the local step used (``local``:
what ``components_`` averages; with ``local_topics="mean"`` their conditional means, less
noisy), recorded as the global step returns them. With ``theta`` the end of the fit is also
compared exactly: the default's ``components_`` against those of a fit with ``burn_in`` set
where the doubling rule's average starts (the same chain; three fits a row in all). Reported:
per rule and pass count, the median, smallest and largest ratio to ``doubling`` over the rows,
and how many rows it makes more than 1% worse or better; the same for the exact
``components_``.

    SIMPLEXSG_DATA=/path/to/data python benchmarks/lda_averaging.py --corpora tuning \\
        --kept local --out benchmarks/results/lda_averaging_tuning.json
    python benchmarks/lda_averaging.py --summary-only benchmarks/results/lda_averaging*.json
"""
import json
from unittest import mock

import numpy as np

from simplexsg import SCIRLDA
from simplexsg.averaging import TailAverage
from simplexsg.lda import global_step
from simplexsg.lda.defaults import DEFAULT_SWEEPS, fit_length

from harness import cli
from harness.study import (ALPHA, QUICK, add_grid_options, print_ratio_summary, ratio_summary,
                           study_grid)

PASSES = (5, 10, 20)
BASELINE = "doubling"


def blocks_start(T, grow):
    """First step of the average of the last completed block and the one in progress after T
    steps (0, ..., T - 1), the blocks ending at 1, grow(1), grow(grow(1)), ..."""
    previous, start, end = 0, 0, 1            # the block in progress: [start, end)
    while end <= T - 1:
        previous, start, end = start, end, grow(end)
    return previous


def default_start(T):
    """The package's rule: where ``TailAverage(None)``'s average starts after T steps."""
    average = TailAverage(None)
    for t in range(T):
        average.open(t)
        average.record(0.0)
    return average.start


RULES = {
    "default": default_start,
    "doubling": lambda T: blocks_start(T, lambda e: 2 * e),
    "growth1.25": lambda T: blocks_start(T, lambda e: e + max(1, -(-e // 4))),
    "half": lambda T: T // 2,
    "quarter": lambda T: T - T // 4,
    "fifth": lambda T: T - T // 5,
    "last": lambda T: T - 1,
}
#: Weighted rules: name -> eta of the weights (t + 1)^eta of the steps t < T.
POLYNOMIAL_RULES = {"poly4": 4, "poly8": 8}


def rule_averages(kept):
    """Rule name -> the average of the steps' topics ``kept`` (T, K, W) under that rule
    (``RULES`` and ``POLYNOMIAL_RULES``), float64."""
    T = len(kept)
    averages = {rule: kept[start(T):].mean(axis=0, dtype=np.float64)
                for rule, start in RULES.items()}
    for rule, eta in POLYNOMIAL_RULES.items():
        weights = np.arange(1.0, T + 1) ** eta
        averages[rule] = np.tensordot(weights / weights.sum(), kept, axes=1)
    return averages


def local_topics(fit):
    """The topics each global step of ``fit()`` hands to the next local step, float32."""
    kept = []

    def recording(*args, **kwargs):
        result = global_step.step_topics(*args, **kwargs)
        kept.append(result.local.astype(np.float32))
        return result

    with mock.patch("simplexsg.lda.training.step_topics", recording):
        fit()
    return np.stack(kept)


def score_windows(X, K, beta, seed, score, kept="theta"):
    """One default fit keeping every step's topics (``kept``: "theta" or "local", the module
    docstring): the rules' perplexities after PASSES (keyed by the pass count as a string, as
    in the JSON); with "theta", the exact ``components_`` at the end of two more fits of the
    same chain: the defaults', and one with ``burn_in`` where the doubling rule's average
    starts."""
    length = fit_length(None, None, None, X.shape[0], X.shape[0], lambda: X.sum() / X.shape[0],
                        n_topics=K, n_words=X.shape[1], n_gibbs=DEFAULT_SWEEPS)
    pass_steps = [length.steps(p) for p in range(length.passes)]
    steps = length.steps_from(0)

    def fit(**settings):
        return SCIRLDA(n_components=K, doc_topic_prior=ALPHA, topic_word_prior=beta,
                       random_state=seed, n_jobs=1, **settings).fit(X)

    if kept == "local":
        samples = local_topics(fit)
        assert len(samples) == steps
        row = dict(pass_steps=pass_steps, perplexity={})
    else:
        model = fit(burn_in=0, n_topic_samples=steps)
        samples = model.topic_samples_
        assert len(samples) == steps and list(model.topic_sample_steps_) == list(range(steps))
        row = dict(pass_steps=pass_steps, perplexity={}, components={
            "default": float(score(fit().components_, ALPHA)),
            BASELINE: float(score(fit(burn_in=RULES[BASELINE](steps)).components_, ALPHA))})
    for passes in PASSES:
        T = sum(pass_steps[:passes])
        if passes <= len(pass_steps):
            row["perplexity"][str(passes)] = {
                rule: float(score(topics, ALPHA))
                for rule, topics in rule_averages(samples[:T]).items()}
    return row


def summarise(rows):
    """Per pass count and rule: ratios to the BASELINE rule's perplexity over the rows; and
    the exact ``components_`` of the default over the BASELINE's at the end of the fit."""
    summary = {}
    for passes in PASSES:
        cells = [r["perplexity"][str(passes)] for r in rows if str(passes) in r["perplexity"]]
        for rule in [*RULES, *POLYNOMIAL_RULES]:
            if cells and rule in cells[0]:
                summary[f"{rule} after {passes}"] = ratio_summary(
                    [c[rule] / c[BASELINE] for c in cells])
    if rows and all("components" in r for r in rows):
        summary["default, components_"] = ratio_summary(
            [r["components"]["default"] / r["components"][BASELINE] for r in rows])
    return summary


def main():
    parser = cli.Parser(__file__, __doc__, quick=QUICK, seeds=1, data=True, summary_only=True)
    add_grid_options(parser, ["tuning"])
    parser.add_argument("--kept", choices=["theta", "local"], default="theta",
                        help="the steps' topics the rules average (module docstring)")
    args = parser.parse_args()
    if args.summary_only:
        rows = [row for run in cli.read_results(args.summary_only) for row in run["rows"]]
        print_ratio_summary(summarise(rows), "rule, passes")
        return
    results = dict(settings=vars(args), baseline=BASELINE, corpora={}, skipped={}, rows=[],
                   summary={})
    for name, X_train, score, K, beta, seed in study_grid(args, results):
        row = dict(corpus=name, K=K, beta=beta, seed=seed,
                   **score_windows(X_train, K, beta, seed, score, args.kept))
        results["rows"].append(row)
        print(json.dumps(row), flush=True)
        results["summary"] = summarise(results["rows"])
        cli.write_results(results, args.out)
    print_ratio_summary(results["summary"], "rule, passes")


if __name__ == "__main__":
    main()
