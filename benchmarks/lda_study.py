"""Held-out perplexity against training time of SCIR-LDA and SGRLD-LDA at their defaults and of
peer LDA implementations, on several corpora: the check behind the estimators' defaults.

Corpora (each a train/test pair of count matrices): the six of ``$SIMPLEXSG_DATA/corpora``
(``--data``; a seeded permutation, seed 0, puts ``min(1000, D // 10)`` documents in the test
set), ``wiki`` (``load_wiki_sample()``), ``lee`` (gensim's lee_background.cor vectorised),
``reuters`` (``lda.datasets.load_reuters()``) and ``synth1e4`` / ``synth1e5`` (LDA corpora with
Zipf word frequencies, ``harness.corpora``; their statistics record the perplexity of the true
topics and of the unigram model, ``synthetic_references``). TUNING corpora choose the
defaults, HELDOUT ones check them. Grid: K in {20, 50, 100, 200} (only {50, 100} above 300k
training tokens), alpha = 0.1, beta in {0.01, 0.1}, 2 seeds.

Methods, all single-threaded, each a curve of (training seconds, perplexity) checkpoints:
``scir`` / ``sgrld`` (``SCIRLDA`` / ``SGRLDLDA`` defaults plus ``--scir-params`` /
``--sgrld-params``; one checkpoint, and for scir one before it per ``--scir-passes`` value:
a fit of that many passes, which is the default fit's state after them), ``tomotopy`` (after
10, 25, 50, 100, 150, 200 iterations), ``gensim`` (online VB, chunks of 2000, a checkpoint per
``update`` pass) and ``sklearn`` (online VB, batches of 128, a ``partial_fit`` pass per
checkpoint), the peers' runners of ``harness.peers``. The VB peers stop after 10 passes, or
once past ``--peer-time-factor`` times the slower of scir and sgrld (same corpus, K, beta, seed),
or 300 s. One evaluator for every model (``harness.evaluation.EVALUATION_FIXED_POINT``).
Ratios of scir (and sgrld) perplexity to tomotopy's after 200 iterations and to each peer's at
equal time, and ("reach") the time of scir's first checkpoint at or below tomotopy-200's
perplexity over tomotopy-200's time; medians over seeds.

    SIMPLEXSG_DATA=/path/to/data python benchmarks/lda_study.py --corpora tuning \\
        --out benchmarks/results/lda_study.json
    python benchmarks/lda_study.py --summary-only benchmarks/results/lda_study*.json
"""
import json
from functools import partial

import numpy as np
from threadpoolctl import threadpool_limits

from simplexsg import SCIRLDA, SGRLDLDA
from simplexsg._optional import pyplot

from harness import cli, peers
from harness.corpora import LDA_GROUPS, lda_corpus_names, lda_group_of
from harness.evaluation import EVALUATION_FIXED_POINT
from harness.measure import timed_fit
from harness.study import ALPHA, add_grid_options, study_corpora

SEEDS = 2
TOMOTOPY_ITERATIONS, MAX_PASSES, PEER_MAX_SECONDS = (10, 25, 50, 100, 150, 200), 10, 300.0
QUICK = dict(K=[20], betas=[0.1], seeds=1, tomotopy_iterations=[50, 200], max_passes=2,
             corpora=["wiki", "reuters", "parlspeech_en", "fortunes"])
SIMPLEXSG_INFO = ("n_batch_iter_", "batch_size_", "n_iter_", "stop_reason_")
OURS, PEERS = ("scir", "sgrld"), ("tomotopy", "gensim", "sklearn")
RATIOS = ("ratio_tomotopy200", "time_ratio_tomotopy200", "reach_ratio_tomotopy200",
          "ratio_tomotopy_equal_time",
          "ratio_gensim_equal_time", "ratio_sklearn_equal_time")


