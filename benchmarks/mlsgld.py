"""Multilevel SGLD vs SGLD vs SGLD-CV on the MLMC paper's Bayesian logistic regression.

Nagapetyan, Szpruch, Vollmer, Zygalakis & Giles, "Multilevel Monte Carlo for scalable Bayesian
computations" (2017), Section 4: logistic regression, d = 3, prior N(0, I), covariates
(N(0,1), N(0,1), 1), N in {100, 316, 1000, 3162, 10000}, minibatch n = ceil(N^(1/3)), test
function g(theta) = |theta - theta_MAP|^2, accuracy as relative (R)MSE against cost.

**Data.** One dataset of max(N) rows from --data-seed; the dataset for N is its first N rows.
The paper does not say how labels were simulated: here y_i ~ Bernoulli(sigmoid(x_i . beta)),
beta = (1, -1, 0.5).

**Reference** E_pi[g]: Gauss-Hermite quadrature (--nodes^3 nodes) of the exact posterior in the
coordinates of its Laplace fit (theta = MAP + chol(H^-1) z), self-normalised; its convergence
is checked against (--nodes + 8)^3 nodes and, for N <= --mala-max-n, against a long
preconditioned MALA run (Metropolis-corrected, so exact; its Monte Carlo standard error from
the spread across chains is reported). Quadrature replaces the "long exact-gradient run" because
it is deterministic and far more accurate for this smooth 3-d posterior.

**Methods** (cost = per-datum gradient evaluations, shown in epochs = cost / N; the one-off setup
- MAP, gradients and Hessian at the MAP - is excluded, as in the paper):

- ``SGLD``: ``sample`` with ``MinibatchGradient(n, replace=True)``, one chain from the MAP per
  replicate, estimate = time average of g over the last 90% of the chain (the first 10% is
  burn-in, charged). For a budget of c epochs the step is h = a c^(-1/3) / N (the optimal
  O(c^-1/3) scaling of Teh, Thiery & Vollmer 2016), a the best of --sgld-grid at the middle
  budget (tuned on separate seeds, then fixed for all budgets).
- ``SGLD-CV``: the same with ``ControlVariateGradient(MAP, n)``, grid --cv-grid. Counted as n per
  step (its centre terms can be cached per datum; this implementation evaluates 2n).
- ``MLSGLD``: ``multilevel_estimate`` with the paper's best variant, antithetic coupling and the
  Taylor gradient, h_0 = 1/N, T_l = 5 (l + 1) h_0 (m = 5), end-point values, with Giles' adaptive
  rule (target RMSE eps * reference, eps = 2^(-k/2), k = 2..10 as the paper, pilot --pilot
  samples per level, levels added until the bias estimate <= eps / sqrt 2). Minibatches with
  replacement (for speed; the paper allows both).

Relative MSE = mean over --reps replicates of (estimate - reference)^2 / reference^2. Slopes:
least-squares fits of log relMSE on log cost per method and N (MLSGLD: k >= 5 only; below,
the cost is set by the pilot samples, not the target); claimed -2/3 for SGLD (RMSE
O(c^-1/3)) and -1 for MLSGLD (RMSE O(c^-1/2)); the paper makes no claim for SGLD-CV. Cost to
relative RMSE 2^-5 (the paper's Fig. 3b) is read off each fitted line and fitted against N:
claimed sublinear (slope < 1) for MLSGLD with Taylor, ~1 for MALA. MLSGLD's cost there is the
mean cost of its k = 10 runs (as the paper's Fig. 3b); the others' is interpolated on their
curves (``*`` / "extrapolated": the fitted line, the curve never got there; extrapolated
values are left out of the fit against N).

    python benchmarks/mlsgld.py [--quick] [--out benchmarks/results/mlsgld.json]
"""
import math
import time
import warnings

import numpy as np
from numpy.polynomial.hermite_e import hermegauss

from simplexsg.sgmcmc import (SGLD, ControlVariateGradient, LogisticRegressionModel,
                              MinibatchGradient, find_centre, sample)
from simplexsg._optional import pyplot
from simplexsg.sgmcmc.multilevel import multilevel_estimate

from harness import cli
from harness.posterior import mala

BETA = np.array([1.0, -1.0, 0.5])


def make_data(n_max, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.standard_normal((n_max, 2)), np.ones(n_max)])
    y = (rng.random(n_max) < 1 / (1 + np.exp(-X @ BETA))).astype(float)
    return X, y


