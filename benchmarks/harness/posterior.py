"""The exact reference chain of the SGLD benchmarks (``mlsgld.py``, ``sgld_scaling.py``)."""
import numpy as np


def mala(model, data, cov, theta0, n_iter, burn, h, rng):
    """Preconditioned MALA (proposal theta + h cov grad + sqrt(2h) cov^1/2 xi), exact for the
    posterior of ``model`` on ``data`` (the Metropolis-Hastings correction); vectorised over
    the rows of theta0 (one chain each). Runs ``burn + n_iter`` iterations; returns the kept
    states (n_iter, chains, d) and how many chains accepted, per iteration (burn + n_iter,)."""
    L = np.linalg.cholesky(cov)
    prec = np.linalg.inv(cov)
    theta = np.array(theta0, dtype=np.float64)
    logp = model.log_posterior(theta, data)
    grad = model.grad_log_posterior(theta, data)
    kept = np.empty((n_iter,) + theta.shape)
    accepted = np.zeros(burn + n_iter, dtype=np.int64)

    def log_q(to, frm, grad_frm):  # log density of proposing `to` from `frm`, up to a constant
        r = to - frm - h * grad_frm @ cov
        return -np.einsum("...i,ij,...j->...", r, prec, r) / (4 * h)

    for t in range(burn + n_iter):
        prop = theta + h * grad @ cov + np.sqrt(2 * h) * rng.standard_normal(theta.shape) @ L.T
        logp_prop = model.log_posterior(prop, data)
        grad_prop = model.grad_log_posterior(prop, data)
        log_alpha = logp_prop - logp + log_q(theta, prop, grad_prop) - log_q(prop, theta, grad)
        accept = np.log(rng.random(theta.shape[0])) < log_alpha
        theta = np.where(accept[:, None], prop, theta)
        logp = np.where(accept, logp_prop, logp)
        grad = np.where(accept[:, None], grad_prop, grad)
        accepted[t] = accept.sum()
        if t >= burn:
            kept[t - burn] = theta
    return kept, accepted