# ------------------------------------------------------------------------------------ methods
# A method is ``fit(X_train, K, beta, seed, score, time_limit) -> [checkpoint, ...]`` (its own
# settings bound by ``make_methods``); score is the study's evaluator
# ``perplexity(topics, alpha)``; only the VB peers heed time_limit.
def checkpoint(seconds, perplexity, info):
    return {"seconds": seconds, "perplexity": float(perplexity), "info": info}


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def simplexsg_curve(cls, overrides, passes, X, K, beta, seed, score, time_limit):
    """The defaults' fit (the last checkpoint), after fits of ``passes`` passes (fewer than
    the default's, each its own fit: a fit of p passes is the prefix of a longer one, so these
    are the default fit's states after p passes)."""
    curve = []
    for max_iter in [*sorted(passes), None]:
        settings = dict(overrides, **({} if max_iter is None else {"max_iter": max_iter}))
        model, seconds = timed_fit(cls(n_components=K, doc_topic_prior=ALPHA,
                                       topic_word_prior=beta, random_state=seed, n_jobs=1,
                                       **settings), X)
        info = {name: _plain(getattr(model, name, None)) for name in SIMPLEXSG_INFO}
        curve.append(checkpoint(seconds, score(model.components_, ALPHA), info))
    return curve


def tomotopy_curve(iterations, X, K, beta, seed, score, time_limit):
    """Model build timed with the first checkpoint; each ``train`` call timed."""
    return [checkpoint(fit.seconds, score(fit.topics, fit.alpha), {"iterations": target})
            for target, fit in peers.tomotopy_curve(X, K, ALPHA, beta, seed, iterations)]


def vb_curve(passes, max_passes, X, K, beta, seed, score, time_limit):
    """``passes`` (``peers.gensim_passes`` or ``peers.sklearn_passes``): a checkpoint a pass."""
    return [checkpoint(fit.seconds, score(fit.topics, fit.alpha), {"passes": n})
            for n, fit in passes(X, K, ALPHA, beta, seed, max_passes, time_limit)]


def make_methods(args):
    methods = {"scir": partial(simplexsg_curve, SCIRLDA, args.scir_params, args.scir_passes),
               "sgrld": partial(simplexsg_curve, SGRLDLDA, args.sgrld_params, ()),
               "tomotopy": partial(tomotopy_curve, args.tomotopy_iterations),
               "gensim": partial(vb_curve, peers.gensim_passes, args.max_passes),
               "sklearn": partial(vb_curve, peers.sklearn_passes, args.max_passes)}
    return {name: fit for name, fit in methods.items() if name in args.methods}


# -------------------------------------------------------------------------------- comparisons
def tomotopy_at(seconds, curve):
    """tomotopy's perplexity interpolated linearly in time at ``seconds``, and a flag if outside."""
    times = [c["seconds"] for c in curve]
    flag = ("before tomotopy's first checkpoint" if seconds < times[0] else
            "after tomotopy's last checkpoint" if seconds > times[-1] else None)
    return float(np.interp(seconds, times, [c["perplexity"] for c in curve])), flag


def peer_at(seconds, curve):
    """The peer's perplexity at its last checkpoint by ``seconds`` (its first, flagged, if none)."""
    reached = [c for c in curve if c["seconds"] <= seconds]
    if not reached:
        return curve[0]["perplexity"], "peer slower than one pass"
    return reached[-1]["perplexity"], None


def compare(curves, method):
    """Ratios of ``method``'s final checkpoint to the peers' curves (None if a curve is missing)."""
    ours, out, flags = curves[method][-1], {}, []
    tomotopy200 = [c for c in curves.get("tomotopy", []) if c["info"]["iterations"] == 200]
    if tomotopy200:
        out["ratio_tomotopy200"] = ours["perplexity"] / tomotopy200[0]["perplexity"]
        out["time_ratio_tomotopy200"] = ours["seconds"] / tomotopy200[0]["seconds"]
        reached = [c for c in curves[method] if c["perplexity"] <= tomotopy200[0]["perplexity"]]
        out["reach_ratio_tomotopy200"] = (reached[0]["seconds"] / tomotopy200[0]["seconds"]
                                          if reached else None)
    for peer, at in (("tomotopy", tomotopy_at), ("gensim", peer_at), ("sklearn", peer_at)):
        if curves.get(peer):
            perplexity, flag = at(ours["seconds"], curves[peer])
            out[f"ratio_{peer}_equal_time"] = ours["perplexity"] / perplexity
            flags += [f"{peer}: {flag}"] if flag else []
    return {**out, "flags": flags}