def neg_hessian(X, theta):
    p = 1 / (1 + np.exp(-(X @ theta)))
    return np.eye(X.shape[1]) + (X * (p * (1 - p))[:, None]).T @ X


def quadrature(model, data, c, nodes):
    """E_pi[|theta - c|^2] by Gauss-Hermite quadrature in Laplace coordinates."""
    d = len(c)
    z1, w1 = hermegauss(nodes)
    Z = np.stack(np.meshgrid(*[z1] * d, indexing="ij"), -1).reshape(-1, d)
    logw = np.sum(np.log(np.stack(np.meshgrid(*[w1] * d, indexing="ij"), -1).reshape(-1, d)),
                  axis=1)
    Lc = np.linalg.cholesky(np.linalg.inv(neg_hessian(data[0], c)))
    theta = c + Z @ Lc.T
    logp = np.concatenate([model.log_posterior(t, data) for t in np.array_split(theta, 20)])
    logr = logw + logp + 0.5 * (Z ** 2).sum(axis=1)
    w = np.exp(logr - logr.max())
    return float(w @ ((theta - c) ** 2).sum(axis=1) / w.sum())


def mala_check(model, data, c, n_chains, n_iter, burn, seed):
    """E_pi[|theta - c|^2] by ``harness.posterior.mala`` (proposal covariance 2 h H^-1 with the
    Laplace H, h = 1.3 / d^(1/3)) from the MAP: ``n_iter`` iterations of which the first
    ``burn`` are discarded. Returns the mean over chains, its standard error and the
    acceptance rate over all iterations."""
    d = len(c)
    kept, accepted = mala(model, data, np.linalg.inv(neg_hessian(data[0], c)),
                          np.tile(c, (n_chains, 1)), n_iter - burn, burn, 1.3 / d ** (1 / 3),
                          np.random.default_rng(seed))
    means = ((kept - c) ** 2).sum(axis=-1).mean(axis=0)
    return float(means.mean()), float(means.std(ddof=1) / math.sqrt(n_chains)), \
        accepted.sum() / (n_chains * n_iter)


