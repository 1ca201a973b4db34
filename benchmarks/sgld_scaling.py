"""SGLD vs SGLD-CV: the gradient cost to reach a fixed posterior error, as N grows.

The headline claim of Baker et al. (2019, Corollary 1) and Brosse et al. (2018, §3): on a
posterior that concentrates like N^-1/2, the number of per-datum gradient evaluations
(iterations x minibatch) that SGLD-CV needs to reach a fixed error measured in posterior
standard deviations does not grow with N, while plain SGLD's grows (about linearly).

**Model and data.** Bayesian logistic regression (``LogisticRegressionModel``), prior
N(0, I / --prior-precision), d = --dim features x_i ~ N(0, I) (no intercept), true
coefficients N(0, --coef-scale^2 / d) per coordinate, labels drawn from the model. One dataset
of max(N) rows is drawn from --data-seed; the dataset for each N is its first N rows (nested,
as Brosse et al. truncate theirs).

**Reference posterior.** Laplace approximation at the mode for every N: mode by
``find_centre`` (L-BFGS on the full log posterior), covariance = inverse of the exact Hessian
``H_N = prior_precision I + X^T diag(p (1 - p)) X``. By default (--reference corrected) its mean
is moved to the next order, mode - 1/2 H^-1 D^3U[H^-1] (Brosse et al. Prop. 2; for logistic
regression D^3U[H^-1] = sum_i p_i (1 - p_i) (1 - 2 p_i) (x_i' H^-1 x_i) x_i), because the
posterior mean differs from the mode by O(1/N), i.e. O(N^-1/2) posterior sds: at N = 10^3 this is
0.13 sd in the worst coordinate and E (below) = 0.08, which would floor the error near the
target. --reference laplace uses the plain mode. Check (at --check-ns, default N <= 10^4):
exact moments by self-normalised importance sampling (multivariate t proposal around the
Laplace fit, --is-draws draws, its ESS reported) and, at the smallest N, a long preconditioned
MALA run (--check-chains x --check-iter after --check-burn; the MH correction makes it exact);
the JSON reports, against both, the standardised mean differences and sd ratios of the plain
and the corrected Laplace reference and their E.

**Error metric** (the same for both samplers). With mu_j, sigma_j the reference posterior mean
and sd of coordinate j, and m_j(K), s_j(K) the running mean and sd (ddof 0) of one chain's
first K states,

    E(K) = sqrt( (1/d) sum_j [ (m_j - mu_j)^2 + (s_j - sigma_j)^2 ] / sigma_j^2 ),

the RMS over coordinates of the 2-Wasserstein distance between the Gaussian marginals
N(m_j, s_j^2) and N(mu_j, sigma_j^2), in units of sigma_j (the scale-free sqrt(m) W2 of Baker et
al., per marginal). It penalises both a wrong centre and a wrong spread: a mean-only error would
reward SGLD at large steps, which then behaves as averaged SGD and finds the mode quickly while
its spread is far too large (Brosse et al.). Iterations-to-error of a chain = the first K >= 10
with E(K) <= --eps (evaluated at every iteration); "cost" = K x n per-datum gradient
evaluations (SGLD-CV evaluates 2n per iteration, at theta and at the centre; the factor 2 is
constant in N and not counted). The cost of SGLD-CV's setup (finding the centre by ``find_centre``'s
L-BFGS, counted as full passes x N, plus the N gradients at the centre) is reported separately
and added in the column "total". The centre is found with gradient tolerance
--centre-tol x sqrt(N) (a fixed fraction of a posterior sd from the mode, whatever N; the
default absolute 1e-8 over-solves at large N, e.g. 39 passes at N = 10^6 instead of ~10); its
distance from the mode is recorded. Both samplers start at the centre, so neither needs
burn-in; SGLD is not charged for that start, which only favours SGLD.

**Samplers.** ``sample`` with ``SGLD(h)`` and ``MinibatchGradient(n)`` (SGLD) or
``ControlVariateGradient(centre, n)`` (SGLD-CV), fixed minibatch n = --batch-size for every N,
drawn with replacement (Brosse et al.'s convention; Baker et al. draw without). The reason is
speed: for several chains at once ``simplexsg.sgmcmc.gradients.draw_indices`` draws without replacement by a
Python loop over the n slots (when n^2 <= 2N), about 20x slower per iteration than with
replacement at n = 100. --seeds independent chains run together (theta of shape (seeds, d)),
with the same random stream for every eta of a grid (common random numbers); the cost of a
method at N is the median over chains (a chain that has not reached --eps when its run stops is
censored, ``null`` in the JSON, +inf for the median). The chains that tune eta are also the
ones reported (equally optimistic for both methods).

**Step sizes.** h = eta / lambda_max(H_N), H_N the Hessian at the mode, so h ~ 1/N at fixed
eta, the scaling of the theory (posterior variance ~ 1/N); eta, the constant, is tuned per
method and N over the log grid eta in {1, 10^-1/2, 10^-1, ..., --eta-min} (the same grid for
both methods), searched downwards from eta = 1: too large an eta never reaches --eps (the
chain's stationary law is too wide), too small an eta mixes slowly. The grid is wide on purpose:
at a fixed eta, SGLD's stationary variance exceeds the posterior's by a factor growing like
eta N / n (Brosse et al. Thm 4), so SGLD reaches a fixed eps only if its tuned eta falls like
1/N (h ~ 1/N^2, mixing time ~ N iterations); the right panel of the figure shows the tuned eta. The search stops one grid
point after the median cost stops improving. Two shortcuts, both recorded: a run stops early as
"stalled" once K >= 10 relaxation times 1/(h lambda_min(H_N)) and the excess of the pooled
chains' sd over the reference, RMS over coordinates of max(s_j/sigma_j - 1, 0), exceeds
2 eps (its spread alone already puts E above eps; a chain started at the mode can only overshoot
the posterior sd through bias), or once K >= 100 relaxation times and E of the pooled chains
(the bias floor plus Monte Carlo error / sqrt(seeds)) exceeds eps (1 + 2 sqrt(relaxation
time / K)), i.e. 1.2 eps at 100 relaxation times and less later; and once a grid point has a finite median cost, the next (smaller)
eta is only run up to that cost ("pruned": it cannot win). A run also stops, censoring the chains
not yet at eps, once the median is known and K reaches --tail-factor x the median; and always at
the cap of --cap-cost per-datum gradients per chain. A method whose median never gets below the
cap at N is reported as "> cap".

Output: JSON (environment, config, reference and check, per method and N the best eta,
medians, all chains and the whole grid) at --out, a PNG next to it (log-log cost vs N, and the
tuned eta vs N), and a table on stdout.

    python benchmarks/sgld_scaling.py                 # full run (~12 min on 2 shared cores)
    python benchmarks/sgld_scaling.py --quick         # smoke run (< 1 min)
"""
import argparse
import concurrent.futures
import time

