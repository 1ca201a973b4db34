"""Exact moments for the SG-MCMC tests (``tests/sgmcmc/``): the covariance of a minibatch
gradient estimate, and the stationary covariance of a linear chain whose transition matrix
has a random (minibatch) part. Row-major ``vec`` throughout."""
import numpy as np


def minibatch_cov(rows, n, replace):
    """Exact covariance of (N/n) sum_{i in S} a_i for the rows a_i of ``rows`` (N, p):
    N^2/n C with replacement and N^2/n (N-n)/(N-1) C without, C the population covariance."""
    N = len(rows)
    f = 1.0 if replace else (N - n) / (N - 1)
    return N ** 2 / n * f * np.cov(rows.T, bias=True)


def kron_moment(D, n, replace):
    """E[kron(R, R)] for R = (N/n) sum_{i in S} D_i - sum_i D_i, with D (N, p, q) per datum."""
    N, p, q = D.shape
    f = 1.0 if replace else (N - n) / (N - 1)
    Dc = D - D.mean(axis=0)
    return N / n * f * np.einsum("nij,nkl->ikjl", Dc, Dc).reshape(p * p, q * q)


def stationary_cov(M0, K, Q):
    """V solving V = M0 V M0^T + E[M1 V M1^T] + Q, where vec E[M1 V M1^T] = K vec V (row-major
    vec): the stationary covariance of s' = (M0 + M1) s + noise with E noise noise^T = Q."""
    p = M0.shape[0]
    A = np.eye(p * p) - np.kron(M0, M0) - K
    V = np.linalg.solve(A, Q.ravel()).reshape(p, p)
    return 0.5 * (V + V.T)
