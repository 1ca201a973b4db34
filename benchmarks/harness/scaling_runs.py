"""The runs of ``sgld_scaling.py``: for one method and N, chains of SGLD or SGLD-CV run until
they reach the error target (or the cap, a stall or the prune limit), for each step constant
eta of the grid, searched downwards until the median cost stops improving."""
import time

import numpy as np

from simplexsg.sgmcmc import (ControlVariateGradient, LogisticRegressionModel,
                                MinibatchGradient, SGLD, sample)

from .scaling_reference import make_data, standardised_error

METHODS = ("SGLD", "SGLD-CV")
K_MIN = 10  # first iteration at which a chain may count as having reached eps


def run_point(model, data, estimator, h, ref, args, limit_iter, seed):
    """Run --seeds chains of SGLD(h) with ``estimator`` from ``ref["centre"]``, for at most
    ``limit_iter`` iterations; returns the first iteration at which each chain's E(K) <= eps
    (None if not reached), their median and why the run stopped."""
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
            median = np.median(np.where(hit >= 0, hit, np.inf))
            stop_at = min(stop_at, int(args.tail_factor * median))
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
    final = standardised_error(s1 / K, np.sqrt(np.maximum(s2 / K - (s1 / K) ** 2, 0)), 0.0, 1.0)
    return {"iterations": iters, "median_iterations": med, "stopped_at": K, "reason": reason,
            "final_error": [float(e) for e in final], "seconds": time.perf_counter() - t0,
            "relaxation_iterations": relax}


def eta_grid(eta_min):
    """The step constants 1, 10^-1/2, 10^-1, ... down to ``eta_min``, largest first."""
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
