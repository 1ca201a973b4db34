"""BayesianLinearRegression's defaults: the samplers against the exact posterior, and the
estimator on raw data against scikit-learn's BayesianRidge.

**Samplers** (default). Data: N rows, 3 features x_i ~ N(0, I), y = x . (1, -0.5, 0.25) + 0.3
+ N(0, 1); data seed and chain seed = seed. Each sampler runs at its defaults
(``noise_variance=None``, n_iter=2000); the exact posterior is that of the estimator's model
(class docstring: coef_j a priori N(0, (s_y / s_j)^2), flat intercept, noise variance
``noise_variance_``), derived on the original scale. Reported per sampler and N: the sd ratio
(chain sd / exact posterior sd) per coordinate (3 coefficients and the intercept), median over
the seeds; in brackets the smallest and largest coordinate; then the median |chain mean - exact
mean| in posterior sds, the number of fits that warned, and the mean fit time.

"sghmc (before)" is the former "sghmc" default, rebuilt from ``simplexsg.sgmcmc`` parts on the
same standardised problem: minibatch 1% of N (at least 32), h = sqrt(0.1 / L), friction
0.1 / h, no gradient-noise correction, start at 0, burn-in n_iter // 2.

**Datasets** (``--datasets``). R^2 of 5-fold cross-validation (unshuffled folds, as
scikit-learn's default): the mean over the folds (``cross_val_score``) and, more stable on
small data, that of the pooled out-of-fold predictions (``cross_val_predict``). Methods:
BayesianRidge, least squares, the former BayesianLinearRegression model (N(0, 1) prior on the
raw coefficients and intercept, noise variance the least-squares residual variance) by its exact
posterior mean, which its chains estimated, and BayesianLinearRegression at its defaults
(random_state=0). Raw data: ``load_diabetes``; ``make_regression(n_samples=500, n_features=8,
n_informative=5, noise=20, bias=1000, random_state=0)`` with y multiplied by 100 and the
columns of X by 10^-3 ... 10^3 (``big``); each target of ``load_linnerud`` (20 rows).

    python benchmarks/sgld_defaults.py [--ns 2000,20000,200000] [--seeds 8]
    python benchmarks/sgld_defaults.py --datasets

The tables go to the JSON at --out (by default ``results/sgld_defaults.json``, with
--datasets ``results/sgld_defaults_datasets.json``).
"""
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.datasets import load_diabetes, load_linnerud, make_regression
from sklearn.linear_model import BayesianRidge, LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import cross_val_predict, cross_val_score

from simplexsg import BayesianLinearRegression
from simplexsg.sgmcmc.regression_defaults import largest_hessian_eigenvalue
from simplexsg.sgmcmc import SGHMC, MinibatchGradient, sample

from harness import cli


def dataset(N, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 3))
    return X, X @ np.array([1.0, -0.5, 0.25]) + 0.3 + rng.standard_normal(N)


def exact_posterior(X, y, noise_variance, prior_scale=1.0):
    """Mean and covariance of (coef, intercept) under BayesianLinearRegression's model."""
    design = np.column_stack([X, np.ones(len(X))])
    precision = np.append((X.std(axis=0) / (prior_scale * y.std())) ** 2, 0.0)
    H = np.diag(precision) + design.T @ design / noise_variance
    cov = np.linalg.inv(H)
    return cov @ design.T @ y / noise_variance, cov


