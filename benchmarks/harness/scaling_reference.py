"""The problem of ``sgld_scaling.py`` and its reference posterior: the nested logistic-regression
data, the Laplace reference (plain and mean-corrected) at every N with SGLD-CV's centre and its
cost, the check of that reference against exact moments, and the error E both are measured by.
"""
import time

import numpy as np
from scipy.special import expit

from simplexsg.sgmcmc import LogisticRegressionModel, find_centre

from .posterior import importance_moments, mala


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
    """E of ``sgld_scaling.py``'s docstring for chain summaries ``mean``, ``sd`` (..., d): the RMS
    over coordinates of the W2 distance between N(mean, sd^2) and N(mu, sigma^2), over sigma."""
    return np.sqrt(np.mean(((mean - mu) ** 2 + (sd - sigma) ** 2) / sigma ** 2, axis=-1))


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
    mean, sd, ess = importance_moments(model, data, ref["mode"], ref["cov"], args.is_draws,
                                       args.is_df, seed)
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


def _print_check(N, kind, r):
    """One line on stdout: the check of the reference at N against ``kind`` (its record ``r``)."""
    print(f"check N={N:>7d} vs {kind:10s}: max |mean - mode| = "
          f"{r['max_abs_laplace_mean_diff_in_sd']:.3f} sd, max |mean - corrected| = "
          f"{r['max_abs_corrected_mean_diff_in_sd']:.3f} sd, max |sd ratio - 1| = "
          f"{r['max_abs_sd_ratio_minus_1']:.3f}; E(Laplace) = {r['E_laplace']:.3f}, "
          f"E(corrected) = {r['E_corrected_laplace']:.3f}"
          + (f"; ESS {r['ess']:.0f}" if kind == "importance" else
             f"; acceptance {r['acceptance']:.2f}, MC se <= "
             f"{r['mc_se_of_mean_in_sd_max']:.3f} sd, E(MALA vs IS) = "
             f"{r['E_vs_importance']:.3f}") + f" ({r['seconds']:.0f} s)", flush=True)


def references(model, X, y, args):
    """For every N of ``args.ns`` (the data: the first N rows of ``X``, ``y``), ``laplace`` and
    SGLD-CV's centre, found at gradient tolerance ``args.centre_tol`` sqrt(N) (``centre`` and
    its cost ``centre_evals`` added to the reference); at the N of ``args.check_ns``, the check
    (``check_reference``, MALA at the first of them), printed. Returns the references and their
    JSON records, both by N."""
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
                _print_check(N, kind, r)
    return refs, ref_json
