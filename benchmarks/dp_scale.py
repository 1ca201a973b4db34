"""The DP mixture at scale where the clusters can be found: rows drawn from clusters fitted on
real data, streamed from UCI files; each sampler's held-out log predictive, ARI and recovered
clusters against seconds, and its peak memory.

For each source (--sources: msweb and corpora of the data folder; ``synthetic``, the mixture
of ``mixture_semisynthetic.synthetic_mixture``, needs no data) the reference mixture
(``harness.mixture_semisynthetic.reference_mixture``: the exact sampler on up to 20,000 of the
source's rows, on its --features most frequent columns, base concentration --reference-base,
small enough that the long tail of small clusters real data has survives; cached in
--workdir); N rows (--sizes) drawn from it, lengths
resampled from the source's rows, written to a UCI file in chunks, never held in full; --test
held-out rows drawn apart (the same for every N). Each run is a process of its own, so that
its peak resident memory is its own:

* ``gibbs``: ``DPMixture("gibbs", max_time=budget, tol=None)`` on the rows loaded in memory
  (only up to --gibbs-max-rows rows);
* ``scir``, ``sgrld``: ``DPMixture(sampler, max_time=budget, tol=None)`` streamed from
  ``UCIBowCorpus``;
* ``default``: ``DPMixture()`` streamed, nothing else set: what a user with a file gets, in
  its own time (``sampler="auto"`` is SCIR on a stream);
* ``matrix``: ``DPMixture()`` on the rows loaded in memory (up to --gibbs-max-rows rows):
  what a user with a count matrix gets (``sampler="auto"``: exact Gibbs up to 10^6 rows, until
  its convergence check stops it).

--check-rows training fits without the held-out rows, so that the default's convergence check
scores training rows, as a user's fit without ``X_heldout`` does (the curve then has the end
point only); the default, heldout, gives them to the fit and records the curve.

--params sets more parameters in every run (e.g. ``'{"base_concentration": 0.05}'``; with
``--samplers matrix``, ``'{"sampler": "scir", "evaluate_every": 100}'`` runs SCIR on the rows
in memory).

Each run scores the held-out rows every --evaluate-every iterations (the exact sampler: every
iteration): the mean log predictive per row (``score``), the ARI of ``predict`` against the
rows' true clusters, and the true clusters with at least --recovery-fraction of the rows that a
fitted cluster recovers (``mixture_semisynthetic.recovery`` on the held-out rows' labels). The
scale's two ends: the true mixture's score and ARI (each row given its most probable true
cluster), and the one-cluster model's score (the rows' pooled profile); ``gap closed`` =
(fit - one cluster) / (truth - one cluster).

    python benchmarks/dp_scale.py --sources msweb healthtweets --sizes 100000 1000000 \\
        --workdir /tmp/dp_scale --out benchmarks/results/dp_scale.json

writes the results and a figure per data set beside them (``<stem>_<source>_<N>.png``);
``--summary-only FILE ...`` reprints saved results.
"""
import hashlib
import json
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

from harness import cli
from harness.measure import peak_rss_mb
from harness.children import add_child_options, prepared, reprint, run_child
from harness.mixture_semisynthetic import (REFERENCE_BASE, REFERENCE_ITERATIONS,
                                           SYNTHETIC_FEATURES, heldout_rows,
                                           reference_mixture, recovery, row_chunks,
                                           synthetic_mixture, truth_scores)
from harness.semisynthetic import topic_cdfs, write_uci
from simplexsg._optional import pyplot

SAMPLERS = ("gibbs", "scir", "sgrld", "default", "matrix")
#: The runs that hold the rows in memory.
IN_MEMORY = ("gibbs", "matrix")
#: ``max_iter`` of the budgeted runs: more iterations than any budget allows.
NO_ITER_LIMIT = 10**9


# ---------------------------------------------------------------------------- the data
def true_mixture(args, source):
    """(profiles, weights, lengths) of the mixture the rows of ``source`` are drawn from
    (the options of ``add_mixture_options``), and the folder of its data sets."""
    if source == "synthetic":
        base = Path(args.workdir) / (     # the folder of the default mixture keeps its name
            source + (f"_seed{args.mixture_seed}" if args.mixture_seed else "")
            + (f"_d{args.synthetic_features}"
               if args.synthetic_features != SYNTHETIC_FEATURES else ""))
        return synthetic_mixture(n_features=args.synthetic_features,
                                 seed=args.mixture_seed), base
    base = Path(args.workdir) / f"{source}_W{args.features}_base{args.reference_base:g}"
    return reference_mixture(source, args.data, Path(args.workdir) / "reference",
                             args.features, args.reference_iterations,
                             args.reference_base), base


