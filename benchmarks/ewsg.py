"""EWSG against SGHMC, SGLD and SGLD-CV at equal numbers of per-datum gradient evaluations.

Cost accounting (per-datum gradient evaluations): SGLD and SGHMC with minibatch b cost b per
step; EWSG with M proposals (M + 1) b per step; SGLD-CV 2 b per step plus one full pass (N) at
its centre. Each method gets the same budget, so EWSG (M = 1) runs half as many steps.

1. 2-D Gaussian (Li et al. Sec. 5.1): V(theta) = sum_i ||theta - c_i||^2 / 2, c_i ~ N(0, I_2),
   n = 50 data, flat prior, posterior N(mean c, I / n); b = 1. Many independent chains started
   at mean c + 0.5; the final states give a Gaussian fit, scored by KL(fit || posterior).
2. Bayesian logistic regression on scikit-learn's bundled breast_cancer, wine (class 0 against
   the rest) and digits (0-4 against 5-9), standardised on a 75/25 stratified split, plus a
   column of ones; prior N(0, I); b = 10. Predictive probability = sigmoid averaged over the second half of the kept states of all chains; held-out accuracy
   and mean log-likelihood.

Medians over seeds. Step sizes are fixed (not tuned per method beyond stability).

    python benchmarks/ewsg.py --out benchmarks/results/ewsg.json          # full
    python benchmarks/ewsg.py --quick                                     # 3 seeds, fewer passes
"""
import time

import numpy as np
from scipy.special import expit
from sklearn.datasets import load_breast_cancer, load_digits, load_wine

from simplexsg.sgmcmc import (SGHMC, SGLD, ControlVariateGradient, GaussianLocationModel,
                              LogisticRegressionModel, MinibatchGradient, find_centre, sample)
from simplexsg._optional import pyplot
from simplexsg.sgmcmc.ewsg import ExponentiallyWeightedGradient

from harness import cli
from harness.corpora import stratified_split


def methods(b, h_sghmc, friction, h_sgld, centre):
    """name -> (estimator, integrator, evaluations per step, fixed evaluations)."""
    return {
        "SGLD": (MinibatchGradient(b, replace=True), SGLD(h_sgld), b, 0),
        "SGLD-CV": (ControlVariateGradient(centre, b, replace=True), SGLD(h_sgld), 2 * b, None),
        "SGHMC": (MinibatchGradient(b, replace=True), SGHMC(h_sghmc, friction), b, 0),
        "EWSG": (ExponentiallyWeightedGradient(b, n_proposals=1), SGHMC(h_sghmc, friction),
                 2 * b, 0),
    }


def gaussian_kl(samples, mean, cov):
    m, C = samples.mean(axis=0), np.cov(samples.T)
    P = np.linalg.inv(cov)
    d = len(mean)
    return 0.5 * (np.trace(P @ C) + (mean - m) @ P @ (mean - m) - d
                  + np.log(np.linalg.det(cov) / np.linalg.det(C)))


