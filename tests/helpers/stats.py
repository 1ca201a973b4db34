"""Monte Carlo tolerances shared by the statistical tests.

A Monte Carlo estimate is compared with its exact value at ``Z`` = 5 standard errors: for a
Gaussian error the two-sided false-failure rate is 6e-7 per assertion (a t error with fewer
degrees of freedom, a module says its own rate). The standard error of the mean of an
autocorrelated chain is from batch means (``batch_means_se``): the chain cut into equal
consecutive blocks, each much longer than its autocorrelation time, whose means are nearly
independent.
"""
import numpy as np

#: Tolerance in standard errors: two-sided false-failure rate 6e-7 for a Gaussian error.
Z = 5.0


def batch_means(x, n_batches):
    """The means (n_batches, ...) of ``n_batches`` equal consecutive blocks of the chain ``x``
    (T, ...) along its first axis; the last ``T % n_batches`` states are left out."""
    x = np.asarray(x, dtype=float)
    size = len(x) // n_batches
    if size < 1:
        raise ValueError("series shorter than the number of batches")
    return x[: size * n_batches].reshape(n_batches, size, *x.shape[1:]).mean(axis=1)


def batch_means_se(x, n_batches):
    """Batch-means standard error of the mean of the chain ``x`` (T, ...) along its first axis:
    the standard deviation of the ``batch_means`` over sqrt(n_batches), of shape x.shape[1:]
    (a 0-d float for a series)."""
    return batch_means(x, n_batches).std(axis=0, ddof=1) / np.sqrt(n_batches)