import numpy as np
from scipy.special import expit

from simplexsg._optional import pyplot
from simplexsg.sgmcmc import (ControlVariateGradient, LogisticRegressionModel,
                                MinibatchGradient, SGLD, find_centre, sample)

from harness import cli
from harness.posterior import mala

METHODS = ("SGLD", "SGLD-CV")
K_MIN = 10  # first iteration at which a chain may count as having reached eps


# ------------------------------------------------------------------------------------------
# Data, reference posterior, long-run check
# ------------------------------------------------------------------------------------------

def make_data(n_max, d, coef_scale, seed):
    """X (n_max, d) ~ N(0, I), y ~ Bernoulli(sigmoid(X beta)), beta ~ N(0, coef_scale^2 / d)."""
    rng = np.random.default_rng(seed)
    beta = rng.normal(scale=coef_scale / np.sqrt(d), size=d)
    X = rng.standard_normal((n_max, d))
    y = (rng.random(n_max) < expit(X @ beta)).astype(np.float64)
    return X, y, beta


class _CountingLogistic(LogisticRegressionModel):
    """``LogisticRegressionModel`` that counts per-datum gradient evaluations in ``COUNT[0]``
    (used only to charge ``find_centre`` its cost)."""

    COUNT = [0]

    def sum_grad_log_lik(self, theta, batch):
        chains = int(np.prod(np.shape(theta)[:-1])) if batch[0].ndim == 2 else 1
        self.COUNT[0] += chains * int(np.prod(batch[0].shape[:-1]))
        return super().sum_grad_log_lik(theta, batch)


