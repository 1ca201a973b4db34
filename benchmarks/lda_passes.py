"""How many passes ``SCIRLDA`` needs: per-pass curves of one long fit, against tomotopy after
200 iterations, and stopping rules tried on them.

For each corpus, K, beta and seed of the study's grid (``harness.study``: its corpora, K by
corpus size, alpha 0.1, beta in {0.01, 0.1}, its evaluator), one fit of the defaults with
``max_iter=--passes`` (40) and the convergence check switched on (``tol``) but never obeyed
(``n_iter_no_change`` above the passes): after every pass the check's in-sample perplexity
(``simplexsg.lda.monitor``) and its cost, the training seconds and the seconds spent so far in
the local step (the Gibbs kernel and its counts) and in the global step (every topic row), all
read from the fit's ``monitor_history_`` (``timings_``). At the passes ``--evaluate-at``, the
held-out perplexity of ``components_`` by the study's evaluator: the fit's own at its last
pass, before that a fit of so many passes; the step sizes and the average depend on the step
alone, so that is the long fit's ``components_`` after so many passes (bit for bit). tomotopy
(200 iterations, one worker, same alpha and beta and seed) is the reference, as in the study;
its perplexity after 100 iterations (half its time) is recorded too.

Summaries, each over the rows (corpus, K, beta, seed): *reach*, the first evaluated pass at or
below tomotopy-200's perplexity and its time over tomotopy-200's, and the passes made within
half of tomotopy-200's time with the perplexity there over tomotopy-200's (interpolated between
evaluated passes); *fixed*, what p passes give (perplexity and time over tomotopy-200's: rows
at or below its perplexity, rows also within half its time); *rules*, the same for the stopping
rule ``simplexsg.stopping.Plateau(tol, patience)`` applied to the recorded in-sample scores from
a first pass on (the time of a rule includes its checks); *costs*, per corpus and K, what a
token draw of the local step costs (seconds over the tokens times the draws per pass, the
sequential start and the sweeps), what a coordinate of the global step costs (over steps times
K times W), and what a token of a tomotopy iteration costs, in nanoseconds. One core.

    SIMPLEXSG_DATA=/path/to/data python benchmarks/lda_passes.py --corpora all \\
        --out benchmarks/results/lda_passes.json
    python benchmarks/lda_passes.py --summary-only benchmarks/results/lda_passes*.json
"""
import statistics

import numpy as np

from simplexsg import SCIRLDA
from simplexsg.stopping import Plateau

from harness import cli, peers
from harness.corpora import LDA_GROUPS
from harness.study import ALPHA, QUICK, add_grid_options, study_grid

PASSES = 40
EVALUATE_AT = (4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 34, 40)
FIXED = (8, 12, 16, 20, 30, 40)
#: (tol, patience, first pass the rule may stop at)
RULES = [(tol, patience, first) for first in (6, 20) for tol in (1e-3, 2e-3, 5e-3)
         for patience in (2, 3)]


def pass_curve(X, K, beta, seed, score, passes, evaluate_at):
    """The per-pass records of one fit of the defaults with ``max_iter=passes`` (passes,
    training seconds, the seconds of the local and of the global steps so far, in-sample
    perplexity, seconds of the check, and at the passes of the set ``evaluate_at`` the
    held-out perplexity by ``score``), and the fit's draws per token per pass (the sequential
    start and the sweeps) and steps."""
    params = dict(n_components=K, doc_topic_prior=ALPHA, topic_word_prior=beta,
                  random_state=seed, n_jobs=1)
    model = SCIRLDA(max_iter=passes, tol=1e-3, n_iter_no_change=passes + 1, **params).fit(X)
    records = [dict(passes=p, seconds=entry["seconds"], local_seconds=entry["timings"]["local"],
                    global_seconds=entry["timings"]["global"], monitor=entry["perplexity"],
                    check_seconds=entry["check_seconds"])
               for p, entry in enumerate(model.monitor_history_, start=1)]
    for p in evaluate_at:
        fit = model if p == passes else SCIRLDA(max_iter=p, **params).fit(X)
        records[p - 1]["heldout"] = float(score(fit.components_, ALPHA))
    return records, dict(draws_per_pass=model.n_gibbs + 1, steps=model.n_batch_iter_)


