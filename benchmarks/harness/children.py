"""Benchmarks that run each method in a process of its own, so that its peak resident memory
(``measure.peak_rss_mb`` in the child) is its own: the hidden options that make a script a
child, the run of one child and its JSON result, and the reprint of saved results."""
import argparse
import json
import subprocess
import sys
from pathlib import Path

from . import cli
from .corpora import Absent


def add_child_options(parser):
    """``--child METHOD`` (run that method and print its result as JSON) and
    ``--child-folder DIR`` (its data), hidden from ``--help``."""
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-folder", help=argparse.SUPPRESS)


def run_child(script, method, folder, **options):
    """Run ``script --child method --child-folder folder --option value ...`` (an option
    ``max_time`` as ``--max-time``) in the script's folder; its last line of output, parsed.
    A RuntimeError carries the end of its standard error when it fails."""
    command = [sys.executable, str(script), "--child", method, "--child-folder", str(folder)]
    for key, value in options.items():
        command += [f"--{key.replace('_', '-')}", str(value)]
    out = subprocess.run(command, capture_output=True, text=True, cwd=Path(script).parent)
    if out.returncode:
        raise RuntimeError(f"{method} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def reprint(paths, summarise, plot):
    """``--summary-only``: ``summarise`` each entry of the saved results' ``runs`` and redraw
    their figures (``plot(results, the PNG beside the JSON)``)."""
    for path, saved in zip(paths, cli.read_results(paths)):
        for entry in saved["runs"].values():
            summarise(entry)
        plot(saved, Path(path).with_suffix(".png"))


def prepared(sources, sizes, prepare, name):
    """(source, size, folder, info) for each source and size whose data ``prepare(source,
    size)`` makes (its folder and the data file's info); where the data folder lacks the
    source, say so (``name(source, size)`` names the pair) and skip it."""
    for source in sources:
        for size in sizes:
            try:
                folder, info = prepare(source, size)
            except Absent as exc:
                print(f"{name(source, size)}: skipped ({exc})", flush=True)
                continue
            yield source, size, folder, info