def summary_row(corpus, K, beta, method, seeds):
    """Medians over seeds of ``method``'s perplexity, seconds and ratios; the union of flags."""
    runs = [s for s in seeds if s["curves"][method]["curve"]]
    if not runs:
        return None
    tomotopy200 = [c for s in runs for c in s["curves"].get("tomotopy", {}).get("curve", [])
                   if c["info"]["iterations"] == 200]

    def median(values):
        values = [v for v in values if v is not None]
        return float(np.median(values)) if values else None

    row = {"group": lda_group_of(corpus), "corpus": corpus, "K": K, "beta": beta, "method": method,
           "perplexity": median([s["curves"][method]["curve"][-1]["perplexity"] for s in runs]),
           "seconds": median([s["curves"][method]["curve"][-1]["seconds"] for s in runs]),
           "tomotopy200_perplexity": median([c["perplexity"] for c in tomotopy200]),
           "tomotopy200_seconds": median([c["seconds"] for c in tomotopy200])}
    for key in RATIOS:
        row[key] = median([s["comparisons"][method].get(key) for s in runs])
    row["flags"] = sorted({f for s in runs for f in s["comparisons"][method]["flags"]})
    return row


#: summary table: (heading, key, digits)
COLUMNS = (("ppl", "perplexity", 0), ("s", "seconds", 1), ("tomo200", "tomotopy200_perplexity", 0),
           ("tomo s", "tomotopy200_seconds", 1), ("r_t200", "ratio_tomotopy200", 3),
           ("t_t200", "time_ratio_tomotopy200", 3), ("reach", "reach_ratio_tomotopy200", 3),
           ("r_t_eq", "ratio_tomotopy_equal_time", 3),
           ("r_gs_eq", "ratio_gensim_equal_time", 3), ("r_sk_eq", "ratio_sklearn_equal_time", 3))


def print_summary(rows):
    def cell(value, digits):
        return f"{'-':>8}" if value is None else f"{value:8.{digits}f}"

    for method in dict.fromkeys(r["method"] for r in rows):
        print(f"\n{method}, medians over seeds. r_: perplexity ratio {method} / peer, t_: time "
              "ratio; t200: tomotopy after 200 iterations, eq: peer at equal time; *: flagged")
        print(f"{'group':>7} {'corpus':>15} {'K':>4} {'beta':>5}"
              + "".join(f"{heading:>8}" for heading, _, _ in COLUMNS))
        for r in (r for r in rows if r["method"] == method):
            print(f"{r['group']:>7} {r['corpus']:>15} {r['K']:4} {r['beta']:5}"
                  + "".join(cell(r.get(key), digits) for _, key, digits in COLUMNS)
                  + (" *" if r["flags"] else ""))
        for r in (r for r in rows if r["method"] == method and r["flags"]):
            print(f"  * {r['corpus']} K={r['K']} beta={r['beta']}: {'; '.join(r['flags'])}")
        print_targets([r for r in rows if r["method"] == method])


