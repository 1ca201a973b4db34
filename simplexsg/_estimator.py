"""Plumbing shared by the estimators."""
import functools
import os
import tempfile
from pathlib import Path

import joblib


def restore_on_error(method):
    """Run ``method``; if it raises, put every attribute of the estimator back as it was.

    Shallow: the fitting code rebinds attributes and never mutates fitted arrays in place.
    """
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)
        try:
            return method(self, *args, **kwargs)
        except Exception:
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
        with os.fdopen(fd, "wb") as fh:
            joblib.dump(obj, fh)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