def find_counted_centre(model, data, tol):
    """``find_centre`` (L-BFGS) with gradient tolerance ``tol``; returns the centre, the per-datum
    gradient evaluations it cost and its wall time."""
    counting = _CountingLogistic(prior_precision=model.prior_precision)
    counting.COUNT[0] = 0
    t0 = time.perf_counter()
    centre = find_centre(counting, data, tol=tol)
    return centre, counting.COUNT[0], time.perf_counter() - t0


def laplace(model, data):
    """Mode (``find_centre``, L-BFGS at its default tolerance), Hessian of -log posterior there,
    and the mean corrected to next order."""
    X, y = data
    mode, evals, seconds = find_counted_centre(model, data, 1e-8)
    p = expit(X @ mode)
    H = model.prior_precision * np.eye(X.shape[1]) + (X * (p * (1 - p))[:, None]).T @ X
    cov = np.linalg.inv(H)
    cov = 0.5 * (cov + cov.T)
    eig = np.linalg.eigvalsh(H)
    # Mean to next order (Brosse et al. Prop. 2): E theta - mode = -1/2 H^-1 D^3U[H^-1] + O(N^-3/2),
    # D^3U = sum_i p_i (1 - p_i) (1 - 2 p_i) x_i^(x3) for U = -log posterior.
    v = np.einsum("ij,jk,ik->i", X, cov, X)
    shift = -0.5 * cov @ (X.T @ (p * (1 - p) * (1 - 2 * p) * v))
    return {"mode": mode, "mean_corrected": mode + shift, "H": H, "cov": cov,
            "sd": np.sqrt(np.diag(cov)),
            "lambda_min": float(eig[0]), "lambda_max": float(eig[-1]),
            "mode_evals": int(evals), "mode_seconds": seconds,
            "grad_norm_at_mode": float(np.linalg.norm(model.grad_log_posterior(mode, data)))}


def standardised_error(mean, sd, mu, sigma):
    """E of the module docstring for chain summaries ``mean``, ``sd`` (..., d)."""
    return np.sqrt(np.mean(((mean - mu) ** 2 + (sd - sigma) ** 2) / sigma ** 2, axis=-1))


def importance_moments(model, data, ref, n_draws, df, seed, block=256):
    """Posterior mean and sd by self-normalised importance sampling from a multivariate t
    (``df`` degrees of freedom, location the mode, scale the Laplace covariance; its polynomial
    tails keep the weights bounded). Exact as n_draws grows; returns the effective sample size."""
    rng = np.random.default_rng(seed)
    mode, cov = ref["mode"], ref["cov"]
    d = mode.size
    L = np.linalg.cholesky(cov)
    g = rng.standard_normal((n_draws, d))
    w_chi = rng.chisquare(df, size=n_draws) / df
    theta = mode + (g / np.sqrt(w_chi)[:, None]) @ L.T
    # log q up to a constant: -(df + d)/2 log(1 + r^2 / df), r^2 the Mahalanobis distance
    r2 = np.sum(np.linalg.solve(L, (theta - mode).T) ** 2, axis=0)
    log_q = -0.5 * (df + d) * np.log1p(r2 / df)
    log_p = np.empty(n_draws)
    for start in range(0, n_draws, block):
        th = theta[start:start + block]
        log_p[start:start + block] = model.log_prior(th) + model.log_lik(th, data).sum(axis=-1)
    log_w = log_p - log_q
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    mean = w @ theta
    sd = np.sqrt(w @ (theta - mean) ** 2)
    return mean, sd, float(1.0 / np.sum(w ** 2))


