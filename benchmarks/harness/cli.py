"""The options every benchmark shares, and the one way a benchmark writes its results.

The contract: a script writes ONE JSON file, to ``--out FILE`` (default
``benchmarks/results/NAME.json``, or ``benchmarks/results/quick/NAME.json`` under ``--quick``),
with the environment it ran in under ``"environment"``; its plots, if any, go beside it with
the same stem (``NAME.png``, ``NAME_<part>.png``). ``--quick`` is the short form that
``make bench`` runs. Where they apply: ``--seeds N`` (seeds 0, ..., N - 1), ``--data DIR`` (the
folder of the shared corpora, default ``$SIMPLEXSG_DATA``) and ``--summary-only PATH ...``
(print the summary of saved results and exit).
"""
import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

BENCHMARKS = Path(__file__).resolve().parent.parent
RESULTS = BENCHMARKS / "results"
#: Distributions whose versions the environment records (those installed).
VERSIONED = ("simplexsg", "numpy", "scipy", "scikit-learn", "gensim", "tomotopy", "lda",
             "dask", "distributed", "threadpoolctl", "matplotlib")


def default_out(name, quick=False):
    """Where a script ``name`` writes without ``--out``."""
    return RESULTS / "quick" / f"{name}.json" if quick else RESULTS / f"{name}.json"


class Parser(argparse.ArgumentParser):
    """``argparse`` with the common options of a benchmark (``script``: its ``__file__``,
    ``doc``: its docstring, whose first paragraph describes it). ``parse_args`` fills ``--out``
    and, under ``--quick``, gives the options left at their defaults the short form's values
    (``quick``: option dest -> value; ``quick_help`` says what else the short form changes)."""

    def __init__(self, script, doc, *, quick, quick_help=None, seeds=None, seeds_help=None,
                 data=False, summary_only=False, **kwargs):
        super().__init__(description=" ".join(doc.strip().split("\n\n")[0].split()), **kwargs)
        self.name, self.quick = Path(script).stem, dict(quick)
        shown = [default_out(self.name, short).relative_to(BENCHMARKS.parent)
                 for short in (False, True)]
        self.add_argument("--out", metavar="FILE", help=f"the JSON file (default {shown[0]}, "
                          f"under --quick {shown[1]}); plots beside it, same stem")
        changes = [f"{key} {value}" for key, value in self.quick.items()] + (
            [quick_help] if quick_help else [])
        self.add_argument("--quick", action="store_true",
                          help="the short form (make bench): " + ", ".join(changes))
        if seeds is not None:
            self.add_argument("--seeds", metavar="N", type=int, default=seeds,
                              help=seeds_help or f"seeds 0, ..., N - 1 (default {seeds})")
        if data:
            self.add_argument("--data", metavar="DIR", default=os.environ.get("SIMPLEXSG_DATA"),
                              help="the folder of the shared corpora, holding corpora/ and "
                              "msweb/ (default $SIMPLEXSG_DATA); corpora absent are skipped")
        if summary_only:
            self.add_argument("--summary-only", metavar="PATH", nargs="+",
                              help="print the summary of saved JSON files, together, and exit")

    def parse_args(self, args=None, namespace=None):
        args = super().parse_args(args, namespace)
        if args.quick:
            for key, value in self.quick.items():
                if getattr(args, key, None) == self.get_default(key):
                    setattr(args, key, value)
        args.out = Path(args.out) if args.out else default_out(self.name, args.quick)
        return args


def environment():
    """What a result depends on besides the script: command line, commit, machine, versions."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=BENCHMARKS, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    versions = {}
    for name in VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return {"command": shlex.join([sys.executable] + sys.argv), "commit": commit,
            "python": platform.python_version(), "platform": platform.platform(),
            "machine": platform.machine(), "processor": platform.processor() or None,
            "cpus": os.cpu_count(), "versions": versions}


def _plain(value):
    """JSON for what ``json`` does not know: paths, numpy scalars and arrays, tuples' kin."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


def write_results(results, out, plot=None):
    """Write the dict ``results`` as JSON to ``out``, the environment first under
    ``"environment"``; then, if given, ``plot(results, path)`` with ``path`` the PNG beside it
    (same stem; a plot of several figures names the others ``<stem>_<part>.png``)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {"environment": environment(),
              **{k: v for k, v in results.items() if k != "environment"}}
    out.write_text(json.dumps(record, indent=1, default=_plain))
    if plot is None:
        print(f"written {out}", flush=True)
        return
    plot(results, out.with_suffix(".png"))
    print(f"written {out} and {out.with_suffix('.png')}", flush=True)


def read_results(paths):
    """The saved JSON files at ``paths``, loaded, in order."""
    return [json.loads(Path(path).read_text()) for path in paths]


def print_summaries(paths, summarise):
    """``--summary-only``: print ``summarise`` of each saved JSON file at ``paths``."""
    for saved in read_results(paths):
        print(summarise(saved))


def measure_each(args, named_data, measure, summarise):
    """The body of a script that measures data sets one by one: ``measure(data)`` yields the
    runs (dicts) of each ``(name, data)`` of ``named_data``; each run is recorded with its data's
    name under ``"runs"``, beside the settings ``vars(args)``, printed by ``summarise`` and
    written to ``args.out``."""
    results = {"settings": vars(args), "runs": []}
    for name, data in named_data:
        for run in measure(data):
            results["runs"].append(dict(data=name, **run))
    print(summarise(results))
    write_results(results, args.out)


def skip(reason, out, **results):
    """Record that the benchmark could not run (data absent) and say why; exit 0."""
    print(f"skipped: {reason}", flush=True)
    write_results({"skipped": reason, **results}, out)
    raise SystemExit(0)