def prepare(args, source, N):
    """The folder of (source, N): ``docword.txt`` (written once), ``test.npz`` and
    ``test_labels.npy`` beside the sizes, the true mixture in ``truth.npz``; returns (folder,
    the file's info)."""
    (profiles, weights, lengths), base = true_mixture(args, source)
    folder = base / f"N{N}"
    folder.mkdir(parents=True, exist_ok=True)
    cdfs = topic_cdfs(profiles)
    if not (base / "test.npz").is_file():
        np.savez(base / "truth.npz", profiles=profiles, weights=weights)
        X_test, labels_test = heldout_rows(cdfs, weights, lengths, args.test, seed=1)
        sp.save_npz(base / "test.npz", X_test)
        np.save(base / "test_labels.npy", labels_test)
    path = folder / "docword.txt"
    if not path.with_suffix(".json").is_file():
        write_uci((X for X, _ in row_chunks(cdfs, weights, lengths, N, seed=0)), path)
    return folder, json.loads(path.with_suffix(".json").read_text())


def references(folder, fraction):
    """The truth's and the one-cluster model's held-out scores, the truth's ARI, the true
    clusters holding at least ``fraction`` of the held-out rows (what ``recovery`` counts,
    not their mixture weights, which a cluster's share of the rows can pass by chance), and
    the mixture's fingerprint: its clusters and a hash of its weights. The reference mixture
    is the library's own exact fit of the source, so another version of the library draws
    the rows from another mixture; figures are comparable only under the same fingerprint."""
    truth = np.load(folder.parent / "truth.npz")
    X_test = sp.load_npz(folder.parent / "test.npz")
    labels = np.load(folder.parent / "test_labels.npy")
    scores, best = truth_scores(truth["profiles"], truth["weights"], X_test)
    pooled = truth["weights"] @ truth["profiles"]
    one, _ = truth_scores(pooled[None], np.ones(1), X_test)
    return dict(truth_score=float(scores.mean()), one_cluster_score=float(one.mean()),
                truth_ari=float(adjusted_rand_score(labels, best)),
                truth_recovered=recovery(labels, best, fraction)[0],
                true_clusters=recovery(labels, labels, fraction)[0],
                mixture=f"{truth['weights'].size} clusters, weights "
                        f"{hashlib.sha1(truth['weights'].tobytes()).hexdigest()[:8]}")


# ---------------------------------------------------------------------------- the children
def child(args):
    """Run one sampler in this process; print its result as JSON."""
    from simplexsg import DPMixture
    from simplexsg.datasets import load_uci_bow
    from simplexsg.readers import UCIBowCorpus

    folder = Path(args.child_folder)
    X_test = sp.load_npz(folder.parent / "test.npz")
    labels = np.load(folder.parent / "test_labels.npy")
    curve = []

    class Traced(DPMixture):
        """Its held-out evaluations also record ARI and recovery, once an iteration (the
        default's convergence check scores the held-out rows too)."""

        def score(self, X, y=None):
            value = super().score(X)
            if X.shape[0] != labels.size or curve and curve[-1]["iteration"] == self.n_iter_:
                return value         # the check's training rows, or scored already
            found = self.predict(X)
            curve.append(dict(seconds=self.training_seconds_, iteration=self.n_iter_,
                              score=value, ari=float(adjusted_rand_score(labels, found)),
                              recovered=recovery(labels, found, args.recovery_fraction)[0],
                              clusters=int(self.n_components_)))
            return value

    path = folder / "docword.txt"
    if args.child in IN_MEMORY:
        data = load_uci_bow(path)[0].tocsr()
        every = 1
    else:
        data = UCIBowCorpus(path)
        every = args.evaluate_every
    settings = (dict() if args.child in ("default", "matrix") else
                dict(sampler=args.child, max_time=args.budget, max_iter=NO_ITER_LIMIT,
                     tol=None))
    settings = dict(n_jobs=args.threads, random_state=args.seed, evaluate_every=every,
                    **settings)
    settings.update(json.loads(args.params))       # may set evaluate_every, e.g. for SCIR
    model = Traced(**settings)
    start = time.perf_counter()
    model.fit(data, X_heldout=X_test if args.check_rows == "heldout" else None)
    wall = time.perf_counter() - start
    final = model.score(X_test)            # the end state, if the last iteration was not scored
    curve[-1].update(final=True)
    print(json.dumps(dict(curve=curve, score=final, wall_seconds=wall, sampler=model.sampler_,
                          iterations=model.n_iter_, stop_reason=model.stop_reason_,
                          timings=model.timings_, peak_rss_mb=peak_rss_mb())))


# ---------------------------------------------------------------------------- summaries
def gap_closed(score, refs):
    return (score - refs["one_cluster_score"]) / (refs["truth_score"] - refs["one_cluster_score"])


def summarise(entry):
    """Each sampler's end point, and where SCIR stands against the exact sampler, printed."""
    refs = entry["references"]
    lines = [f"  {entry['source']}, {entry['rows']:,} rows: truth {refs['truth_score']:.3f} "
             f"(ARI {refs['truth_ari']:.3f}, recovers {refs['truth_recovered']} of "
             f"{refs['true_clusters']} clusters), one cluster {refs['one_cluster_score']:.3f}"
             + (f"; mixture of {refs['mixture']}" if "mixture" in refs else "")]
    for sampler, result in entry["samplers"].items():
        end = result["curve"][-1]
        lines.append(f"    {sampler:<8} {end['seconds']:7.1f} s  {result['iterations']:7d} it"
                     f"  score {end['score']:8.3f}"
                     f"  gap closed {gap_closed(end['score'], refs):5.3f}"
                     f"  ARI {end['ari']:.3f}  recovered {end['recovered']:3d}/"
                     f"{refs['true_clusters']}  clusters {end['clusters']:4d}"
                     f"  {result['peak_rss_mb']:6.0f} MB")
    print("\n".join(lines), flush=True)