def _compare(mean, sd, ref):
    """How the Laplace reference and its mean-corrected version differ from exact moments."""
    mu, mu2, sigma = ref["mode"], ref["mean_corrected"], ref["sd"]
    return {
        "mean": mean.tolist(), "sd": sd.tolist(),
        "laplace_mean_diff_in_sd": ((mean - mu) / sigma).tolist(),
        "corrected_mean_diff_in_sd": ((mean - mu2) / sigma).tolist(),
        "sd_ratio": (sd / sigma).tolist(),
        "max_abs_laplace_mean_diff_in_sd": float(np.max(np.abs(mean - mu) / sigma)),
        "max_abs_corrected_mean_diff_in_sd": float(np.max(np.abs(mean - mu2) / sigma)),
        "max_abs_sd_ratio_minus_1": float(np.max(np.abs(sd / sigma - 1))),
        "E_laplace": float(standardised_error(mu, sigma, mean, sd)),
        "E_corrected_laplace": float(standardised_error(mu2, sigma, mean, sd)),
    }


def check_reference(model, data, ref, args, seed, with_mala):
    """The Laplace reference (plain and mean-corrected) against exact moments: importance
    sampling at this N and, if ``with_mala``, a long preconditioned-MALA run."""
    out = {}
    t0 = time.perf_counter()
    mean, sd, ess = importance_moments(model, data, ref, args.is_draws, args.is_df, seed)
    out["importance"] = dict(_compare(mean, sd, ref), draws=args.is_draws, df=args.is_df,
                             ess=ess, mc_se_of_mean_in_sd=float(1 / np.sqrt(ess)),
                             seconds=time.perf_counter() - t0)
    if with_mala:
        rng = np.random.default_rng(seed + 1)
        theta0 = ref["mode"] + rng.standard_normal((args.check_chains, ref["mode"].size)) @ \
            np.linalg.cholesky(ref["cov"]).T
        t0 = time.perf_counter()
        kept, accepted = mala(model, data, ref["cov"], theta0, args.check_iter,
                              args.check_burn, args.check_h, rng)
        acc = accepted[args.check_burn:].sum() / (args.check_iter * args.check_chains)
        flat = kept.reshape(-1, kept.shape[-1])
        m_mala, s_mala = flat.mean(0), flat.std(0)
        # Monte Carlo standard error of the mean from the spread of the chains' means
        mc_se = kept.mean(0).std(0, ddof=1) / np.sqrt(kept.shape[1])
        out["mala"] = dict(_compare(m_mala, s_mala, ref), n_chains=args.check_chains,
                           n_iter=args.check_iter, burn=args.check_burn,
                           h_preconditioned=args.check_h, acceptance=acc,
                           mc_se_of_mean_in_sd_max=float(np.max(mc_se / ref["sd"])),
                           E_vs_importance=float(standardised_error(m_mala, s_mala, mean, sd)),
                           seconds=time.perf_counter() - t0)
    return out


# ------------------------------------------------------------------------------------------
# One grid point: chains until eps, the cap, a stall or the prune limit
# ------------------------------------------------------------------------------------------

