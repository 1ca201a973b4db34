"""Throughput of the allocations of the DP mixture: the kernel ``slice_allocate`` (through
``allocate_rows``) drawing every row's component in a fitted model's state: seconds an
allocation on 1 and 2 threads, a row's candidates, nanoseconds a stored count and candidate.

Data: the first --rows rows of the folders ``dp_scale.py`` prepared (--folders, each an
``N<rows>`` folder holding ``docword.txt``), or with --quick a synthetic mixture. The exact
sampler runs --sweeps sweeps of its default chain on them (2 threads, seed 0); then every row
is allocated among the fitted components (``components_``, ``weights_``) with slices drawn as
the sampler draws them, u_i ~ U(0, w_{z_i}) for the row's component z_i, so that a row's
candidates (the components of weight at least u_i) are as many as in the chain. Each
allocation runs --repeats times and the fastest is reported, so that a change of the kernel
shows against the machine's noise (compare two builds turn by turn).

    python benchmarks/dp_allocation_throughput.py \\
        --folders /tmp/dp_scale/news_W1000_base0.05/N100000
    python benchmarks/dp_allocation_throughput.py --quick      # seconds
"""
import time
from pathlib import Path

import numpy as np

from simplexsg import DPMixture
from simplexsg.datasets import make_multinomial_mixture
from simplexsg.dpmixture.local import allocate_rows, kernel_layout

from harness import cli
from harness.dp_rows import first_rows


def data_sets(args):
    """(name, CSR rows) of each folder, or of the quick mode's synthetic mixture."""
    if args.quick:
        X, _, _, _ = make_multinomial_mixture(args.rows, 300, 60, row_length=50,
                                              random_state=0)
        yield "mixture-60", X
        return
    for folder in map(Path, args.folders):
        yield str(folder), first_rows(folder, args.rows)


def allocations(X, sweeps, repeats, threads, seed=0):
    """The fastest of ``repeats`` allocations of the rows X in the state of a fit of ``sweeps``
    sweeps, per number of threads."""
    model = DPMixture("gibbs", max_iter=sweeps, tol=None, n_jobs=2, random_state=seed).fit(X)
    rng = np.random.default_rng(seed)
    log_phi = np.log(model.components_)
    log_w = np.log(model.weights_)
    log_slice = log_w[model.labels_] + np.log1p(-rng.random(X.shape[0]))
    uniforms = rng.random(X.shape[0])
    X = kernel_layout(X)
    candidates = log_w.size - np.searchsorted(np.sort(log_w), log_slice)   # w_j >= u_i
    work = float(np.dot(np.diff(X.indptr), candidates))
    for n_jobs in threads:
        best = np.inf
        for _ in range(repeats):
            start = time.perf_counter()
            allocate_rows(X, log_phi, log_w, log_slice, uniforms, False, n_jobs)
            best = min(best, time.perf_counter() - start)
        yield dict(threads=n_jobs, components=log_w.size, rows=X.shape[0],
                   candidates=float(candidates.mean()), seconds=best,
                   ns_visit=1e9 * best * n_jobs / work)


def summarise(results):
    lines = [f"{'data':48} {'threads':>7} {'rows':>7} {'comp.':>6} {'cand.':>6} {'s':>7} "
             f"{'ns/visit':>8}"]
    for r in results["runs"]:
        lines.append(f"{r['data'][-48:]:48} {r['threads']:7d} {r['rows']:7d} "
                     f"{r['components']:6d} {r['candidates']:6.1f} {r['seconds']:7.3f} "
                     f"{r['ns_visit']:8.3f}")
    lines.append("ns/visit: nanoseconds of one thread a stored count and candidate")
    return "\n".join(lines)


def main():
    parser = cli.Parser(__file__, __doc__, summary_only=True,
                        quick=dict(rows=5_000, sweeps=5, repeats=3))
    parser.add_argument("--folders", nargs="*", default=[], metavar="DIR")
    parser.add_argument("--rows", type=int, default=100_000, help="rows read from a folder")
    parser.add_argument("--sweeps", type=int, default=20,
                        help="sweeps of the exact sampler before the allocations")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.summary_only:
        return cli.print_summaries(args.summary_only, summarise)
    cli.measure_each(args, data_sets(args),
                     lambda X: allocations(X, args.sweeps, args.repeats, args.threads),
                     summarise)


if __name__ == "__main__":
    main()
