"""Plumbing shared by the estimators."""
import contextlib
import functools
import hashlib
import os
import tempfile
import warnings
from pathlib import Path

import joblib
import numpy as np

#: ``partial_fit``'s data-set size when neither ``total_samples`` nor a fit gives it: the
#: default ``total_samples`` of scikit-learn's LatentDirichletAllocation.
DEFAULT_TOTAL_SAMPLES = 1_000_000


class CountModelMixin:
    """What the count models (``LDA``, ``DPMixture``) share as scikit-learn estimators: their
    input tags (sparse, non-negative integer counts) and pickles without the Dask client."""

    def __getstate__(self):
        """Pickles (and checkpoints) keep no client: it is a live connection."""
        return {**super().__getstate__(), "client": None}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        tags.input_tags.categorical = True  # integer counts: the checks then feed integer data
        return tags


def restore_on_error(method):
    """Run ``method``; if it raises (Ctrl-C included), put every attribute of the estimator
    back as it was.

    Shallow: the fitting code rebinds attributes and never mutates fitted arrays in place.
    """
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
    return wrapper


def atomic_dump(obj, path):
    """``joblib.dump(obj)`` to ``path`` through a temporary file in the same folder and a
    rename, so that ``path`` always holds a complete file (the previous one until the new
    one is written). Load it with ``joblib.load``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())           # mkstemp's files are private (0600)
        with os.fdopen(fd, "wb") as fh:
            joblib.dump(obj, fh)
        os.replace(tmp, path)
    except BaseException:                          # Ctrl-C included: no stray temporary
        with contextlib.suppress(FileNotFoundError):   # renamed already: nothing to remove
            os.unlink(tmp)
        raise


def _umask():
    """The process's file-mode creation mask (read by setting it, then restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_checkpoint(obj, path):
    """``atomic_dump(obj, path)`` during a fit: an I/O error (disk full, the folder removed)
    warns, naming the path, and the fit goes on, since a failed checkpoint must not cost the
    training done; ``path`` was checked writable before the fit started."""
    try:
        atomic_dump(obj, path)
    except OSError as exc:
        warnings.warn(f"checkpoint_path {str(path)!r}: checkpoint not written "
                      f"({exc.strerror or exc}); the fit goes on", RuntimeWarning, stacklevel=2)


def array_digest(*arrays):
    """A hex digest of the arrays' shapes, dtypes and bytes: what a resumed fit checks it
    sees the same data by."""
    h = hashlib.blake2b(digest_size=16)
    for array in arrays:
        array = np.ascontiguousarray(array)
        h.update(repr((array.shape, array.dtype.str)).encode())
        h.update(array.tobytes())
    return h.hexdigest()


def first_partial_fit_total(total_samples, unit):
    """The data-set size a first ``partial_fit`` scales its counts to: ``total_samples``, or
    scikit-learn's default ``DEFAULT_TOTAL_SAMPLES`` with a UserWarning (``unit``: "documents"
    or "rows")."""
    if total_samples is not None:
        return total_samples
    warnings.warn(f"partial_fit without total_samples: the minibatch counts are scaled to "
                  f"{DEFAULT_TOTAL_SAMPLES} {unit} (scikit-learn's default); pass total_samples",
                  UserWarning, stacklevel=3)
    return DEFAULT_TOTAL_SAMPLES
