"""The benchmarks' measures: a child process's peak memory is its own."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.measure import peak_rss_mb

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.skipif(not Path("/proc/self/status").is_file(),
                    reason="VmHWM needs /proc (Linux); elsewhere ru_maxrss is the measure")
def test_a_child_started_by_a_larger_process_reports_its_own_peak():
    """A child's ``ru_maxrss`` starts at its parent's peak (inherited at exec); its
    ``peak_rss_mb`` does not: a child of a process holding 400 MB reports well below that."""
    ballast = np.ones(400 * 2**20 // 8)             # 400 MB, touched
    assert peak_rss_mb() > 400
    child = subprocess.run(
        [sys.executable, "-c", "from harness.measure import peak_rss_mb; print(peak_rss_mb())"],
        capture_output=True, text=True, cwd=BENCHMARKS, check=True)
    assert float(child.stdout) < 200, child.stdout
    del ballast
