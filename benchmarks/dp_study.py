"""The DP mixture's samplers at their defaults on many data sets: held-out score, occupied
clusters and ARI (where labels are known) against training time (#13).

Data sets (``--sets``; ``tuning`` / ``heldout`` / ``all``):
* synthetic mixtures of multinomials with known labels (``make_multinomial_mixture``, 300
  categories, rows of 20 counts, components Dirichlet(0.1), weights Dirichlet(a): unbalanced),
  K from 5 to 200, N from 10^3 to 10^5, 2,000 held-out rows;
* msweb (the SCIR paper's data: UCI train / test files, ``$SIMPLEXSG_DATA/msweb``);
* the text corpora of ``$SIMPLEXSG_DATA/corpora`` clustered as documents (at most 20,000
  training and 2,000 held-out documents each, at most a fifth held out; a seeded random subset).
The defaults were chosen on the ``tuning`` group (synthetic seed 0 sets and msweb); the
``heldout`` group (other synthetic draws, the text corpora) is the check.

Every sampler ("scir", "sgrld", "gibbs"; ``--samplers``: some) runs ``DPMixture(sampler,
max_time=budget, max_iter=NO_ITER_LIMIT, tol=None)`` (``max_time`` only caps ``max_iter``: the
budget ends the fit, not the convergence check) with no other setting (``--params``: more,
the same for every run), ``--seeds`` seeds, and records ``score(X_heldout)`` (mean log
predictive per held-out row) about 40 times over its budget. The score "at equal time" is the
mean of a sampler's scores in the last quarter of the budget (one state is one posterior
sample: the mean smooths its spread). The summary gives, per data set, each sampler's score,
clusters with at least 1% of the rows and held-out ARI, and the gaps of the default
(``sampler="auto"``) and of SCIR to the best sampler, in percent of the best score's
magnitude; for the synthetic sets, the default's recovered clusters (true clusters with >= 1%
of the rows that are the majority label of exactly one found cluster >= 1%) + extra ones
(found clusters >= 1% beyond those), per seed. The JSON at --out (the data sets under
"sets") and beside it a PNG per data set (``<stem>_<set>.png``).

    python benchmarks/dp_study.py --out benchmarks/results/dp_study.json    # about 25 minutes
    python benchmarks/dp_study.py --quick                                    # a minute
    python benchmarks/dp_study.py --sets heldout --samplers gibbs --params '{"init": "random"}'
"""
import json
import time

import numpy as np
from sklearn.metrics import adjusted_rand_score

from simplexsg import DPMixture
from simplexsg._optional import pyplot
from simplexsg.datasets import make_multinomial_mixture
from simplexsg.dpmixture.defaults import auto_sampler

from harness import cli, corpora
from harness.mixture_semisynthetic import recovery

SAMPLERS = ("scir", "sgrld", "gibbs")
#: name: (K, N, weight concentration a, seed, group)
SYNTHETIC = {
    "mix-K5-N1e3": (5, 1_000, 1.0, 0, "tuning"),
    "mix-K30-N1e4": (30, 10_000, 1.0, 0, "tuning"),
    "mix-K100-N1e5": (100, 100_000, 2.0, 0, "tuning"),
    "mix-K20-N1e3": (20, 1_000, 1.0, 1, "heldout"),
    "mix-K50-N1e4": (50, 10_000, 0.5, 1, "heldout"),
    "mix-K40-N1e5": (40, 100_000, 0.5, 1, "heldout"),
    "mix-K100-N1e5-b": (100, 100_000, 5.0, 1, "heldout"),
    "mix-K200-N1e5": (200, 100_000, 5.0, 1, "heldout"),
}
CORPORA = ("news", "fortunes", "parlspeech_en", "healthtweets")
#: ``max_iter`` of every fit: more iterations than any budget allows, so ``max_time`` ends it.
NO_ITER_LIMIT = 10**9
MAX_ROWS, HELDOUT_ROWS = 20_000, 2_000


def synthetic(K, N, a, seed):
    weights = np.random.default_rng(seed).dirichlet(np.full(K, a))
    X, labels, _, _ = make_multinomial_mixture(N + HELDOUT_ROWS, 300, K, weights=weights,
                                               concentration=0.1, row_length=20,
                                               random_state=seed)
    return X[:N], X[N:], labels[:N], labels[N:]