def print_targets(rows):
    """Per corpus, over its (K, beta) rows: median and worst perplexity ratio to tomotopy-200,
    median and worst time ratio, worst ratio to gensim / sklearn at equal time; then per group
    how many rows meet the targets (ratio <= 1 to every peer, time <= 0.5 of tomotopy-200)."""
    def spread(values, digits):
        values = [v for v in values if v is not None]
        return (f"{np.median(values):8.{digits}f} {max(values):8.{digits}f}" if values
                else f"{'-':>8} {'-':>8}")

    print(f"{'group':>7} {'corpus':>15} {'rows':>4}   r_t200 (median, worst)   t_t200"
          f"{'':>11}r_gs_eq  r_sk_eq (worst)")
    for corpus in dict.fromkeys(r["corpus"] for r in rows):
        sub = [r for r in rows if r["corpus"] == corpus]
        print(f"{sub[0]['group']:>7} {corpus:>15} {len(sub):4}   "
              + "   ".join(spread([r[key] for r in sub], 3) for key in
                            ("ratio_tomotopy200", "time_ratio_tomotopy200"))
              + "".join(f"{max(r[key] or np.inf for r in sub):9.3f}" for key in
                        ("ratio_gensim_equal_time", "ratio_sklearn_equal_time")))
    for group in dict.fromkeys(r["group"] for r in rows):
        sub = [r for r in rows if r["group"] == group and r["ratio_tomotopy200"] is not None]
        count = {"perplexity <= tomotopy-200": sum(r["ratio_tomotopy200"] <= 1 for r in sub),
                 "time <= 0.5 tomotopy-200": sum(r["time_ratio_tomotopy200"] <= 0.5 for r in sub),
                 "reached it in <= 0.5 of its time": sum(
                     (r.get("reach_ratio_tomotopy200") or np.inf) <= 0.5 for r in sub),
                 "both": sum(r["ratio_tomotopy200"] <= 1 and r["time_ratio_tomotopy200"] <= 0.5
                             for r in sub),
                 "<= gensim": sum((r["ratio_gensim_equal_time"] or np.inf) <= 1 for r in sub),
                 "<= sklearn": sum((r["ratio_sklearn_equal_time"] or np.inf) <= 1 for r in sub)}
        print(f"{group}: {len(sub)} rows; " + ", ".join(f"{k}: {v}" for k, v in count.items()))


# ------------------------------------------------------------------------------------ running
def run_seed(methods, X_train, K, beta, seed, score, factor):
    """Every method on one (corpus, K, beta, seed); the VB peers' time limit follows scir/sgrld."""
    curves, errors = {}, {}
    for name, fit in methods.items():
        ours = [curves[m][-1]["seconds"] for m in OURS if curves.get(m)]
        limit = min(PEER_MAX_SECONDS, factor * max(ours)) if ours else PEER_MAX_SECONDS
        try:
            curves[name] = fit(X_train, K, beta, seed, score, limit)
        except Exception as exc:  # a failing method is recorded, the study goes on
            curves[name], errors[name] = [], f"{type(exc).__name__}: {exc}"
        last = curves[name][-1] if curves[name] else None
        print(f"  K={K} beta={beta} seed={seed} {name:>8}: " + (
            f"perplexity {last['perplexity']:.0f} after {last['seconds']:.1f} s "
            f"({len(curves[name])} checkpoints)" if last else f"FAILED {errors[name]}"), flush=True)
    comparisons = {m: compare(curves, m) for m in OURS if curves.get(m)}
    return {"seed": seed, "comparisons": comparisons,
            "curves": {m: {"curve": curves[m], "error": errors.get(m)} for m in curves}}


def study(args, results):
    methods = make_methods(args)
    for name, X_train, score, grid in study_corpora(args.corpora, args.data, results):
        for K in args.K or grid:
            for beta in args.betas:
                runs = [run_seed(methods, X_train, K, beta, seed, score, args.peer_time_factor)
                        for seed in range(args.seeds)]
                results["runs"].append({"corpus": name, "K": K, "beta": beta, "seeds": runs})
                rows = [summary_row(name, K, beta, m, runs) for m in OURS if m in methods]
                results["summary"] += [row for row in rows if row is not None]
                cli.write_results(results, args.out)