# ---------------------------------------------------------------------------- summaries
def heldout_at(row, p):
    """Held-out perplexity after p passes, interpolated linearly between evaluated passes."""
    evaluated = [(r["passes"], r["heldout"]) for r in row["records"] if "heldout" in r]
    return float(np.interp(p, *zip(*evaluated)))


def seconds_at(row, p, checks):
    """Training seconds of the first p passes, plus the checks' when ``checks``."""
    records = row["records"][:p]
    return records[-1]["seconds"] + (sum(r["check_seconds"] for r in records) if checks else 0)


def plateau_stop(row, tol, patience, first):
    """The pass at which ``Plateau(tol, patience)`` on the in-sample scores stops the fit (not
    before ``first``), or the last pass."""
    plateau = Plateau(tol, patience)
    for record in row["records"]:
        if plateau.update(record["monitor"]) and record["passes"] >= first:
            return record["passes"]
    return row["records"][-1]["passes"]


def outcome(rows, stop, checks):
    """Ratios to tomotopy-200 when each row stops at ``stop(row)`` passes."""
    stops = [(r, stop(r)) for r in rows]
    ratios = [(heldout_at(r, p) / r["tomotopy200"]["perplexity"],
               seconds_at(r, p, checks) / r["tomotopy200"]["seconds"]) for r, p in stops]
    return dict(rows=len(ratios), at_or_below=sum(p <= 1 for p, _ in ratios),
                both=sum(p <= 1 and t <= 0.5 for p, t in ratios),
                perplexity_median=statistics.median(p for p, _ in ratios),
                perplexity_max=max(p for p, _ in ratios),
                time_median=statistics.median(t for _, t in ratios))


def reach(row):
    """First evaluated pass at or below tomotopy-200's perplexity, and its time ratio."""
    for record in row["records"]:
        if "heldout" in record and record["heldout"] <= row["tomotopy200"]["perplexity"]:
            return record["passes"], seconds_at(row, record["passes"], False) / row[
                "tomotopy200"]["seconds"]
    return None, None


def summarise(rows):
    recorded = min(len(r["records"]) for r in rows)
    groups = {"all": rows, **{g: [r for r in rows if r["corpus"] in LDA_GROUPS[g]]
                                  for g in LDA_GROUPS}}
    groups = {g: rs for g, rs in groups.items() if rs}
    summary = {"fixed": {}, "rules": {}, "reach": {}, "costs": costs(rows)}
    for p in [p for p in FIXED if p <= recorded]:
        summary["fixed"][p] = {g: outcome(rs, lambda r, p=p: p, False) for g, rs in groups.items()}
    for tol, patience, first in RULES:
        summary["rules"][f"tol {tol:g}, patience {patience}, from pass {first}"] = {
            g: outcome(rs, lambda r: plateau_stop(r, tol, patience, first), True)
            for g, rs in groups.items()}
    for corpus in dict.fromkeys(r["corpus"] for r in rows):
        corpus_rows = [r for r in rows if r["corpus"] == corpus]
        found, half = [reach(r) for r in corpus_rows], [at_half_time(r) for r in corpus_rows]
        summary["reach"][corpus] = dict(
            passes=[p for p, _ in found], time=[t and round(t, 2) for _, t in found],
            half_time_passes=[p for p, _ in half],
            half_time_perplexity=[q and round(q, 3) for _, q in half])
    return summary


def at_half_time(row):
    """The passes made within half of tomotopy-200's time (training seconds), and the
    held-out perplexity there over tomotopy-200's (None when not even the first evaluated
    pass fits)."""
    budget = row["tomotopy200"]["seconds"] / 2
    passes = sum(r["seconds"] <= budget for r in row["records"])
    first = min(r["passes"] for r in row["records"] if "heldout" in r)
    if passes < first:
        return passes, None
    return passes, heldout_at(row, passes) / row["tomotopy200"]["perplexity"]