def plot(results, png):
    """A figure per data set (``<stem>_<source>_<N>.png``): score, ARI and recovered clusters
    against seconds, one curve per sampler, the truth's values dashed."""
    plt = pyplot()
    for key, entry in results.get("runs", {}).items():
        refs = entry["references"]
        fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
        for i, (sampler, result) in enumerate(entry["samplers"].items()):
            t = [p["seconds"] for p in result["curve"]]
            for ax, field in zip(axes, ("score", "ari", "recovered")):
                ax.plot(t, [p[field] for p in result["curve"]], color=f"C{i}", marker=".",
                        label=sampler)
        for ax, field, label in zip(axes, ("truth_score", "truth_ari", "true_clusters"),
                                    ("held-out log predictive per row", "held-out ARI",
                                     "true clusters recovered")):
            ax.axhline(refs[field], color="k", ls="--", lw=0.8, label="truth")
            ax.set(xscale="log", xlabel="training seconds", ylabel=label)
        axes[0].set_ylim(refs["one_cluster_score"], None)
        axes[0].set_title(f"{entry['source']}, {entry['rows']:,} rows")
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(png.with_name(f"{png.stem}_{key}.png"), dpi=100)
        plt.close(fig)


def add_mixture_options(parser):
    """The options that choose a source's true mixture and where its data sets are kept
    (``true_mixture``)."""
    parser.add_argument("--features", type=int, default=1000,
                        help="the source's most frequent columns the clusters are fitted on")
    parser.add_argument("--reference-iterations", type=int, default=REFERENCE_ITERATIONS)
    parser.add_argument("--reference-base", type=float, default=REFERENCE_BASE,
                        help="base concentration of the reference fit")
    parser.add_argument("--mixture-seed", type=int, default=0,
                        help="the seed of the synthetic mixture (its weights and profiles): "
                             "other seeds give other mixtures of the same kind")
    parser.add_argument("--synthetic-features", type=int, default=SYNTHETIC_FEATURES,
                        help="the categories of the synthetic mixture's rows")
    parser.add_argument("--workdir", default="/tmp/dp_scale")


def main():
    parser = cli.Parser(__file__, __doc__, data=True, summary_only=True,
                        quick=dict(sources=["msweb"], sizes=[20_000], budget=10.0,
                                   test=2000, samplers=["gibbs", "scir"]))
    parser.add_argument("--sources", nargs="+", default=["news", "msweb", "healthtweets"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--samplers", nargs="+", choices=SAMPLERS,
                        default=["gibbs", "scir", "sgrld", "default"],
                        help="runs (default: all but matrix, whose exact chain runs until it "
                        "converges: minutes at 10^5 rows of news, hours at 10^6)")
    parser.add_argument("--budget", type=float, default=120.0,
                        help="seconds of each budgeted run")
    parser.add_argument("--test", type=int, default=50_000, help="held-out rows")
    parser.add_argument("--gibbs-max-rows", type=int, default=1_000_000,
                        help="the largest N the exact sampler runs on (in memory)")
    parser.add_argument("--recovery-fraction", type=float, default=0.001,
                        help="a true cluster counts if it holds at least this share of rows")
    parser.add_argument("--evaluate-every", type=int, default=100,
                        help="iterations between evaluations of the minibatch samplers")
    parser.add_argument("--params", default="{}",
                        help="JSON of DPMixture parameters set in every run (default: none)")
    parser.add_argument("--check-rows", choices=("heldout", "training"), default="heldout",
                        help="the rows of the default's convergence check (module docstring)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    add_mixture_options(parser)
    add_child_options(parser)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.summary_only:
        return reprint(args.summary_only, summarise, plot)
    results = dict(settings={k: v for k, v in vars(args).items() if k != "out"}, runs={})
    for source, N, folder, info in prepared(args.sources, args.sizes,
                                            lambda source, N: prepare(args, source, N),
                                            lambda source, N: f"{source}_{N}"):
        entry = results["runs"][f"{source}_{N}"] = dict(
            source=source, rows=N, tokens=info["tokens"],
            references=references(folder, args.recovery_fraction), samplers={})
        for sampler in args.samplers:
            if sampler in IN_MEMORY and N > args.gibbs_max_rows:
                continue
            entry["samplers"][sampler] = run_child(
                __file__, sampler, folder, budget=args.budget, threads=args.threads,
                evaluate_every=args.evaluate_every, seed=args.seed,
                recovery_fraction=args.recovery_fraction, params=args.params,
                check_rows=args.check_rows)
            cli.write_results(results, args.out)
        summarise(entry)
    cli.write_results(results, args.out, plot=plot)
    return None


if __name__ == "__main__":
    main()
