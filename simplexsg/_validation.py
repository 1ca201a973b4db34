"""Argument checks shared by the samplers and estimators; each error names the argument."""
import numbers
import os
import tempfile
from numbers import Integral, Real
from pathlib import Path

import numpy as np
from sklearn.utils._param_validation import (Interval, InvalidParameterError,
                                            validate_parameter_constraints)


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


def check_output_path(name, path):
    """``path`` as a Path after checking that a file can be written there, before any work
    that would be lost if it could not: not a folder, its folder exists, and a file can be
    created in that folder (tried, then removed: permission bits say nothing to root, nor of
    read-only or virtual file systems). ValueError naming ``name`` and the path otherwise."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a file path, got {type(path).__name__}")
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{name} {str(path)!r} is a folder; give a file name in it")
    folder = path.absolute().parent
    if not folder.is_dir():
        raise ValueError(f"{name} {str(path)!r}: its folder {str(folder)!r} does not exist")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=folder)
    except OSError as exc:
        raise ValueError(f"{name} {str(path)!r}: cannot write in {str(folder)!r} "
                         f"({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)
    return path


def check_checkpoint(every, path):
    """``checkpoint_every`` (an int >= 1, or None) with its ``checkpoint_path``, a file that
    can be written (``check_output_path``), checked before any training."""
    if every is not None and not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"checkpoint_every needs checkpoint_path (a file path), got {path!r}")
    if path is not None:
        check_output_path("checkpoint_path", path)
    return None if every is None else check_int("checkpoint_every", every)


# ---------------------------------------------------------------- scikit-learn constraints
#: A finite number > 0 (inf excluded), for ``_parameter_constraints``.
POSITIVE = Interval(Real, 0, np.inf, closed="neither")


def int_from(low):
    """The ``_parameter_constraints`` entry of an int >= ``low``."""
    return Interval(Integral, low, None, closed="left")


def validate_params(estimator):
    """scikit-learn's check of ``estimator``'s parameters against its
    ``_parameter_constraints`` (what ``_validate_params()`` does), then
    InvalidParameterError naming the first parameter that is a bool where only a number is
    meant (``Interval`` takes True and False for 1 and 0). Returns the parameters,
    ``get_params(deep=False)``, read once: each read inspects ``__init__``'s signature, a
    cost that every ``partial_fit`` call pays."""
    params = estimator.get_params(deep=False)
    validate_parameter_constraints(estimator._parameter_constraints, params,
                                   caller_name=type(estimator).__name__)
    for name, constraints in estimator._parameter_constraints.items():
        if (isinstance(params[name], (bool, np.bool_)) and "boolean" not in constraints
                and any(isinstance(c, Interval) for c in constraints)):
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(estimator).__name__} must be a number, not a "
                f"bool. Got {params[name]!r} instead.")
    return params
