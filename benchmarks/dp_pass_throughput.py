"""Throughput of the split-merge passes of the DP mixture: ``SplitMerge.sequential_pass`` (the
sequential allocation of a split proposal) on blocks of rows drawn at random, alone, one
thread: milliseconds a pass, nanoseconds a row and a stored count.

Data: the folders ``dp_scale.py`` prepared (--folders, each an ``N<rows>`` folder holding
``docword.txt``), of which the first --rows rows (a pilot's rows on short rows: 200,000; on
rows of 40 stored counts about 120,000), or with --quick Poisson rows of 8 and of 40 counts.
Each block of --blocks rows is passed --repeats times; the fastest is reported, so that a
change of the kernel shows against the machine's noise (compare two builds turn by turn).

    python benchmarks/dp_pass_throughput.py --folders /tmp/dp_scale/fortunes_W1000_base0.05/N1000000
    python benchmarks/dp_pass_throughput.py --quick      # seconds
"""
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from simplexsg.dpmixture.split_merge import SplitMerge

from harness import cli
from harness.dp_rows import first_rows

BASE = 0.5                      # DPMixture's default base_concentration


def data_sets(args):
    """(name, CSR rows) of each folder, or of the quick mode's Poisson rows."""
    if args.quick:
        rng = np.random.default_rng(0)
        for mean in (0.008, 0.04):                       # about 8 and 40 counts over 1,000
            yield f"poisson-{mean * 1000:g}", sp.csr_matrix(
                rng.poisson(mean, size=(args.rows, 1000)).astype(np.float64))
        return
    for folder in map(Path, args.folders):
        yield str(folder), first_rows(folder, args.rows)


def passes(X, sizes, repeats, seed=0):
    """Per block size: the fastest of ``repeats`` passes over one random block of that size."""
    move, rng = SplitMerge(X, BASE), np.random.default_rng(seed)
    entries = np.diff(X.indptr)
    for size in sizes:
        size = min(size, X.shape[0] - 2)
        rows = rng.choice(X.shape[0], size + 2, replace=False)
        others, side = rows[2:].astype(np.int64), np.empty(size, dtype=np.int8)
        uniforms, best = rng.random(size), np.inf
        for _ in range(repeats):
            start = time.perf_counter()
            move.sequential_pass(int(rows[0]), int(rows[1]), others, side, False, uniforms)
            best = min(best, time.perf_counter() - start)
        yield dict(block=size, ms=1e3 * best, ns_row=1e9 * best / size,
                   ns_count=1e9 * best / entries[others].sum())


def summarise(results):
    lines = [f"{'data':48} {'block':>7} {'ms':>8} {'ns/row':>7} {'ns/count':>8}"]
    for r in results["runs"]:
        lines.append(f"{r['data'][-48:]:48} {r['block']:7d} {r['ms']:8.2f} {r['ns_row']:7.0f} "
                     f"{r['ns_count']:8.1f}")
    return "\n".join(lines)


def main():
    parser = cli.Parser(__file__, __doc__, summary_only=True,
                        quick=dict(rows=10_000, blocks=[2_000, 8_000], repeats=3))
    parser.add_argument("--folders", nargs="*", default=[], metavar="DIR")
    parser.add_argument("--rows", type=int, default=200_000, help="rows read from a folder")
    parser.add_argument("--blocks", type=int, nargs="+", default=[2_000, 20_000, 60_000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.summary_only:
        return cli.print_summaries(args.summary_only, summarise)
    cli.measure_each(args, data_sets(args), lambda X: passes(X, args.blocks, args.repeats),
                     summarise)


if __name__ == "__main__":
    main()
