"""The report of ``sgld_scaling.py``: per method and N the tuned eta's cost, with SGLD-CV's
setup, as a table on stdout with the log-log slopes of cost on N, and as a figure."""
import numpy as np

from simplexsg._optional import pyplot


def slope(ns, costs):
    """Least-squares slope of log10 cost on log10 N over the finite points (None if < 2)."""
    pts = [(np.log10(n), np.log10(c)) for n, c in zip(ns, costs)
           if c is not None and np.isfinite(c)]
    if len(pts) < 2:
        return None
    x, yv = np.array(pts).T
    return float(np.polyfit(x, yv, 1)[0])


def fmt_cost(v, cap):
    """A cost for the table: ``v`` to 3 significant digits, or "> cap" if not reached."""
    if v is None or not np.isfinite(v):
        return f"> {cap:.2g}"
    return f"{v:.3g}"


def _row(res, setup, batch_size):
    """The summary of one (method, N) from its tuning ``res``: the best eta's median cost (None
    if no eta reached eps), ``setup`` the per-datum gradients before sampling."""
    b = res["best"]
    if b is None:
        return {"eta": None, "h": None, "median_iterations": None, "cost": None,
                "setup_cost": setup, "total_cost": None, "reached": 0,
                "iterations_all_chains": None}
    cost = b["median_iterations"] * batch_size
    return {"eta": b["eta"], "h": b["h"], "median_iterations": b["median_iterations"],
            "cost": cost, "setup_cost": setup, "total_cost": cost + setup,
            "reached": sum(v is not None for v in b["iterations"]),
            "iterations_all_chains": b["iterations"],
            "cost_all_chains": [None if v is None else v * batch_size
                                for v in b["iterations"]]}


def _fmt(v, spec):
    """``v`` formatted by ``spec``, or "-" if None."""
    return "-" if v is None else format(v, spec)


def summarise(args, results, refs):
    """The summary rows by method and N of the tunings ``results`` (SGLD-CV charged its centre's
    cost from ``refs`` plus the N gradients there), printed as a table, and the log-log slopes
    of median cost, and of total cost, on N (printed too)."""
    summary = {m: {} for m in args.methods}
    header = (f"{'method':8s} {'N':>8s} {'eta*':>9s} {'h*':>9s} {'median K':>10s} "
              f"{'cost K*n':>10s} {'setup':>10s} {'total':>10s} {'reached':>8s}")
    print()
    print(f"eps = {args.eps} (RMS standardised marginal W2), n = {args.batch_size}, "
          f"{args.seeds} chains, cap = {args.cap_cost:.2g} gradients per chain")
    print(header)
    for m in args.methods:
        for N in args.ns:
            setup = (refs[N]["centre_evals"] + N) if m == "SGLD-CV" else 0
            row = summary[m][N] = _row(results[m][N], setup, args.batch_size)
            print(f"{m:8s} {N:>8d} {_fmt(row['eta'], '9.2e'):>9s} {_fmt(row['h'], '9.2e'):>9s} "
                  f"{_fmt(row['median_iterations'], '10.4g'):>10s} "
                  f"{fmt_cost(row['cost'], args.cap_cost):>10s} {setup:>10.3g} "
                  f"{fmt_cost(row['total_cost'], args.cap_cost):>10s} "
                  f"{row['reached']:>4d}/{args.seeds:<3d}")
    slopes = {}
    for m in args.methods:
        slopes[m] = slope(args.ns, [summary[m][N]["cost"] for N in args.ns])
        slopes[m + " total"] = slope(args.ns, [summary[m][N]["total_cost"] for N in args.ns])
    print("log-log slopes of median cost on N (finite points only): "
          + ", ".join(f"{k}: {_fmt(v, '.2f')}" for k, v in slopes.items()))
    return summary, slopes


def plot(args, summary, png):
    """The figure at ``png``: median cost against N per method (SGLD-CV also with its setup,
    "> cap" marked at the cap), and the tuned eta against N."""
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
