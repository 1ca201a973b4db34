"""The documentation (docs/) builds with Sphinx, warnings as errors, as ``make docs`` does.

Skipped when Sphinx is not installed (the ``docs`` extra, which ``make test`` installs). The
sources are copied to a temporary folder first, so that the API stubs autosummary generates
and the HTML never land in the working tree.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_docs_sources_are_self_contained():
    """The pages speak of the repository: no paths outside it."""
    for page in DOCS.rglob("*.rst"):
        if "_build" in page.parts or "generated" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        assert "../shared" not in text, f"{page} refers to a path outside the repository"


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    source = tmp_path / "docs"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns("_build", "generated"))
    out = tmp_path / "html"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(source), str(out)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (
        f"sphinx failed (exit {result.returncode}):\n{result.stderr[-5000:]}")
    problems = [line for line in result.stderr.splitlines()
                if "WARNING" in line or "ERROR" in line]
    assert not problems, "sphinx warned:\n" + "\n".join(problems[:50])
    assert (out / "index.html").is_file()
    for page in ("api/index.html", "api/generated/simplexsg.LDA.html",
                 "guide/perplexity.html", "benchmarks/lda.html"):
        assert (out / page).is_file(), page
