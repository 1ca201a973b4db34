"""Plumbing shared by the estimators."""
import functools


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
