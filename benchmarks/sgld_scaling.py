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
speed: for several chains at once ``simplexsg.sgmcmc.gradients.draw_indices`` draws without
replacement by a Python loop over the n slots (when n^2 <= 2N), about 20x slower per iteration
than with replacement at n = 100. --seeds independent chains run together (theta of shape
(seeds, d)), with the same random stream for every eta of a grid (common random numbers); the
cost of a method at N is the median over chains (a chain that has not reached --eps when its run
stops is censored, ``null`` in the JSON, +inf for the median). The chains that tune eta are also
the ones reported (equally optimistic for both methods).

**Step sizes.** h = eta / lambda_max(H_N), H_N the Hessian at the mode, so h ~ 1/N at fixed eta,
the scaling of the theory (posterior variance ~ 1/N); eta, the constant, is tuned per method and
N over the log grid eta in {1, 10^-1/2, 10^-1, ..., --eta-min} (the same grid for both methods),
searched downwards from eta = 1: too large an eta never reaches --eps (the chain's stationary
law is too wide), too small an eta mixes slowly. The grid is wide on purpose: at a fixed eta,
SGLD's stationary variance exceeds the posterior's by a factor growing like eta N / n (Brosse et
al. Thm 4), so SGLD reaches a fixed eps only if its tuned eta falls like 1/N (h ~ 1/N^2, mixing
time ~ N iterations); the right panel of the figure shows the tuned eta. The search stops one
grid point after the median cost stops improving. Two shortcuts, both recorded: a run stops
early as "stalled" once K >= 10 relaxation times 1/(h lambda_min(H_N)) and the excess of the
pooled chains' sd over the reference, RMS over coordinates of max(s_j/sigma_j - 1, 0), exceeds 2
eps (its spread alone already puts E above eps; a chain started at the mode can only overshoot
the posterior sd through bias), or once K >= 100 relaxation times and E of the pooled chains
(the bias floor plus Monte Carlo error / sqrt(seeds)) exceeds eps (1 + 2 sqrt(relaxation time /
K)), i.e. 1.2 eps at 100 relaxation times and less later; and once a grid point has a finite
median cost, the next (smaller) eta is only run up to that cost ("pruned": it cannot win). A run
also stops, censoring the chains not yet at eps, once the median is known and K reaches
--tail-factor x the median; and always at the cap of --cap-cost per-datum gradients per chain. A
method whose median never gets below the cap at N is reported as "> cap".

Output: JSON (environment, config, reference and check, per method and N the best eta,
medians, all chains and the whole grid) at --out, a PNG next to it (log-log cost vs N, and the
tuned eta vs N), and a table on stdout.

    python benchmarks/sgld_scaling.py                 # full run (~12 min on 2 shared cores)
    python benchmarks/sgld_scaling.py --quick         # smoke run (< 1 min)
"""
import argparse
import concurrent.futures
import time

from simplexsg.sgmcmc import LogisticRegressionModel

from harness import cli
from harness.scaling_reference import make_data, references
from harness.scaling_report import plot, summarise
from harness.scaling_runs import METHODS, tune


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


def main(argv=None):
    args = parse_args(argv)
    t_start = time.perf_counter()
    X, y, beta = make_data(max(args.ns), args.dim, args.coef_scale, args.data_seed)
    model = LogisticRegressionModel(prior_precision=args.prior_precision)
    refs, ref_json = references(model, X, y, args)
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
        print(f"  N={N:>8d}: reference = {kind}; "
              f"condition number {r['lambda_max'] / r['lambda_min']:.2f}, "
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

    summary, slopes = summarise(args, results, refs)
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


if __name__ == "__main__":
    main()
