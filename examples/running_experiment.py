"""The SCIR paper's running experiment (Figures 1 and 2): SCIR vs SGRLD vs exact Dirichlet sampling.

Prints the mean KS distance to the exact posterior of each sampler, step sizes tuned over the
authors' grids, for several minibatch sizes on the sparse and the dense posterior, and writes the
Figure 1 box plot (component 5, log scale, minibatch 10) as a PNG.

    python examples/running_experiment.py --out out
"""
import argparse
from pathlib import Path

import numpy as np

from simplexsg import SCIR, SGRLD
from simplexsg import running_experiment as rx
from simplexsg._optional import pyplot


def ks_table(counts, batch_sizes, seed):
    """Rows (batch size, exact KS, SCIR KS and h, SGRLD KS and h) for the posterior of ``counts``."""
    rng = np.random.default_rng(seed)
    alpha = rx.PRIOR + counts
    rows = []
    for n in batch_sizes:
        exact = np.mean([rx.dirichlet_ks_distance(rng.dirichlet(alpha, 1000), alpha)
                         for _ in range(5)])
        h_scir, ks_scir, _ = rx.tuned_ks(SCIR, rx.SCIR_GRID, counts, batch_size=n, random_state=rng)
        h_sgrld, ks_sgrld, _ = rx.tuned_ks(SGRLD, rx.SGRLD_GRID, counts, batch_size=n,
                                           random_state=rng)
        rows.append((n, exact, ks_scir, h_scir, ks_sgrld, h_sgrld))
    return rows


def box_plot(path, seed):
    """Figure 1: component 5 of 1000 kept samples (minibatch 10, tuned h) against exact draws."""
    plt = pyplot()
    rng = np.random.default_rng(seed)
    counts = rx.SPARSE_COUNTS
    h_scir, _, _ = rx.tuned_ks(SCIR, rx.SCIR_GRID, counts, random_state=rng)
    h_sgrld, _, _ = rx.tuned_ks(SGRLD, rx.SGRLD_GRID, counts, random_state=rng)
    samples = {
        "Exact": rng.dirichlet(rx.PRIOR + counts, 1000)[:, 4],
        f"SCIR (h={h_scir:g})": rx.run_chains(SCIR(h_scir), counts, random_state=rng)[:, 0, 4],
        f"SGRLD (h={h_sgrld:g})": rx.run_chains(SGRLD(h_sgrld), counts, random_state=rng)[:, 0, 4],
    }
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.boxplot(list(samples.values()), tick_labels=list(samples))
    ax.set_yscale("log")
    ax.set_ylabel("omega_5 (log scale)")
    ax.set_title("Sparse Dirichlet posterior, minibatch 10")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out", help="folder for the PNG (default: out)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    for name, counts in [("sparse", rx.SPARSE_COUNTS), ("dense", rx.DENSE_COUNTS)]:
        print(f"\n{name} posterior Dirichlet(0.1 + {counts.tolist()}): mean KS distance "
              "(lower is better; 1000 samples after 1000 burn-in, 5 chains)")
        print(f"{'minibatch':>9} {'exact':>7} {'SCIR':>7} {'h':>6} {'SGRLD':>7} {'h':>6}")
        for n, exact, ks_scir, h_scir, ks_sgrld, h_sgrld in ks_table(counts, (1, 10, 100, 500),
                                                                    args.seed):
            print(f"{n:>9} {exact:7.3f} {ks_scir:7.3f} {h_scir:6g} {ks_sgrld:7.3f} {h_sgrld:6g}")

    png = out / "running_experiment_boxplot.png"
    box_plot(png, args.seed)
    print(f"\nFigure 1 box plot written to {png}")


if __name__ == "__main__":
    main()