def run_point(model, data, estimator, h, ref, args, limit_iter, seed):
    """Run --seeds chains of SGLD(h) with ``estimator`` from the mode; returns the first
    iteration at which each chain's E(K) <= eps (None if not reached) and why the run stopped."""
    mu, sigma = ref["mu"], ref["sigma"]
    C, d = args.seeds, mu.size
    rng = np.random.default_rng(seed)
    state = np.tile(ref["centre"], (C, 1))
    s1 = np.zeros((C, d))  # running sums of z and z^2, z = (theta - mu) / sigma
    s2 = np.zeros((C, d))
    hit = np.full(C, -1, dtype=np.int64)
    K, seg = 0, args.first_segment
    relax = 1.0 / (h * ref["lambda_min"])
    reason, t0 = "all reached", time.perf_counter()
    integrator = SGLD(h)
    while True:
        n_reached = int((hit >= 0).sum())
        if n_reached == C:
            break
        if K >= limit_iter:
            reason = "limit"
            break
        stop_at = limit_iter
        if 2 * n_reached >= C + (C % 2 == 0):  # the median is known
            stop_at = min(stop_at, int(args.tail_factor * np.median(np.where(hit >= 0, hit, np.inf))))
            if K >= stop_at:
                reason = "tail"
                break
        L = int(min(seg, stop_at - K, args.max_segment))
        res = sample(model, data, estimator, integrator, L, theta0=state, random_state=rng)
        state = res.state
        z = (res.chain - mu) / sigma                      # (L, C, d)
        c1 = s1 + np.cumsum(z, axis=0)
        c2 = s2 + np.cumsum(z * z, axis=0)
        k = np.arange(K + 1, K + L + 1, dtype=np.float64)[:, None, None]
        m = c1 / k
        s = np.sqrt(np.maximum(c2 / k - m * m, 0.0))
        err = np.sqrt(np.mean(m * m + (s - 1.0) ** 2, axis=-1))  # (L, C)
        ok = (err <= args.eps) & (k[:, :, 0] >= K_MIN)
        for c in np.flatnonzero((hit < 0) & ok.any(axis=0)):
            hit[c] = K + 1 + int(np.argmax(ok[:, c]))
        s1, s2 = c1[-1], c2[-1]
        K += L
        seg *= 2
        # stall: the pooled chains' spread alone keeps E above eps, or, after many relaxation
        # times, the pooled chains' error (a floor estimate, Monte Carlo error / sqrt(C)) does
        if (hit < 0).any() and K >= 10 * relax:
            mp = s1.sum(0) / (C * K)
            sp = np.sqrt(np.maximum(s2.sum(0) / (C * K) - mp * mp, 0.0))
            excess = np.sqrt(np.mean(np.maximum(sp - 1.0, 0.0) ** 2))
            floor = standardised_error(mp, sp, 0.0, 1.0)
            if excess > 2 * args.eps or (K >= 100 * relax
                                         and floor > args.eps * (1 + 2 * np.sqrt(relax / K))):
                reason = "stalled"
                break
    iters = [int(v) if v >= 0 else None for v in hit]
    med = float(np.median([v if v is not None else np.inf for v in iters]))
    final = standardised_error(s1 / K, np.sqrt(np.maximum(s2 / K - (s1 / K) ** 2, 0)) , 0.0, 1.0)
    return {"iterations": iters, "median_iterations": med, "stopped_at": K, "reason": reason,
            "final_error": [float(e) for e in final], "seconds": time.perf_counter() - t0,
            "relaxation_iterations": relax}


def eta_grid(eta_min):
    k, out = 0, []
    while 10 ** (-k / 2) >= eta_min * (1 - 1e-9):
        out.append(10 ** (-k / 2))
        k += 1
    return out