def corpus(name, data_dir):
    X = corpora.uci_counts(name, data_dir)
    X = X[np.asarray(X.sum(axis=1)).ravel() > 0]
    order = np.random.default_rng(0).permutation(X.shape[0])
    n_test = min(HELDOUT_ROWS, X.shape[0] // 5)
    n_train = min(MAX_ROWS, X.shape[0] - n_test)
    return X[np.sort(order[:n_train])], X[np.sort(order[-n_test:])], None, None


def data_sets(which, data_dir):
    """(name, group, loader) of the chosen sets (names, or a group, or "all"); a set of the
    data folder that is not there is skipped with a message."""
    out = [(name, spec[4], None, lambda spec=spec: synthetic(*spec[:4]))
           for name, spec in SYNTHETIC.items()]
    out.append(("msweb", "tuning", ("msweb",),
                lambda: (corpora.msweb(data_dir, "train").X, corpora.msweb(data_dir, "test").X,
                         None, None)))
    out += [(name, "heldout", ("corpora", name), lambda name=name: corpus(name, data_dir))
            for name in CORPORA]
    if which in ("tuning", "heldout"):
        chosen = [s for s in out if s[1] == which]
    else:
        chosen = [s for s in out if which == "all" or s[0] in which]
    return [(name, group, load) for name, group, needs, load in chosen
            if needs is None or present(data_dir, *needs)]


def present(data_dir, *parts):
    """Whether the data folder holds ``parts``; if not, say so."""
    try:
        corpora.data_path(data_dir, *parts)
        return True
    except corpora.Absent as exc:
        print(f"skipping {parts[-1]}: {exc}", flush=True)
        return False


def budget(X):
    """Seconds per sampler: 10 below 10^4 rows, 20 below 10^5, 30 at 10^5 and more; 30 for a
    vocabulary above 5,000 words (the exact sampler's sweep and the pilot draw J x V gammas)."""
    if X.shape[1] > 5000:
        return 30.0
    return 10.0 if X.shape[0] < 10_000 else 20.0 if X.shape[0] < 100_000 else 30.0


def run(sampler, X, X_test, labels, labels_test, seconds, seed, params=None):
    start = time.perf_counter()
    every = max(1, 40_000 // X.shape[0]) if sampler == "gibbs" else 25
    dp = DPMixture(sampler, max_time=seconds, max_iter=NO_ITER_LIMIT, tol=None,
                   evaluate_every=every, random_state=seed, **(params or {}))
    dp.fit(X, X_heldout=X_test)
    curve = [(h["seconds"], h["score"], h["n_components"]) for h in dp.history_]
    final_score = dp.score(X_test)
    late = [s for t, s, _ in curve if t >= 0.75 * seconds] or [final_score]
    sizes = np.bincount(dp.labels_)
    return dict(sampler=sampler, seed=seed, curve=curve, score=float(np.mean(late)),
                final_score=final_score, iterations=dp.n_iter_,
                seconds=dp.training_seconds_,
                clusters=int(dp.n_components_),
                clusters_1pct=int(np.sum(sizes >= 0.01 * X.shape[0])),
                ari=None if labels_test is None else
                float(adjusted_rand_score(labels_test, dp.predict(X_test))),
                recovery=None if labels is None else recovery(labels, dp.labels_),
                wall_seconds=time.perf_counter() - start)


def summarise(results):
    """Per data set: each sampler's median score, clusters >= 1% and ARI over seeds; the gaps
    of the default ("auto") and of SCIR to the best sampler, in percent of its magnitude."""
    ran = [s for s in SAMPLERS if any(r["sampler"] == s for e in results for r in e["runs"])]
    lines = [f"{'set':>16} {'group':>8} {'N':>7} {'true1%':>6} " + " ".join(
        f"{s + ' score':>12} {'cl1%':>4} {'ARI':>5}" for s in ran)
        + "  default  gap %  scir gap %  default rec+extra"]
    for entry in results:
        by = {s: [r for r in entry["runs"] if r["sampler"] == s] for s in ran}
        med = {s: (np.median([r["score"] for r in rs]), np.median([r["clusters_1pct"] for r in rs]),
                   None if rs[0]["ari"] is None else np.median([r["ari"] for r in rs]))
               for s, rs in by.items() if rs}
        best = max(m[0] for m in med.values())
        default = auto_sampler(entry["n_rows"])
        gap, scir_gap = (100 * (best - med[s][0]) / abs(best) if s in med else float("nan")
                         for s in (default, "scir"))
        cells = " ".join(f"{m[0]:12.3f} {m[1]:4.0f} {'' if m[2] is None else f'{m[2]:.3f}':>5}"
                         for m in med.values())
        true = entry.get("true_clusters_1pct")
        recovered = [r["recovery"] for r in by.get(default, []) if r.get("recovery")]
        rec = "/".join(f"{a}+{b}" for a, b in recovered)
        lines.append(f"{entry['name']:>16} {entry['group']:>8} {entry['n_rows']:>7} "
                     f"{'' if true is None else true:>6} {cells}  {default:>7} {gap:6.2f} "
                     f"{scir_gap:10.2f}  {rec}")
    return "\n".join(lines)


def plot(results, path):
    """A PNG per data set: ``<stem>_<set>.png`` beside ``path``."""
    for entry in results["sets"]:
        plot_set(entry, path.with_name(f"{path.stem}_{entry['name']}.png"))


def plot_set(entry, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, sampler in enumerate(SAMPLERS):
        for r in entry["runs"]:
            if r["sampler"] == sampler and r["curve"]:
                t, s, _ = zip(*r["curve"])
                ax.plot(t, s, color=f"C{i}", alpha=0.8,
                        label=sampler if r["seed"] == 0 else None)
    ax.set(xlabel="training seconds", ylabel="held-out log predictive per row",
           title=f"{entry['name']} (N = {entry['n_rows']})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    parser = cli.Parser(__file__, __doc__, seeds=2, data=True, summary_only=True,
                        quick=dict(sets=["mix-K5-N1e3", "mix-K20-N1e3"], seeds=1, budget=5.0))
    parser.add_argument("--sets", nargs="+", default=["all"],
                        help="names, or tuning / heldout / all")
    parser.add_argument("--budget", type=float, help="seconds per sampler (default: by size, "
                        "``budget``)")
    parser.add_argument("--samplers", nargs="+", choices=SAMPLERS, default=list(SAMPLERS))
    parser.add_argument("--params", default="{}", help="more DPMixture parameters, JSON, for "
                        "every run (e.g. '{\"base_concentration\": 0.05}')")
    args = parser.parse_args()
    if args.summary_only:
        print(summarise([entry for saved in cli.read_results(args.summary_only)
                         for entry in (saved if isinstance(saved, list) else saved["sets"])]))
        return
    which = args.sets[0] if len(args.sets) == 1 and args.sets[0] in ("all", "tuning",
                                                                       "heldout") else args.sets
    results = {"settings": vars(args), "sets": []}
    for name, group, load in data_sets(which, args.data):
        X, X_test, labels, labels_test = load()
        seconds = args.budget or budget(X)
        entry = dict(name=name, group=group, n_rows=X.shape[0], n_features=X.shape[1],
                     budget=seconds, runs=[], true_clusters_1pct=None if labels is None else
                     int(np.sum(np.bincount(labels) >= 0.01 * labels.size)))
        for seed in range(args.seeds):
            for sampler in args.samplers:
                r = run(sampler, X, X_test, labels, labels_test, seconds, seed,
                        json.loads(args.params))
                entry["runs"].append(r)
                ari = "" if r["ari"] is None else (f", ARI {r['ari']:.3f}, recovered "
                                                   f"{r['recovery'][0]} + {r['recovery'][1]} extra")
                print(f"{name} seed {seed} {sampler:>5}: score {r['score']:.3f}, "
                      f"{r['clusters_1pct']} clusters >= 1%{ari}, {r['iterations']} iterations",
                      flush=True)
        results["sets"].append(entry)
        cli.write_results(results, args.out)
    cli.write_results(results, args.out, plot)
    print(summarise(results["sets"]))


if __name__ == "__main__":
    main()