def gaussian(seed, passes, n_chains, n=50):
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((n, 2))
    mean, cov = c.mean(axis=0), np.eye(2) / n
    out = {}
    for name, (est, integ, per_step, fixed) in methods(1, 0.005, 20.0, 0.002, mean).items():
        fixed = n if fixed is None else fixed
        n_iter = max(1, (passes * n - fixed) // per_step)
        res = sample(GaussianLocationModel(), (c,), est, integ, n_iter,
                     theta0=np.tile(mean + 0.5, (n_chains, 1)), random_state=seed)
        out[name] = {"kl": float(gaussian_kl(res.chain[-1], mean, cov)), "steps": n_iter}
    return out


def binary(loader, positive):
    """A bundled scikit-learn classification set as (X, y in {0, 1}): class ``positive`` (a
    label, or a set of them) against the rest."""
    def load():
        X, y = loader(return_X_y=True)
        return X, np.isin(y, positive).astype(int)
    return load


#: The bundled data sets of the logistic-regression experiment (name: loader).
LOGISTIC_SETS = {"breast_cancer": binary(load_breast_cancer, [1]),
                 "wine (class 0 vs rest)": binary(load_wine, [0]),
                 "digits (0-4 vs 5-9)": binary(load_digits, [0, 1, 2, 3, 4])}


def logistic(seed, passes, n_chains, b=10, load=LOGISTIC_SETS["breast_cancer"]):
    X_tr, X_te, y_tr, y_te = stratified_split(*load(), seed)
    X_tr, X_te = (np.column_stack([A, np.ones(len(A))]) for A in (X_tr, X_te))
    data, N = (X_tr, y_tr.astype(float)), len(y_tr)
    model = LogisticRegressionModel()
    centre = find_centre(model, data)
    centre = getattr(centre, "centre", centre)
    out = {}
    for name, (est, integ, per_step, fixed) in methods(b, 0.002, 20.0, 0.0005,
                                                        centre).items():
        out[name] = {}
        for p in passes:
            fixed_p = N if fixed is None else fixed
            n_iter = max(2, (p * N - fixed_p) // per_step)
            res = sample(model, data, est, integ, n_iter, theta0=np.tile(centre, (n_chains, 1)),
                         random_state=seed)
            kept = res.chain[n_iter // 2:].reshape(-1, X_tr.shape[1])
            prob = np.clip(expit(X_te @ kept.T).mean(axis=1), 1e-12, 1 - 1e-12)
            out[name][str(p)] = {
                "accuracy": float(np.mean((prob > 0.5) == y_te)),
                "loglik": float(np.mean(y_te * np.log(prob) + (1 - y_te) * np.log(1 - prob)))}
    return out


def median_table(runs, path):
    """Median over seeds of the leaf at ``path`` (a list of keys) for each method."""
    vals = {}
    for run in runs:
        for name, res in run.items():
            v = res
            for k in path:
                v = v[k]
            vals.setdefault(name, []).append(v)
    return {name: float(np.median(v)) for name, v in vals.items()}


def main():
    parser = cli.Parser(__file__, __doc__, seeds=5, quick=dict(seeds=3),
                        quick_help="fewer chains and passes")
    args = parser.parse_args()
    seeds = range(args.seeds)
    g_passes = [10, 30] if args.quick else [10, 30, 100]
    l_passes = [5, 20] if args.quick else [10, 40, 100]
    g_chains, l_chains = (500, 10) if args.quick else (2000, 20)
    start = time.perf_counter()
    results = {"quick": args.quick, "seeds": list(seeds), "gaussian": {}, "logistic": {}}
    for p in g_passes:
        runs = [gaussian(s, p, g_chains) for s in seeds]
        results["gaussian"][str(p)] = {"runs": runs, "median_kl": median_table(runs, ["kl"])}
    for set_name, load in LOGISTIC_SETS.items():
        runs = [logistic(s, l_passes, l_chains, load=load) for s in seeds]
        entry = results["logistic"][set_name] = {"runs": runs}
        for p in l_passes:
            entry[str(p)] = {"median_accuracy": median_table(runs, [str(p), "accuracy"]),
                             "median_loglik": median_table(runs, [str(p), "loglik"])}
    results["seconds"] = time.perf_counter() - start

    print("2-D Gaussian, median KL(fit || posterior) over seeds, by data passes")
    names = list(results["gaussian"][str(g_passes[0])]["median_kl"])
    print("passes  " + "  ".join(f"{n:>9}" for n in names))
    for p in g_passes:
        row = results["gaussian"][str(p)]["median_kl"]
        print(f"{p:>6}  " + "  ".join(f"{row[n]:9.4f}" for n in names))
    for set_name in LOGISTIC_SETS:
        print(f"Logistic regression ({set_name}), median held-out accuracy / mean log-lik")
        for p in l_passes:
            acc = results["logistic"][set_name][str(p)]["median_accuracy"]
            ll = results["logistic"][set_name][str(p)]["median_loglik"]
            print(f"{p:>6}  " + "  ".join(f"{acc[n]:.4f}/{ll[n]:.4f}" for n in names))
    print(f"{results['seconds']:.1f} s")

    cli.write_results(results, args.out, plot)


def plot(results, path):
    passes = [int(p) for p in results["gaussian"]]
    names = list(results["gaussian"][str(passes[0])]["median_kl"])
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for n in names:
        ax.plot(passes, [results["gaussian"][str(p)]["median_kl"][n] for p in passes],
                "o-", label=n)
    ax.set(xscale="log", yscale="log", xlabel="data passes (per-datum gradients / n)",
           ylabel="median KL", title="2-D Gaussian")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
