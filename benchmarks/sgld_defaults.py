"""Accuracy of BayesianLinearRegression's default samplers against the exact posterior.

Data: N rows, 3 features x_i ~ N(0, I), y = x . (1, -0.5, 0.25) + 0.3 + N(0, 1); data seed and
chain seed = seed. Each sampler runs at its defaults (``noise_variance=None``, n_iter=2000), so
the exact posterior is ``LinearRegressionModel(1, 1 / noise_variance_).posterior``. Reported per
sampler and N: the sd ratio (chain sd / exact posterior sd) per coordinate (3 coefficients and
the intercept), median over the seeds; in brackets the smallest and largest coordinate; then the
median |chain mean - exact mean| in posterior sds, the number of fits that warned, and the
mean fit time.

"sghmc (before)" is the former default, rebuilt from ``simplexsg.sgmcmc`` parts: minibatch
1% of N (at least 32), h = sqrt(0.1 / L), friction 0.1 / h, no gradient-noise correction,
start at 0, burn-in n_iter // 2. ("sgld" and "sgldcv" defaults did not change; "sgld" now
warns.)

    python benchmarks/sgld_defaults.py [--ns 2000,20000,200000] [--seeds 8]
"""
import argparse
import time
import warnings

import numpy as np

from simplexsg import BayesianLinearRegression
from simplexsg.linear import _largest_hessian_eigenvalue
from simplexsg.sgmcmc import SGHMC, LinearRegressionModel, MinibatchGradient, sample


def dataset(N, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 3))
    return X, X @ np.array([1.0, -0.5, 0.25]) + 0.3 + rng.standard_normal(N)


def former_sghmc(X, y, noise_variance, seed, n_iter=2000):
    """Kept states of the former "sghmc" default."""
    N = len(X)
    design = np.column_stack([X, np.ones(N)])
    model = LinearRegressionModel(prior_precision=1.0, noise_precision=1.0 / noise_variance)
    h = np.sqrt(0.1 / _largest_hessian_eigenvalue(1.0, design, 1.0 / noise_variance))
    n = min(N, max(32, int(np.ceil(0.01 * N))))
    res = sample(model, (design, y), MinibatchGradient(n), SGHMC(h, friction=0.1 / h), n_iter,
                 random_state=seed)
    return res.chain[n_iter // 2:]


def run(sampler, N, seed):
    X, y = dataset(N, seed)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = BayesianLinearRegression(
            sampler="sghmc" if sampler == "sghmc (before)" else sampler,
            random_state=seed).fit(X, y)
    theta = np.column_stack([model.coef_samples_, model.intercept_samples_])
    if sampler == "sghmc (before)":
        start = time.perf_counter()
        theta, caught = former_sghmc(X, y, model.noise_variance_, seed), []
    seconds = time.perf_counter() - start
    design = np.column_stack([X, np.ones(N)])
    mean, cov = LinearRegressionModel(
        prior_precision=1.0, noise_precision=1.0 / model.noise_variance_).posterior((design, y))
    sd = np.sqrt(np.diag(cov))
    return theta.std(axis=0) / sd, np.abs(theta.mean(axis=0) - mean) / sd, bool(caught), seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", default="2000,20000,200000")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--samplers", default="sgldcv,sgld,sghmc (before),sghmc")
    args = parser.parse_args()
    print(f"{'sampler':15s} {'N':>7s}  sd ratio median [coords]   |mean err|/sd  warned  fit")
    for sampler in args.samplers.split(","):
        for N in map(int, args.ns.split(",")):
            rows = [run(sampler, N, seed) for seed in range(args.seeds)]
            ratio = np.median([r[0] for r in rows], axis=0)
            error = np.median([r[1] for r in rows], axis=0)
            print(f"{sampler:15s} {N:7d}  {np.median(ratio):5.2f} [{ratio.min():.2f}, "
                  f"{ratio.max():.2f}]        {np.median(error):5.2f}       "
                  f"{sum(r[2] for r in rows)}/{len(rows)}    "
                  f"{np.mean([r[3] for r in rows]):.2f}s", flush=True)


if __name__ == "__main__":
    main()