def tune(task):
    """Grid search over eta for one (method, N); the task is run in a worker process."""
    method, N, ref, args = task
    X, y, _ = make_data(max(args.ns), args.dim, args.coef_scale, args.data_seed)
    data = (X[:N], y[:N])
    model = LogisticRegressionModel(prior_precision=args.prior_precision)
    if method == "SGLD":
        estimator = MinibatchGradient(args.batch_size, replace=True)
    else:
        estimator = ControlVariateGradient(ref["centre"], args.batch_size, replace=True)
        estimator = estimator.prepare(model, data)  # the N gradients at the centre, once
    cap_iter = int(args.cap_cost // args.batch_size)
    grid, best = [], None
    seed = [args.seed, METHODS.index(method), N]
    t0 = time.perf_counter()
    for eta in eta_grid(args.eta_min):
        h = eta / ref["lambda_max"]
        limit = cap_iter if best is None else min(cap_iter, int(best["median_iterations"]))
        pruned_limit = best is not None and limit < cap_iter
        if 10.0 / (h * ref["lambda_min"]) > limit:
            grid.append({"eta": eta, "h": h, "skipped": "10 relaxation times exceed the limit"})
            break  # smaller eta relax more slowly still
        point = run_point(model, data, estimator, h, ref, args, limit, seed)
        point.update(eta=eta, h=h, h_times_N=h * N)
        if point["reason"] == "limit" and pruned_limit:
            point["reason"] = "pruned"
        grid.append(point)
        print(f"  [{method:7s} N={N:>8d}] eta={eta:.2e} median K={point['median_iterations']:.4g} "
              f"({point['reason']}, stopped at {point['stopped_at']}, {point['seconds']:.1f} s)",
              flush=True)
        if np.isfinite(point["median_iterations"]):
            if best is None or point["median_iterations"] < best["median_iterations"]:
                best = point
                continue
            break
        if best is not None:
            break
    return method, N, {"grid": grid, "best": best, "seconds": time.perf_counter() - t0,
                       "cap_iterations": cap_iter}


# ------------------------------------------------------------------------------------------
# Driver
# ------------------------------------------------------------------------------------------

def parse_args(argv=None):
    p = cli.Parser(__file__, __doc__, seeds=5, seeds_help="independent chains per grid point",
                   quick=dict(ns=[1e3, 1e4], seeds=3, eps=0.3, cap_cost=2e6, check_iter=2000,
                              check_chains=4, check_burn=200, is_draws=5000),
                   quick_help="a smoke run",
                   formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ns", type=float, nargs="+", default=[1e3, 1e4, 1e5, 1e6],
                   help="dataset sizes N")
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    p.add_argument("--seed", type=int, default=0, help="base seed of the samplers")
    p.add_argument("--data-seed", type=int, default=2019)
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--coef-scale", type=float, default=2.0, help="E||beta||^2 = coef_scale^2")
    p.add_argument("--prior-precision", type=float, default=1.0)
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--eps", type=float, default=0.2, help="target error E (posterior sds)")
    p.add_argument("--centre-tol", type=float, default=1e-3,
                   help="SGLD-CV centre: find_centre gradient tolerance = centre_tol sqrt(N)")
    p.add_argument("--cap-cost", type=float, default=1e8,
                   help="cap on iterations x batch size per chain")
    p.add_argument("--eta-min", type=float, default=1e-5, help="smallest eta of the grid")
    p.add_argument("--tail-factor", type=float, default=2.0)
    p.add_argument("--first-segment", type=int, default=500)
    p.add_argument("--max-segment", type=int, default=40000)
    p.add_argument("--reference", choices=("corrected", "laplace"), default="corrected",
                   help="Laplace with the O(1/N) mean correction (default) or plain Laplace")
    p.add_argument("--check-ns", type=float, nargs="*", default=None,
                   help="N at which to check the reference by importance sampling (default: "
                        "N <= 1e4); MALA runs at the smallest of them")
    p.add_argument("--is-draws", type=int, default=20000)
    p.add_argument("--is-df", type=float, default=10.0)
    p.add_argument("--check-chains", type=int, default=10)
    p.add_argument("--check-iter", type=int, default=10000)
    p.add_argument("--check-burn", type=int, default=1000)
    p.add_argument("--check-h", type=float, default=0.5,
                   help="MALA step in the Laplace-whitened coordinates")
    p.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = p.parse_args(argv)
    args.ns = sorted(int(n) for n in args.ns)
    if args.check_ns is None:
        args.check_ns = [n for n in args.ns if n <= 10 ** 4] or args.ns[:1]
    args.check_ns = sorted(int(n) for n in args.check_ns)
    return args


def slope(ns, costs):
    """Least-squares slope of log10 cost on log10 N over the finite points (None if < 2)."""
    pts = [(np.log10(n), np.log10(c)) for n, c in zip(ns, costs) if c is not None and np.isfinite(c)]
    if len(pts) < 2:
        return None
    x, yv = np.array(pts).T
    return float(np.polyfit(x, yv, 1)[0])


def fmt_cost(v, cap):
    if v is None or not np.isfinite(v):
        return f"> {cap:.2g}"
    return f"{v:.3g}"


def main(argv=None):
    args = parse_args(argv)
    t_start = time.perf_counter()
    X, y, beta = make_data(max(args.ns), args.dim, args.coef_scale, args.data_seed)
    model = LogisticRegressionModel(prior_precision=args.prior_precision)

    refs, ref_json = {}, {}
    for N in args.ns:
        data = (X[:N], y[:N])
        ref = laplace(model, data)
        refs[N] = ref
        ref_json[N] = {
            "mode": ref["mode"].tolist(), "sd": ref["sd"].tolist(),
            "lambda_min": ref["lambda_min"], "lambda_max": ref["lambda_max"],
            "condition_number": ref["lambda_max"] / ref["lambda_min"],
            "N_times_sd_squared_mean": float(N * np.mean(ref["sd"] ** 2)),
            "grad_norm_at_mode": ref["grad_norm_at_mode"],
            "mode_passes_at_tol_1e-8": ref["mode_evals"] / N,
        }
        centre, evals, secs = find_counted_centre(model, data, args.centre_tol * np.sqrt(N))
        dev = centre - ref["mode"]
        ref.update(centre=centre, centre_evals=evals)
        ref_json[N].update(
            centre=centre.tolist(), centre_evals=int(evals), centre_passes=evals / N,
            centre_seconds=secs, centre_tol=args.centre_tol * np.sqrt(N),
            centre_distance_from_mode_mahalanobis=float(np.sqrt(dev @ ref["H"] @ dev)))
        if N in args.check_ns:
            c = check_reference(model, data, ref, args, args.seed + 7, N == args.check_ns[0])
            ref_json[N]["check"] = c
            for kind, r in c.items():
                print(f"check N={N:>7d} vs {kind:10s}: max |mean - mode| = "
                      f"{r['max_abs_laplace_mean_diff_in_sd']:.3f} sd, max |mean - corrected| = "
                      f"{r['max_abs_corrected_mean_diff_in_sd']:.3f} sd, max |sd ratio - 1| = "
                      f"{r['max_abs_sd_ratio_minus_1']:.3f}; E(Laplace) = {r['E_laplace']:.3f}, "
                      f"E(corrected) = {r['E_corrected_laplace']:.3f}"
                      + (f"; ESS {r['ess']:.0f}" if kind == "importance" else
                         f"; acceptance {r['acceptance']:.2f}, MC se <= "
                         f"{r['mc_se_of_mean_in_sd_max']:.3f} sd, E(MALA vs IS) = "
                         f"{r['E_vs_importance']:.3f}") + f" ({r['seconds']:.0f} s)", flush=True)
    print(f"reference posteriors ready ({time.perf_counter() - t_start:.1f} s)", flush=True)

    light = {}
    for N in args.ns:
        r = refs[N]
        light[N] = {k: r[k] for k in ("centre", "lambda_min", "lambda_max")}
        if args.reference == "laplace":
            kind, mu, sigma = "laplace", r["mode"], r["sd"]
        else:
            kind, mu, sigma = "corrected laplace", r["mean_corrected"], r["sd"]
        light[N].update(mu=mu, sigma=sigma)
        ref_json[N].update(used=kind, used_mean=mu.tolist(), used_sd=sigma.tolist())
        print(f"  N={N:>8d}: reference = {kind}; condition number {r['lambda_max'] / r['lambda_min']:.2f}, "
              f"centre by L-BFGS: {r['centre_evals'] / N:.0f} passes, "
              f"{ref_json[N]['centre_distance_from_mode_mahalanobis']:.1e} sd from the mode",
              flush=True)
    # longest first: SGLD at the largest N dominates the run time
    tasks = sorted(((m, N, light[N], args) for m in args.methods for N in args.ns),
                   key=lambda t: (t[0] != "SGLD", -t[1]))
    results = {m: {} for m in args.methods}
    if args.jobs > 1:
        with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
            for method, N, res in pool.map(tune, tasks):
                results[method][N] = res
    else:
        for task in tasks:
            method, N, res = tune(task)
            results[method][N] = res

    # table
    summary = {m: {} for m in args.methods}
    header = (f"{'method':8s} {'N':>8s} {'eta*':>9s} {'h*':>9s} {'median K':>10s} "
              f"{'cost K*n':>10s} {'setup':>10s} {'total':>10s} {'reached':>8s}")
    print()
    print(f"eps = {args.eps} (RMS standardised marginal W2), n = {args.batch_size}, "
          f"{args.seeds} chains, cap = {args.cap_cost:.2g} gradients per chain")
    print(header)
    for m in args.methods:
        for N in args.ns:
            res = results[m][N]
            b = res["best"]
            setup = (refs[N]["centre_evals"] + N) if m == "SGLD-CV" else 0
            if b is None:
                row = {"eta": None, "h": None, "median_iterations": None, "cost": None,
                       "setup_cost": setup, "total_cost": None, "reached": 0,
                       "iterations_all_chains": None}
            else:
                cost = b["median_iterations"] * args.batch_size
                row = {"eta": b["eta"], "h": b["h"], "median_iterations": b["median_iterations"],
                       "cost": cost, "setup_cost": setup, "total_cost": cost + setup,
                       "reached": sum(v is not None for v in b["iterations"]),
                       "iterations_all_chains": b["iterations"],
                       "cost_all_chains": [None if v is None else v * args.batch_size
                                           for v in b["iterations"]]}
            summary[m][N] = row
            print(f"{m:8s} {N:>8d} "
                  f"{'-' if row['eta'] is None else format(row['eta'], '9.2e'):>9s} "
                  f"{'-' if row['h'] is None else format(row['h'], '9.2e'):>9s} "
                  f"{'-' if row['median_iterations'] is None else format(row['median_iterations'], '10.4g'):>10s} "
                  f"{fmt_cost(row['cost'], args.cap_cost):>10s} {setup:>10.3g} "
                  f"{fmt_cost(row['total_cost'], args.cap_cost):>10s} "
                  f"{row['reached']:>4d}/{args.seeds:<3d}")
    slopes = {}
    for m in args.methods:
        slopes[m] = slope(args.ns, [summary[m][N]["cost"] for N in args.ns])
        slopes[m + " total"] = slope(args.ns, [summary[m][N]["total_cost"] for N in args.ns])
    print("log-log slopes of median cost on N (finite points only): "
          + ", ".join(f"{k}: {'-' if v is None else format(v, '.2f')}" for k, v in slopes.items()))
    seconds = time.perf_counter() - t_start
    print(f"total run time {seconds:.0f} s")

    payload = {
        "config": {k: v for k, v in vars(args).items()},
        "true_coefficients": beta.tolist(),
        "metric": "E = sqrt(mean_j ((m_j-mu_j)^2 + (s_j-sigma_j)^2) / sigma_j^2), running mean "
                  "and sd of one chain; first K >= 10 with E <= eps",
        "reference": {str(N): v for N, v in ref_json.items()},
        "summary": {m: {str(N): v for N, v in summary[m].items()} for m in args.methods},
        "slopes": slopes,
        "runs": {m: {str(N): results[m][N] for N in args.ns} for m in args.methods},
        "seconds": seconds,
    }
    cli.write_results(payload, args.out, lambda results, png: plot(args, summary, png))


def plot(args, summary, png):
    plt = pyplot()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    ns = np.array(args.ns, dtype=float)
    styles = {"SGLD": ("C3", "o"), "SGLD-CV": ("C0", "s")}
    for m in args.methods:
        colour, marker = styles[m]
        cost = np.array([np.nan if summary[m][N]["cost"] is None else summary[m][N]["cost"]
                         for N in args.ns])
        ax.plot(ns, cost, marker=marker, color=colour, label=f"{m} (sampling)")
        capped = np.isnan(cost)
        if capped.any():
            ax.plot(ns[capped], np.full(capped.sum(), args.cap_cost), marker="^", ls="none",
                    color=colour, ms=10, label=f"{m}: > cap")
        if m == "SGLD-CV":
            total = np.array([np.nan if summary[m][N]["total_cost"] is None
                              else summary[m][N]["total_cost"] for N in args.ns])
            ax.plot(ns, total, marker=marker, color=colour, ls="--", mfc="none",
                    label=f"{m} + centre (L-BFGS + N)")
        eta = np.array([np.nan if summary[m][N]["eta"] is None else summary[m][N]["eta"]
                        for N in args.ns])
        ax2.plot(ns, eta, marker=marker, color=colour, label=m)
    finite = [(N, summary["SGLD"][N]["cost"]) for N in args.ns
              if "SGLD" in summary and summary["SGLD"][N]["cost"]]
    if finite:
        ax.plot(ns, finite[0][1] / finite[0][0] * ns, color="0.6", lw=0.8, ls=":",
                label="slope 1 (through SGLD's first point)")
    ax.axhline(args.cap_cost, color="0.8", lw=0.8)
    ax.set(xscale="log", yscale="log", xlabel="N (data points)",
           ylabel="median iterations x minibatch to E <= eps",
           title=f"Cost to reach E <= {args.eps} posterior sd (n = {args.batch_size})")
    ax.legend(fontsize=8)
    ax2.set(xscale="log", yscale="log", xlabel="N", ylabel="tuned eta = h lambda_max(H_N)",
            title="Best step constant (h = eta / lambda_max)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
