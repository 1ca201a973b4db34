"""Argument checks shared by the samplers and estimators; each error names the argument."""
import numbers
import os

import numpy as np


def as_float_array(name, value):
    """``value`` as a float64 ndarray, or TypeError naming ``name``."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers: {exc}") from None
    return arr


def check_finite(name, value):
    """A float64 array with every entry finite, or ValueError naming ``name`` and the index."""
    arr = as_float_array(name, value)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} has a non-finite value ({arr[bad].flat[0]}) at index "
                         f"{tuple(int(i) for i in np.argwhere(bad)[0])}")
    return arr


def check_nonnegative(name, value, *, strictly_positive=False):
    """A finite float64 array with every entry >= 0 (> 0 if ``strictly_positive``)."""
    arr = check_finite(name, value)
    bad = arr <= 0 if strictly_positive else arr < 0
    if bad.any():
        sign = "positive" if strictly_positive else "non-negative"
        raise ValueError(f"{name} must be {sign}; found {arr[bad].flat[0]} at index "
                         f"{tuple(int(i) for i in np.argwhere(bad)[0])}")
    return arr


def check_positive_scalar(name, value):
    """A finite float > 0, or ValueError/TypeError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return float(value)


def check_n_jobs(n_jobs):
    """Threads for ``n_jobs`` in joblib's convention: None -> 1, -1 -> all CPUs, -2 -> all but
    one, ...; 0 and non-integers raise ValueError."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero int or None, got {n_jobs!r}")
    return int(n_jobs) if n_jobs > 0 else max((os.cpu_count() or 1) + 1 + int(n_jobs), 1)


def check_int(name, value, minimum=1):
    """An int >= ``minimum`` (bools refused), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_tol(tol):
    """A convergence tolerance: None, or a number in [0, 1) (a fraction); else ValueError."""
    if tol is not None and (isinstance(tol, bool) or not isinstance(tol, numbers.Real)
                            or not 0 <= tol < 1):
        raise ValueError(f"tol must be None or lie in [0, 1), got {tol!r}")
    return None if tol is None else float(tol)


def physical_memory():
    """Bytes of physical memory, or None where the system does not say (not POSIX)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def check_checkpoint(every, path):
    """``checkpoint_every`` (an int >= 1, or None) with its ``checkpoint_path``, whose folder
    must exist."""
    if every is not None and not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"checkpoint_every needs checkpoint_path (a file path), got {path!r}")
    if path is not None and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise ValueError(f"checkpoint_path {path!r}: its folder does not exist")
    return None if every is None else check_int("checkpoint_every", every)
