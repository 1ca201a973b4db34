"""How long the DP mixture's default fit runs at 10^5 rows, and what its convergence check
(``tol="auto"``) costs in quality against the fixed 200 sweeps of ``tol=None``.

Data: the synthetic mixtures of ``dp_study.py`` (300 categories, rows of 20 counts, components
Dirichlet(0.1), weights Dirichlet(a)) at 10^5 training rows and 2,000 held-out ones, from 30 to
200 clusters (``--sets``, each "K-a-seed"). For each, ``DPMixture(random_state=0).fit(X)``
(nothing else set: exact Gibbs, ``sampler="auto"``) and the same with ``tol=None``: wall
seconds, sweeps, why it stopped, ``timings_``, the held-out score and ARI, and the true clusters
of at least 1% and 0.1% recovered on the held-out rows (the study's recovery count).

    python benchmarks/dp_default_length.py --out benchmarks/results/dp_default_length.json
    python benchmarks/dp_default_length.py --quick        # one set of 10^4 rows, seconds
"""
import time

from sklearn.metrics import adjusted_rand_score

from simplexsg import DPMixture

from dp_study import synthetic
from harness import cli
from harness.mixture_semisynthetic import recovery

SETS = ("60-1.0-0", "100-2.0-0", "40-0.5-1", "100-5.0-1", "200-5.0-1", "30-1.0-0", "50-0.5-1")
#: The settings compared: the default, and the fixed length it replaced.
RUNS = {"default": {}, "200 sweeps": {"tol": None}}


def run(X, X_test, labels_test, params):
    start = time.perf_counter()
    model = DPMixture(random_state=0, **params).fit(X)
    seconds = time.perf_counter() - start
    found = model.predict(X_test)
    return dict(seconds=seconds, sweeps=model.n_iter_, stop=model.stop_reason_,
                timings=model.timings_, score=model.score(X_test),
                ari=adjusted_rand_score(labels_test, found),
                recovered_1pct=recovery(labels_test, found, 0.01),
                recovered_01pct=recovery(labels_test, found, 0.001))


def summarise(results):
    lines = [f"{'set':12} {'run':11} {'seconds':>8} {'sweeps':>6} {'stop':>10} {'score':>9} "
             f"{'ARI':>7} {'rec 1%':>8} {'rec 0.1%':>9}"]
    for entry in results["sets"]:
        for name, r in entry["runs"].items():
            lines.append(f"{entry['set']:12} {name:11} {r['seconds']:8.1f} {r['sweeps']:6d} "
                         f"{r['stop']:>10} {r['score']:9.4f} {r['ari']:7.4f} "
                         f"{r['recovered_1pct'][0]:4d}/{entry['true_1pct']:<3d} "
                         f"{r['recovered_01pct'][0]:4d}/{entry['true_01pct']:<3d}")
    return "\n".join(lines)


def main():
    parser = cli.Parser(__file__, __doc__, quick=dict(rows=10_000, sets=["30-1.0-0"]),
                        summary_only=True)
    parser.add_argument("--sets", nargs="+", default=list(SETS), metavar="K-a-seed")
    parser.add_argument("--rows", type=int, default=100_000, help="training rows")
    args = parser.parse_args()
    if args.summary_only:
        return cli.print_summaries(args.summary_only, summarise)
    results = {"settings": vars(args), "sets": []}
    for name in args.sets:
        K, a, seed = name.split("-")
        X, X_test, labels, labels_test = synthetic(int(K), args.rows, float(a), int(seed))
        entry = dict(set=name, true_1pct=recovery(labels_test, labels_test, 0.01)[0],
                     true_01pct=recovery(labels_test, labels_test, 0.001)[0], runs={})
        for run_name, params in RUNS.items():
            entry["runs"][run_name] = run(X, X_test, labels_test, params)
        results["sets"].append(entry)
        print(summarise(dict(sets=[entry])), flush=True)
    print(summarise(results))
    cli.write_results(results, args.out)


if __name__ == "__main__":
    main()
