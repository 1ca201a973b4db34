"""The fitting harness every estimator shares.

* the fit plan (``fit_plan``): a new chain, the finished chain continued, or the interrupted
  fit resumed (scikit-learn's ``warm_start``), and what a resumed fit must see again
  (``result_params``, with the parameters a class declares resumable in
  ``_resumable_params``; ``check_unchanged`` compares the fingerprints);
* the transaction (``transaction``, and ``restore_on_error`` for a whole method) that puts an
  estimator back as it was when a block raises, Ctrl-C included;
* checkpoints written atomically (``atomic_dump``, ``write_checkpoint``);
* the progress bar (``progress_bar``);
* the clock of a step's phases (``Laps``, and ``clocked`` for the minibatches read), which the
  estimators add up in ``timings_``;
* ``CountModelMixin``: the count models' scikit-learn tags and client-free pickles.
"""
import contextlib
import functools
import hashlib
import os
import tempfile
import warnings
from pathlib import Path
from time import perf_counter

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


@contextlib.contextmanager
def transaction(obj, copies=None, undo=None):
    """Run a block that updates ``obj``; if it raises anything (KeyboardInterrupt included),
    put every attribute of ``obj`` back as it was before the block, then call ``undo()``.

    Shallow: attributes the block rebinds come back as they were; an object the block changes
    in place is copied first by ``copies[name]`` (a function of the object), so that the
    saved one is untouched. ``undo`` restores what lives outside the attributes' bindings
    (e.g. rows of an array written in place).
    """
    state = obj.__dict__
    saved = dict(state)
    for name, copier in (copies or {}).items():
        if saved.get(name) is not None:
            state[name] = copier(saved[name])
    try:
        yield
    except BaseException:
        state.clear()
        state.update(saved)
        if undo is not None:
            undo()
        raise


def restore_on_error(method):
    """``method`` run in a ``transaction`` on its estimator: if it raises (Ctrl-C included),
    every attribute of the estimator is put back as it was."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with transaction(self):
            return method(self, *args, **kwargs)
    return wrapper


def fit_plan(estimator, warm_start, state_attribute):
    """What ``fit`` does: "resume" the interrupted fit (``warm_start`` and ``interrupted_``),
    "continue" the finished chain (``warm_start`` and a fitted ``state_attribute``), or start
    a "new" chain."""
    if warm_start and getattr(estimator, "interrupted_", False):
        return "resume"
    return "continue" if warm_start and hasattr(estimator, state_attribute) else "new"


def result_params(estimator):
    """The parameters a resumed fit must share with the interrupted one: all but those the
    class declares in ``_resumable_params`` (they change neither the chain nor where it
    stops: threads, output, checkpoints, ``warm_start``, ``random_state``, whose stream the
    fit stored)."""
    return {name: value for name, value in estimator.get_params().items()
            if name not in type(estimator)._resumable_params}


def check_unchanged(stored, fingerprint, keys=None,
                    what="resumes the interrupted fit, which needs the same data and "
                         "parameters"):
    """ValueError naming the entries of ``fingerprint`` (those in ``keys``, default all)
    that differ from ``stored``'s: "warm_start WHAT: a, b differ"."""
    keys = sorted(set(fingerprint) | set(stored), key=str) if keys is None else keys
    changed = [str(k) for k in keys if fingerprint.get(k) != stored.get(k)]
    if changed:
        raise ValueError(f"warm_start {what}: {', '.join(changed)} differ")


def progress_bar(verbose, total, desc, unit):
    """A tqdm progress bar of ``total`` units (None: open-ended) when ``verbose``, else None
    (tqdm is the optional extra ``progress``)."""
    if not verbose:
        return None
    from ._optional import tqdm

    return tqdm()(total=total, desc=desc, unit=unit)


class Laps:
    """The clock of one step: started at ``start`` (a ``perf_counter()`` reading), ``lap(phase)``
    adds the seconds since the previous lap (or the start) to ``seconds[phase]``."""

    def __init__(self, start):
        self.start = self.last = start
        self.seconds = {}

    def lap(self, phase):
        now = perf_counter()
        self.seconds[phase] = self.seconds.get(phase, 0.0) + now - self.last
        self.last = now

    def added_to(self, timings):
        """A new dict: ``timings`` (phase -> seconds) plus this step's laps, phase by phase."""
        return {phase: seconds + self.seconds.get(phase, 0.0)
                for phase, seconds in timings.items()}


def clocked(items):
    """Yield (``Laps`` started just before the item was asked for, with the lap "read" taken
    when it came, item) for each of ``items``: reading and parsing a streamed minibatch count
    as training."""
    items = iter(items)
    while True:
        laps = Laps(perf_counter())
        try:
            item = next(items)
        except StopIteration:
            return
        laps.lap("read")
        yield laps, item


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
