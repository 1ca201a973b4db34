"""How much split-merge work a sweep of the DP mixture's exact sampler should do: the default
fit with ``split_merge="auto"``'s budget (``defaults.SPLIT_MERGE_WORK`` x rows x occupied
components, in block rows) set to each of --work, everything else the default.

Data: the synthetic mixtures of ``dp_study.py`` (--sets, each "K-a-seed", at --rows training
rows and its held-out rows), and the folders ``dp_scale.py`` prepared (--folders, each an
``N<rows>`` folder holding ``docword.txt``, with ``test.npz`` and ``test_labels.npy`` beside it;
the first --test-rows held-out rows are scored). For each: ``DPMixture(random_state=0,
n_jobs=2).fit(X)`` in this process, one after another: wall seconds, sweeps, ``timings_``, the
held-out score and ARI, and the true clusters of at least 0.1% of the held-out rows recovered.

    python benchmarks/dp_split_merge_work.py --folders /tmp/dp_scale/news_W1000_base0.05/N100000
    python benchmarks/dp_split_merge_work.py --quick      # one set of 10^4 rows, seconds
"""
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

from simplexsg import DPMixture
from simplexsg.datasets import load_uci_bow
from simplexsg.dpmixture import slice_sampler

from dp_study import synthetic
from harness import cli
from harness.mixture_semisynthetic import recovery

SETS = ("60-1.0-0", "200-5.0-1", "50-0.5-1", "100-2.0-0")


def data_sets(args):
    """(name, X, X_test, labels_test) of each set and folder."""
    for name in args.sets:
        K, a, seed = name.split("-")
        X, X_test, _, labels_test = synthetic(int(K), args.rows, float(a), int(seed))
        yield name, X, X_test, labels_test
    for folder in map(Path, args.folders):
        X_test = sp.load_npz(folder.parent / "test.npz")[:args.test_rows]
        labels_test = np.load(folder.parent / "test_labels.npy")[:args.test_rows]
        yield str(folder), load_uci_bow(folder / "docword.txt")[0], X_test, labels_test


def run(X, X_test, labels_test, work):
    """The default fit with the work budget ``work``; its figures."""
    slice_sampler.SPLIT_MERGE_WORK = work          # read by each sweep
    start = time.perf_counter()
    model = DPMixture(random_state=0, n_jobs=2).fit(X)
    seconds = time.perf_counter() - start
    found = model.predict(X_test)
    return dict(work=work, seconds=seconds, sweeps=model.n_iter_, timings=model.timings_,
                score=model.score(X_test), ari=adjusted_rand_score(labels_test, found),
                recovered=recovery(labels_test, found, 0.001)[0],
                true=recovery(labels_test, labels_test, 0.001)[0])


def summarise(results):
    lines = [f"{'data':48} {'work':>5} {'seconds':>8} {'sweeps':>6} {'moves s':>8} {'score':>9} "
             f"{'ARI':>7} {'rec 0.1%':>9}"]
    for r in results["runs"]:
        lines.append(f"{r['data'][-48:]:48} {r['work']:5g} {r['seconds']:8.1f} {r['sweeps']:6d} "
                     f"{r['timings']['moves']:8.1f} {r['score']:9.4f} {r['ari']:7.4f} "
                     f"{r['recovered']:4d}/{r['true']:<4d}")
    return "\n".join(lines)


def main():
    parser = cli.Parser(__file__, __doc__, summary_only=True,
                        quick=dict(rows=10_000, sets=["30-1.0-0"], work=[0.25, 0.1]))
    parser.add_argument("--sets", nargs="*", default=list(SETS), metavar="K-a-seed")
    parser.add_argument("--folders", nargs="*", default=[], metavar="DIR")
    parser.add_argument("--rows", type=int, default=100_000, help="training rows of a set")
    parser.add_argument("--test-rows", type=int, default=20_000, help="held-out rows scored")
    parser.add_argument("--work", type=float, nargs="+", default=[0.25, 0.1, 0.05])
    args = parser.parse_args()
    if args.summary_only:
        return cli.print_summaries(args.summary_only, summarise)
    results = {"settings": vars(args), "runs": []}
    for name, X, X_test, labels_test in data_sets(args):
        for work in args.work:
            results["runs"].append(dict(data=name, **run(X, X_test, labels_test, work)))
            print(summarise(dict(runs=results["runs"][-1:])).split("\n")[1], flush=True)
    print(summarise(results))
    cli.write_results(results, args.out)


if __name__ == "__main__":
    main()