# ------------------------------------------------------------------------------------ plots
def plot(results, path):
    """``plot_corpus`` as ``<stem>_<corpus>.png`` for every corpus, ``plot_ratios`` as ``path``."""
    plt = pyplot()
    colours = dict(zip(OURS + PEERS, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for corpus in results["corpora"]:
        fig = plot_corpus(plt, [r for r in results["runs"] if r["corpus"] == corpus], colours)
        fig.savefig(path.with_name(f"{path.stem}_{corpus}.png"), dpi=110)
        plt.close(fig)
    fig = plot_ratios(plt, results["summary"], colours)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_corpus(plt, runs, colours):
    """Perplexity against seconds, a panel per (K, beta), a line per method and seed."""
    Ks, betas = sorted({r["K"] for r in runs}), sorted({r["beta"] for r in runs})
    fig, axes = plt.subplots(len(Ks), len(betas), figsize=(5.5 * len(betas), 4 * len(Ks)),
                             squeeze=False)
    for run in runs:
        ax = axes[Ks.index(run["K"])][betas.index(run["beta"])]
        for seed in run["seeds"]:
            for method, record in seed["curves"].items():
                ax.plot([c["seconds"] for c in record["curve"]],
                        [c["perplexity"] for c in record["curve"]], marker="o", ms=4,
                        color=colours[method], label=method if seed is run["seeds"][0] else None)
        ax.set(xscale="log", xlabel="training seconds (log)", ylabel="held-out perplexity",
               title=f"{run['corpus']}, K = {run['K']}, beta = {run['beta']}")
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_ratios(plt, summary, colours):
    """Perplexity ratio against time ratio to tomotopy-200, a point per summary row."""
    fig, ax = plt.subplots(figsize=(7, 5))
    labels = set()
    for row in (r for r in summary if r["ratio_tomotopy200"] is not None):
        point, label = (row["time_ratio_tomotopy200"], row["ratio_tomotopy200"]), (
            f"{row['method']}, {row['group']}")
        ax.scatter(*point, color=colours[row["method"]], label=None if label in labels else label,
                   marker="o" if row["group"] == "tuning" else "s")
        ax.annotate(f"{row['corpus']} K{row['K']} b{row['beta']}", point, fontsize=6)
        labels.add(label)
    ax.axhline(1, ls="--", color="grey")
    ax.axvline(0.5, ls="--", color="grey")
    ax.set(xscale="log", xlabel="seconds / tomotopy-200 seconds (log)",
           ylabel="perplexity / tomotopy-200 perplexity",
           title="against tomotopy after 200 iterations (target: lower left)")
    if labels:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig



def main():
    parser = cli.Parser(__file__, __doc__, quick=QUICK, seeds=SEEDS, data=True,
                        summary_only=True)
    add_grid_options(parser, ["all"])
    parser.add_argument("--methods", nargs="+", default=list(OURS + PEERS),
                        choices=OURS + PEERS)
    parser.add_argument("--scir-params", type=json.loads, default={}, help="JSON of overrides")
    parser.add_argument("--scir-passes", type=int, nargs="*", default=[],
                        help="also fit scir with these max_iter (checkpoints before the "
                        "default's end: 'reach' is the first at or below tomotopy-200)")
    parser.add_argument("--sgrld-params", type=json.loads, default={}, help="JSON of overrides")
    parser.add_argument("--peer-time-factor", type=float, default=3.0)
    parser.add_argument("--tomotopy-iterations", type=int, nargs="+",
                        default=list(TOMOTOPY_ITERATIONS), help="tomotopy's checkpoints")
    parser.add_argument("--max-passes", type=int, default=MAX_PASSES,
                        help="the VB peers' passes at most")
    args = parser.parse_args()
    if args.summary_only:
        print_summary([row for saved in cli.read_results(args.summary_only)
                       for row in saved["summary"]])
        return
    args.corpora = lda_corpus_names(args.corpora)
    results = {"evaluation": EVALUATION_FIXED_POINT, "alpha": ALPHA,
               "peer_max_seconds": PEER_MAX_SECONDS, "settings": vars(args),
               "groups": LDA_GROUPS, "corpora": {}, "skipped": {}, "runs": [], "summary": []}
    with threadpool_limits(1):
        study(args, results)
    print_summary(results["summary"])
    cli.write_results(results, args.out, plot)


if __name__ == "__main__":
    main()
