"""Timing, memory and medians: how the benchmarks count seconds and megabytes and summarise
seeds."""
import resource
import time

import numpy as np


def timed_fit(model, *args, **kwargs):
    """``model.fit(*args, **kwargs)``; returns (the model, wall seconds of the call)."""
    start = time.perf_counter()
    model.fit(*args, **kwargs)
    return model, time.perf_counter() - start


def peak_rss_mb():
    """Peak resident memory of this process in MB: ``VmHWM`` of /proc/self/status where there
    is one (Linux), else ``ru_maxrss``.

    Why not ``ru_maxrss`` alone: a process started by a larger one (a benchmark's child)
    inherits, at exec, its parent's peak as the floor of its ``ru_maxrss``, so a child's figure
    would never be below its parent's. ``VmHWM`` is the peak of this process's own memory
    since its exec."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024            # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024    # kB on Linux


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