def former_sghmc(fitted, X, y, seed, n_iter=2000):
    """Kept states, on the original scale, of the former "sghmc" default on the standardised
    problem of ``fitted`` (a fitted BayesianLinearRegression)."""
    design, z = fitted._scaling.data(X, y)
    model = fitted._model(1.0, (design, z))
    h = np.sqrt(0.1 / largest_hessian_eigenvalue(1.0, design, model.noise_precision))
    n = min(len(X), max(32, int(np.ceil(0.01 * len(X)))))
    res = sample(model, (design, z), MinibatchGradient(n), SGHMC(h, friction=0.1 / h), n_iter,
                 random_state=seed)
    coef, intercept = fitted._scaling.original(res.chain[n_iter // 2:])
    return np.column_stack([coef, intercept])


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
        theta, caught = former_sghmc(model, X, y, seed), []
    seconds = time.perf_counter() - start
    mean, cov = exact_posterior(X, y, model.noise_variance_)
    sd = np.sqrt(np.diag(cov))
    return theta.std(axis=0) / sd, np.abs(theta.mean(axis=0) - mean) / sd, bool(caught), seconds


def samplers(args):
    """The samplers' table; its rows, as in the JSON."""
    print(f"{'sampler':15s} {'N':>7s}  sd ratio median [coords]   |mean err|/sd  warned  fit")
    table = []
    for sampler in args.samplers.split(","):
        for N in map(int, args.ns.split(",")):
            rows = [run(sampler, N, seed) for seed in range(args.seeds)]
            ratio = np.median([r[0] for r in rows], axis=0)
            error = np.median([r[1] for r in rows], axis=0)
            table.append(dict(sampler=sampler, N=N, sd_ratio=ratio, mean_error_in_sd=error,
                              warned=sum(r[2] for r in rows), fits=len(rows),
                              mean_seconds=float(np.mean([r[3] for r in rows]))))
            print(f"{sampler:15s} {N:7d}  {np.median(ratio):5.2f} [{ratio.min():.2f}, "
                  f"{ratio.max():.2f}]        {np.median(error):5.2f}       "
                  f"{sum(r[2] for r in rows)}/{len(rows)}    "
                  f"{np.mean([r[3] for r in rows]):.2f}s", flush=True)
    return table


def regression_sets():
    """name -> (X, y) of raw regression data."""
    sets = {"diabetes": load_diabetes(return_X_y=True)}
    X, y = make_regression(n_samples=500, n_features=8, n_informative=5, noise=20.0,
                           bias=1000.0, random_state=0)
    sets["big"] = (X * np.logspace(-3, 3, X.shape[1]), 100 * y)
    linnerud = load_linnerud()
    for j, name in enumerate(linnerud.target_names):
        sets[f"linnerud {name}"] = (linnerud.data, linnerud.target[:, j])
    return sets


class FormerPosteriorMean(RegressorMixin, BaseEstimator):
    """The former BayesianLinearRegression's posterior mean: y ~ N(x . coef + intercept, s2)
    with (coef, intercept) a priori N(0, I) and s2 the least-squares residual variance."""

    def fit(self, X, y):
        design = np.column_stack([X, np.ones(len(X))])
        ols = np.linalg.lstsq(design, y, rcond=None)[0]
        s2 = np.sum((y - design @ ols) ** 2) / (len(y) - design.shape[1])
        theta = np.linalg.solve(np.eye(design.shape[1]) + design.T @ design / s2,
                                design.T @ y / s2)
        self.coef_, self.intercept_ = theta[:-1], theta[-1]
        return self

    def predict(self, X):
        return X @ self.coef_ + self.intercept_


def datasets():
    """The raw data sets' table; its rows, as in the JSON."""
    methods = {"BayesianRidge": BayesianRidge, "least squares": LinearRegression,
               "former": FormerPosteriorMean,
               "BayesianLinearRegression": lambda: BayesianLinearRegression(random_state=0)}
    print(f"{'data':18s} {'N':>4s} {'sd(y)':>8s}  " + "  ".join(f"{m:>24s}" for m in methods))
    print(f"{'':33s}" + "  ".join(f"{'folds  pooled  seconds':>24s}" for m in methods))
    table = []
    for name, (X, y) in regression_sets().items():
        cells = []
        for method, make in methods.items():
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                folds = cross_val_score(make(), X, y, cv=5).mean()
                seconds = time.perf_counter() - start
                pooled = r2_score(y, cross_val_predict(make(), X, y, cv=5))
            warned = any(issubclass(w.category, UserWarning) for w in caught)
            table.append(dict(data=name, N=len(y), method=method, r2_folds=folds,
                              r2_pooled=pooled, warned=warned, seconds=seconds))
            cells.append(f"{folds:7.3f} {pooled:7.3f}{'*' if warned else ' '}{seconds:6.2f}s")
        print(f"{name:18s} {len(y):4d} {y.std():8.3g}  " + "  ".join(f"{c:>24s}" for c in cells),
              flush=True)
    print("* warned; seconds: the 5 fits of the folds")
    return table


def main():
    parser = cli.Parser(__file__, __doc__, seeds=8, quick=dict(ns="2000,20000", seeds=2))
    parser.add_argument("--ns", default="2000,20000,200000")
    parser.add_argument("--samplers", default="sgldcv,sgld,sghmc (before),sghmc")
    parser.add_argument("--datasets", action="store_true",
                        help="the estimator on raw data against BayesianRidge instead")
    args = parser.parse_args()
    if args.datasets and args.out == cli.default_out(parser.name, args.quick):
        args.out = args.out.with_name(f"{parser.name}_datasets.json")
    if args.datasets:
        cli.write_results({"datasets": datasets()}, args.out)
    else:
        cli.write_results({"settings": vars(args), "samplers": samplers(args)}, args.out)


if __name__ == "__main__":
    main()
