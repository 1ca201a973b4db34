"""The code speaks of the repository alone (#12 item 9): no comment or docstring points to the
project's design notes outside it; papers are cited instead."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: How the outside notes were cited: the design document, the notes' files and sections.
OUTSIDE = re.compile(r"DESIGN\.md|seeds[ -]digest|notes section|algorithms-reference|"
                     r"shared/notes|peers\.md|targets\.md|style\.md", re.IGNORECASE)


def test_no_reference_to_files_outside_the_repository():
    sources = [path for folder in ("simplexsg", "benchmarks", "examples", "tests")
               for path in (ROOT / folder).rglob("*") if path.suffix in (".py", ".pyx", ".pxd")
               and path != Path(__file__).resolve()]
    assert len(sources) > 30
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in sources
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if OUTSIDE.search(line)]
    assert not hits, "\n".join(hits)
