"""SCIR step throughput: the Cython kernel (1 and 2 threads) against numpy's ``noncentral_chisquare`` (what the
authors' code calls, elementwise over the array of shapes), in coordinates per second.

Two workloads of K x W = 100 x 7702 coordinates (the paper's LDA topics):
``sparse`` has LDA-like shapes (prior 0.01, 97% zero counts, the rest up to ~10^4) and states
left by a previous step; ``dense`` has shapes around 100. Median of --repeats runs each. The JSON
also records the fraction of exact zeros each method returns: numpy's sampler underflows at
small shapes, which is the failure the kernel's log-space draw and floor prevent.

    python benchmarks/scir_throughput.py --out benchmarks/results/scir_throughput.json
"""
from functools import partial

import numpy as np

from simplexsg.simplex import scir_transition

from harness import cli
from harness.measure import median_seconds

K, W, H = 100, 7702, 0.1


def workloads(rng):
    sparse_counts = np.where(rng.random((K, W)) < 0.03, rng.pareto(1.0, (K, W)) * 50, 0.0)
    sparse_shape = 0.01 + sparse_counts
    dense_shape = rng.gamma(100.0, size=(K, W))
    return {
        "sparse": (scir_transition(rng.gamma(1.0, size=(K, W)), sparse_shape, H, rng), sparse_shape),
        "dense": (rng.gamma(100.0, size=(K, W)), dense_shape),
    }


def numpy_step(theta, shape, h, rng):
    """The reference code's step: c/2 * ncx2(2 shape, 2 theta e^-h / c), elementwise by numpy."""
    c = -np.expm1(-h)
    return c / 2 * rng.noncentral_chisquare(2 * shape, 2 * theta * np.exp(-h) / c)


def step(transition, theta, shape, rng):
    """One SCIR step of ``transition`` from ``theta``, as ``median_seconds`` runs it."""
    return lambda r: transition(theta, shape, H, rng)


def main():
    parser = cli.Parser(__file__, __doc__, quick=dict(repeats=3))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    results = {"coordinates": K * W, "h": H, "repeats": args.repeats, "workloads": {}}
    print(f"{'workload':>8} {'kernel Mcoord/s':>16} {'2 threads':>10} {'numpy Mcoord/s':>15} "
          f"{'ratio':>6} {'2 threads':>10} {'kernel zeros':>12} {'numpy zeros':>12}")
    for name, (theta, shape) in workloads(rng).items():
        t_kernel, out_kernel = median_seconds(step(scir_transition, theta, shape, rng),
                                              args.repeats)
        t_two, _ = median_seconds(step(partial(scir_transition, n_jobs=2), theta, shape, rng),
                                  args.repeats)
        t_numpy, out_numpy = median_seconds(step(numpy_step, theta, shape, rng), args.repeats)
        row = {
            "kernel_coordinates_per_s": K * W / t_kernel,
            "numpy_coordinates_per_s": K * W / t_numpy,
            "kernel_2_threads_coordinates_per_s": K * W / t_two,
            "speedup": t_numpy / t_kernel,
            "speedup_2_threads": t_numpy / t_two,
            "kernel_zero_fraction": float(np.mean(out_kernel == 0)),
            "numpy_zero_fraction": float(np.mean(out_numpy == 0)),
        }
        results["workloads"][name] = row
        print(f"{name:>8} {row['kernel_coordinates_per_s'] / 1e6:16.1f} "
              f"{row['kernel_2_threads_coordinates_per_s'] / 1e6:10.1f} "
              f"{row['numpy_coordinates_per_s'] / 1e6:15.1f} {row['speedup']:6.2f} "
              f"{row['speedup_2_threads']:10.2f} "
              f"{row['kernel_zero_fraction']:12.4f} {row['numpy_zero_fraction']:12.4f}")
    cli.write_results(results, args.out)


if __name__ == "__main__":
    main()