def sgld_run(model, data, c, estimator, epochs, a, reps, ref, seed):
    """Relative MSE of ``reps`` SGLD time averages: budget ``epochs``, h = a epochs^-1/3 / N."""
    N, n = len(data[1]), estimator.batch_size
    K = max(10, int(round(epochs * N / n)))
    h = a * epochs ** (-1 / 3) / N
    chain = sample(model, data, estimator, SGLD(h), K, theta0=np.tile(c, (reps, 1)),
                   thin=max(1, K // 2000), random_state=seed).chain
    g = ((chain[len(chain) // 10:] - c) ** 2).sum(axis=-1)      # (kept, reps), 10% burn-in
    return dict(epochs=K * n / N, a=a, h=h,
                rel_mse=float(np.mean((g.mean(axis=0) - ref) ** 2) / ref ** 2))


def sgld_curve(model, data, c, estimator, grid, budgets, tune_epochs, reps, ref, seed):
    """Tune a on ``grid`` at ``tune_epochs`` (fresh seeds), then run every budget with it."""
    tuning = [sgld_run(model, data, c, estimator, tune_epochs, a, reps, ref,
                       np.random.SeedSequence([seed, 999, i])) for i, a in enumerate(grid)]
    a = min(tuning, key=lambda r: r["rel_mse"])["a"]
    return [sgld_run(model, data, c, estimator, e, a, reps, ref,
                     np.random.SeedSequence([seed, i])) for i, e in enumerate(budgets)], tuning


def ml_curve(model, data, c, ks, reps, ref, pilot, seed):
    N = len(data[1])
    rows = []
    for k in ks:
        eps = 2 ** (-k / 2)
        est, cost, levels = [], [], []
        for r in range(reps):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res = multilevel_estimate(
                    model, data, lambda t: ((t - c) ** 2).sum(axis=-1), max_level=10,
                    gradient="taylor", coupling="antithetic", replace=True, centre=c,
                    target_rmse=eps * ref, adaptive_levels=True, n_pilot=pilot,
                    random_state=np.random.SeedSequence([seed, k, r]))
            est.append(float(res.estimate))
            cost.append(res.total_cost / N)
            levels.append(res.n_levels - 1)
        est = np.array(est)
        rows.append(dict(k=k, target_rel_rmse=eps, epochs=float(np.mean(cost)),
                         rel_mse=float(np.mean((est - ref) ** 2) / ref ** 2),
                         max_level_mean=float(np.mean(levels))))
    return rows


def cost_at(rows, slope, icpt, target=2.0 ** -10):
    """Epochs to relative MSE ``target`` (relative RMSE 2^-5): MLSGLD, the mean cost of its runs
    aimed at it (k = 10, as the paper's Fig. 3b); otherwise log-log interpolation at the first
    crossing of the curve, or (``extrapolated``) the fitted line when the curve never gets
    there."""
    for r in rows:
        if r.get("k") == 10:
            return dict(epochs=r["epochs"], extrapolated=False)
    for r0, r1 in zip(rows, rows[1:]):
        if r0["rel_mse"] > target >= r1["rel_mse"]:
            t = (math.log(target / r0["rel_mse"])) / math.log(r1["rel_mse"] / r0["rel_mse"])
            return dict(epochs=math.exp(math.log(r0["epochs"]) + t * math.log(
                r1["epochs"] / r0["epochs"])), extrapolated=False)
    if rows[0]["rel_mse"] <= target:
        return dict(epochs=rows[0]["epochs"], extrapolated=False, upper_bound=True)
    if slope > -0.3:      # a flat (bias-dominated) curve: no meaningful extrapolation
        return dict(epochs=None, extrapolated=True)
    return dict(epochs=math.exp((math.log(target) - icpt) / slope), extrapolated=True)


def fit(x, y):
    slope, icpt = np.polyfit(np.log(x), np.log(y), 1)
    return float(slope), float(icpt)


def main():
    ap = cli.Parser(__file__, __doc__, quick={},
                    quick_help="N 100 1000 10000, budgets up to 64 epochs, k 2-10 by 2, "
                    "8 replicates, shorter MALA")
    ap.add_argument("--data-seed", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reps", type=int, default=None, help="replicates (20; quick 8)")
    ap.add_argument("--nodes", type=int, default=24)
    ap.add_argument("--pilot", type=int, default=20)
    ap.add_argument("--mala-max-n", type=int, default=1000)
    ap.add_argument("--sgld-grid", type=float, nargs="+", default=[1, 0.3, 0.1, 0.03, 0.01, 0.003])
    ap.add_argument("--cv-grid", type=float, nargs="+", default=[3.0, 1.0, 0.3, 0.1])
    args = ap.parse_args()
    if args.quick:
        Ns, budgets, ks, reps = [100, 1000, 10000], [1, 4, 16, 64], [2, 4, 6, 8, 10], 8
    else:
        Ns, budgets, ks, reps = ([100, 316, 1000, 3162, 10000], [1, 4, 16, 64, 256],
                                 list(range(2, 11)), 20)
    reps = args.reps or reps
    X, y = make_data(max(Ns), args.data_seed)
    model = LogisticRegressionModel()
    results = dict(config=dict(vars(args), Ns=Ns, budgets_epochs=budgets, ks=ks, reps=reps,
                               beta=BETA.tolist()), per_N=[])
    t_all = time.time()
    for N in Ns:
        data = (X[:N], y[:N])
        t0 = time.time()
        c = find_centre(model, data)
        n = int(math.ceil(N ** (1 / 3) - 1e-9))
        ref = quadrature(model, data, c, args.nodes)
        ref_check = quadrature(model, data, c, args.nodes + 8)
        entry = dict(N=N, batch_size=n, reference=ref,
                     quadrature_rel_change=abs(ref_check - ref) / ref)
        if N <= args.mala_max_n:
            m, se, acc = mala_check(model, data, c, 100, 4000 if args.quick else 10000, 1000,
                                    args.seed)
            entry["mala_check"] = dict(mean=m, se=se, z=(m - ref) / se, acceptance=acc)
        tune_epochs = budgets[len(budgets) // 2]
        sgld, sgld_tuning = sgld_curve(model, data, c, MinibatchGradient(n, replace=True),
                                       args.sgld_grid, budgets, tune_epochs, reps, ref,
                                       args.seed)
        cv, cv_tuning = sgld_curve(model, data, c, ControlVariateGradient(c, n, replace=True),
                                   args.cv_grid, budgets, tune_epochs, reps, ref,
                                   args.seed + 1)
        curves = {"SGLD": sgld, "SGLD-CV": cv,
                  "MLSGLD": ml_curve(model, data, c, ks, reps, ref, args.pilot, args.seed + 2)}
        entry["tuning"] = {"SGLD": sgld_tuning, "SGLD-CV": cv_tuning,
                           "tune_epochs": tune_epochs}
        entry["curves"] = curves
        entry["slopes"] = {}
        for name, rows in curves.items():
            used = [r for r in rows if r.get("k", 99) >= 5]
            s, i = fit([r["epochs"] for r in used], [r["rel_mse"] for r in used])
            entry["slopes"][name] = dict(slope=s, epochs_at_rel_rmse_2m5=cost_at(rows, s, i))
        entry["seconds"] = time.time() - t0
        results["per_N"].append(entry)
        print(f"N={N:6d} n={n:2d} ref={ref:.5g} quad-change={entry['quadrature_rel_change']:.1e}"
              + (f" MALA z={entry['mala_check']['z']:+.2f}" if "mala_check" in entry else "")
              + f"  ({entry['seconds']:.0f}s)", flush=True)
        for name, rows in curves.items():
            pts = "  ".join(f"{r['epochs']:.3g}:{r['rel_mse']:.2g}" for r in rows)
            sl = entry["slopes"][name]
            e = sl["epochs_at_rel_rmse_2m5"]
            txt = "never" if e["epochs"] is None else f"{e['epochs']:.3g}"
            print(f"   {name:8s} slope {sl['slope']:+.2f}  epochs@2^-5 {txt}"
                  f"{'*' if e['extrapolated'] else ''}   [epochs:relMSE] {pts}", flush=True)
    summary = {}
    for name in ("SGLD", "SGLD-CV", "MLSGLD"):
        pairs = [(p["N"], p["slopes"][name]["epochs_at_rel_rmse_2m5"])
                 for p in results["per_N"]]
        pairs = [(N, e["epochs"] * N) for N, e in pairs if not e["extrapolated"]]
        cost_slope = fit(*zip(*pairs))[0] if len(pairs) >= 2 else None
        summary[name] = dict(
            mse_vs_cost_slopes=[p["slopes"][name]["slope"] for p in results["per_N"]],
            claimed_mse_slope={"SGLD": -2 / 3, "MLSGLD": -1.0}.get(name),
            cost_to_rel_rmse_2m5_vs_N_slope=cost_slope,
            claimed_cost_vs_N_slope={"MLSGLD": "< 1 (sublinear)"}.get(name))
    results["summary"] = summary
    results["seconds"] = time.time() - t_all
    print("summary:")
    for name, s in summary.items():
        print(f"  {name:8s} relMSE-vs-cost slopes {np.round(s['mse_vs_cost_slopes'], 2)} "
              f"(claim {s['claimed_mse_slope']}); cost@2^-5 vs N slope "
              f"{s['cost_to_rel_rmse_2m5_vs_N_slope']} (claim "
              f"{s['claimed_cost_vs_N_slope']})")
    print(f"{results['seconds']:.0f} s")
    cli.write_results(results, args.out, plot)


def plot(results, path):
    Ns = results["config"]["Ns"]
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    styles = {"SGLD": "o-", "SGLD-CV": "s--", "MLSGLD": "^-"}
    cmap = plt.get_cmap("viridis")
    for j, p in enumerate(results["per_N"]):
        col = cmap(j / max(1, len(Ns) - 1))
        for name, rows in p["curves"].items():
            axes[0].loglog([r["epochs"] for r in rows], [r["rel_mse"] for r in rows],
                           styles[name], color=col, ms=3,
                           label=f"{name}" if j == len(Ns) - 1 else None)
    axes[0].set_xlabel("cost (epochs)")
    axes[0].set_ylabel("relative MSE of E|theta - MAP|^2")
    axes[0].legend(title="colour: N (dark = small)")
    for name in ("SGLD", "SGLD-CV", "MLSGLD"):
        pts = [(p["N"], p["slopes"][name]["epochs_at_rel_rmse_2m5"])
               for p in results["per_N"]]
        pts = [(N, e["epochs"] * N) for N, e in pts if not e["extrapolated"]]
        if pts:
            axes[1].loglog(*zip(*pts), styles[name], label=name)
    axes[1].loglog(Ns, [Ns[0] * 1e4 * (N / Ns[0]) for N in Ns], ":", color="grey",
                   label="slope 1 (MALA-like)")
    axes[1].set_xlabel("N")
    axes[1].set_ylabel("data-item evaluations to relative RMSE 2^-5\n(reached points only)")
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