def costs(rows):
    """Per corpus and K, medians over beta and seed (rows with the step timings only): ns per
    token draw of the local step, per coordinate of the global step, per token of a tomotopy
    iteration; the local and global steps' shares of the training seconds; tomotopy's
    perplexity after 100 iterations over its perplexity after 200."""
    table = {}
    for row in rows:
        if "local_seconds" not in row["records"][-1] or "tomotopy100" not in row:
            continue
        last, t200 = row["records"][-1], row["tomotopy200"]
        table.setdefault(f"{row['corpus']} K {row['K']}", []).append(dict(
            local_ns=1e9 * last["local_seconds"] / (
                last["passes"] * row["tokens"] * row["draws_per_pass"]),
            global_ns=1e9 * last["global_seconds"] / (row["steps"] * row["K"] * row["W"]),
            tomotopy_ns=1e9 * t200["seconds"] / (200 * row["tokens"]),
            local_share=last["local_seconds"] / last["seconds"],
            global_share=last["global_seconds"] / last["seconds"],
            tomotopy_half=row["tomotopy100"]["perplexity"] / t200["perplexity"]))
    return {name: {key: statistics.median(e[key] for e in entries) for key in entries[0]}
            for name, entries in table.items()}


def print_summary(summary):
    print("passes at which the perplexity first reaches tomotopy-200's, and the time there:")
    for corpus, found in summary["reach"].items():
        print(f"  {corpus:<16} passes {found['passes']}  time / tomotopy-200 {found['time']}")
        print(f"  {'':<16} within half its time: passes {found['half_time_passes']}, "
              f"perplexity / tomotopy-200 {found['half_time_perplexity']}")
    if summary["costs"]:
        print(f"{'costs (medians)':<22}{'local ns':>9}{'global ns':>10}{'tomotopy ns':>12}"
              f"{'local':>7}{'global':>7}{'t100/t200':>10}")
        for name, c in summary["costs"].items():
            print(f"  {name:<20}{c['local_ns']:>9.0f}{c['global_ns']:>10.1f}"
                  f"{c['tomotopy_ns']:>12.0f}{c['local_share']:>7.2f}{c['global_share']:>7.2f}"
                  f"{c['tomotopy_half']:>10.3f}")
    print(f"{'':<38}{'group':<8}{'rows':>5}{'<= t200':>8}{'both':>6}{'median':>8}{'max':>7}"
          f"{'time':>6}")
    named = [(f"{p} passes", groups) for p, groups in summary["fixed"].items()]
    for name, groups in named + list(summary["rules"].items()):
        for group, o in groups.items():
            print(f"{name:<38}{group:<8}{o['rows']:>5}{o['at_or_below']:>8}{o['both']:>6}"
                  f"{o['perplexity_median']:>8.3f}{o['perplexity_max']:>7.3f}"
                  f"{o['time_median']:>6.2f}")
            name = ""


def main():
    parser = cli.Parser(__file__, __doc__, quick=dict(QUICK, passes=10,
                                                      evaluate_at=[4, 6, 8, 10]),
                        seeds=1, data=True, summary_only=True)
    add_grid_options(parser, ["tuning"])
    parser.add_argument("--passes", type=int, default=PASSES)
    parser.add_argument("--evaluate-at", type=int, nargs="+", default=list(EVALUATE_AT))
    args = parser.parse_args()
    if args.summary_only:
        rows = [row for run in cli.read_results(args.summary_only) for row in run["rows"]]
        print_summary(summarise(rows))
        return
    evaluate_at = {p for p in args.evaluate_at if p <= args.passes} | {args.passes}
    results = dict(settings=vars(args), corpora={}, skipped={}, rows=[], summary={})
    for name, X_train, score, K, beta, seed in study_grid(args, results):
        records, fit_info = pass_curve(X_train, K, beta, seed, score, args.passes, evaluate_at)
        tomotopy = {f"tomotopy{iterations}": {"perplexity": float(score(fit.topics, fit.alpha)),
                                              "seconds": fit.seconds}
                    for iterations, fit in peers.tomotopy_curve(X_train, K, ALPHA, beta, seed,
                                                                (100, 200))}
        results["rows"].append(dict(
            corpus=name, K=K, beta=beta, seed=seed, records=records, **fit_info,
            tokens=results["corpora"][name]["train_tokens"], W=results["corpora"][name]["W"],
            **tomotopy))
        passes = reach(results["rows"][-1])[0]
        print(f"{name} K={K} beta={beta} seed={seed}: reaches tomotopy-200 after {passes} "
              "passes", flush=True)
        results["summary"] = summarise(results["rows"])
        cli.write_results(results, args.out)
    print_summary(results["summary"])


if __name__ == "__main__":
    main()
