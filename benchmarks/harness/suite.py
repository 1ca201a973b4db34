"""``make bench``: every benchmark script in turn, each writing its JSON beside this run's.

    python -m benchmarks.harness.suite --quick --out benchmarks/results/quick/bench.json

Runs ``python benchmarks/NAME.py [--quick] --out DIR/NAME.json`` for every script of
``benchmarks/`` (``--only`` some), with DIR the folder of ``--out``; a script's output goes to
``DIR/NAME.log``. Prints each script's wall seconds and whether it succeeded, and writes them
to ``--out``; exits 1 if any failed. Without ``--quick`` the scripts' full forms run (hours).
"""
import argparse
import subprocess
import sys
import time
from pathlib import Path

from .cli import BENCHMARKS, default_out, write_results


def scripts():
    """The benchmark scripts: ``benchmarks/*.py``, by name."""
    return {path.stem: path for path in sorted(BENCHMARKS.glob("*.py"))}


def main():
    every = scripts()
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="each script's short form")
    parser.add_argument("--only", nargs="+", choices=list(every), metavar="NAME",
                        help="these scripts only")
    parser.add_argument("--out", type=Path, help="this run's JSON (default "
                        f"{default_out('bench', True)} under --quick); the scripts' beside it")
    args = parser.parse_args()
    out = args.out or default_out("bench", args.quick)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs, start = {}, time.perf_counter()
    for name in args.only or every:
        command = [sys.executable, str(every[name]), *(["--quick"] if args.quick else []),
                   "--out", str(out.parent / f"{name}.json")]
        log = out.parent / f"{name}.log"
        began = time.perf_counter()
        with open(log, "w") as fh:
            code = subprocess.run(command, stdout=fh, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL).returncode
        seconds = time.perf_counter() - began
        runs[name] = dict(seconds=round(seconds, 1), returncode=code, log=str(log))
        print(f"{name:<20} {'ok' if code == 0 else f'FAILED ({code})':<12} {seconds:7.1f} s",
              flush=True)
        if code:
            print("".join(log.read_text().splitlines(keepends=True)[-20:]), flush=True)
    failed = [name for name, run in runs.items() if run["returncode"]]
    total = time.perf_counter() - start
    print(f"{len(runs) - len(failed)} of {len(runs)} succeeded in {total:.0f} s"
          + (f"; failed: {' '.join(failed)}" if failed else ""), flush=True)
    write_results(dict(quick=args.quick, seconds=round(total, 1), scripts=runs, failed=failed),
                  out)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
