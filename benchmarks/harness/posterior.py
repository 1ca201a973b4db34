"""The exact references of the SGLD benchmarks (``mlsgld.py``, ``sgld_scaling.py``), for any
model: a preconditioned MALA chain, and posterior moments by importance sampling."""
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


def importance_moments(model, data, mode, cov, n_draws, df, seed, block=256):
    """Posterior mean and sd of ``model`` on ``data`` by self-normalised importance sampling
    from a multivariate t (``df`` degrees of freedom, location ``mode``, scale ``cov``, e.g. the
    Laplace fit; its polynomial tails keep the weights bounded), the log posterior evaluated
    ``block`` draws at a time. Exact as n_draws grows; returns the mean, the sd and the
    effective sample size."""
    rng = np.random.default_rng(seed)
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
