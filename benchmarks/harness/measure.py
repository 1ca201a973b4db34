"""Timing and medians: how the benchmarks count seconds and summarise seeds."""
import time

import numpy as np


def timed_fit(model, *args, **kwargs):
    """``model.fit(*args, **kwargs)``; returns (the model, wall seconds of the call)."""
    start = time.perf_counter()
    model.fit(*args, **kwargs)
    return model, time.perf_counter() - start


def median_seconds(run, repeats):
    """Median wall seconds of ``run(r)`` for r = 0, ..., repeats - 1, and the last result."""
    times, result = [], None
    for r in range(repeats):
        start = time.perf_counter()
        result = run(r)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def medians(runs, keys, prefix=""):
    """``{prefix + key: median over runs of run[key]}`` (a float each)."""
    return {f"{prefix}{key}": float(np.median([run[key] for run in runs])) for key in keys}
