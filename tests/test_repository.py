"""The repository speaks of itself alone (#12 item 9) and its dependency bounds are true.

No tracked text file points to the project's design notes outside it (papers are cited
instead); the folder of the data sets, ``../shared/data``, is the users' and stays.
"""
import re
import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
#: How the outside notes were cited: the design document, the notes' files, folder and sections.
OUTSIDE = re.compile(r"DESIGN\.md|seeds[ -]digest|\bdigest *[§:]|notes section|"
                     r"algorithms-reference|shared/notes|peers\.md|targets\.md|style\.md",
                     re.IGNORECASE)
TEXT_SUFFIXES = {".py", ".pyx", ".pxd", ".md", ".toml", ".cfg", ".txt"}


def repository_text_files():
    """Tracked and new (not ignored) text files: sources, docs, configuration, Makefile."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in listed.splitlines()
            if (Path(name).suffix in TEXT_SUFFIXES or Path(name).name == "Makefile")
            and (ROOT / name).is_file() and ROOT / name != Path(__file__).resolve()]


def test_no_reference_to_files_outside_the_repository():
    files = repository_text_files()
    assert len(files) > 40 and ROOT / "README.md" in files and ROOT / "Makefile" in files
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in files
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if OUTSIDE.search(line)]
    assert not hits, "\n".join(hits)


@pytest.mark.parametrize("line", ["see DESIGN.md", "the seeds digest", "(digest §3.5)",
                                  "Digest §1.1E experiment", "(digest: 28)", "notes section 4",
                                  "algorithms-reference.md", "../shared/notes/peers.md",
                                  "targets.md"])
def test_the_guard_catches_each_way_of_citing_the_notes(line):
    assert OUTSIDE.search(line)


@pytest.mark.parametrize("line", ["SIMPLEXSG_DATA=../shared/data python examples/x.py",
                                  "array_digest(X.indptr)", "a hex digest of the arrays"])
def test_the_guard_leaves_data_paths_and_digests_of_arrays(line):
    assert not OUTSIDE.search(line)


#: The lowest release of each dependency that works with numpy 2 and has the API the package
#: uses: scikit-learn 1.6 brought ``sklearn.utils.validation.validate_data``; scipy 1.13,
#: pandas 2.2.2 and matplotlib 3.8.4 are the first built against numpy 2; gensim 4.3.3,
#: tomotopy 0.13.0 and lda 3.0.0 require numpy<2, their next releases do not.
KNOWN_MINIMA = {"numpy": "2.0", "scipy": "1.13", "scikit-learn": "1.6", "gensim": "4.4",
                "pandas": "2.2.2", "matplotlib": "3.8.4", "tomotopy": "0.14", "lda": "3.0.1"}


def declared_requirements():
    """Every requirement of pyproject.toml: dependencies and optional dependencies."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(text) for text in project["dependencies"]
            + [r for extra in project["optional-dependencies"].values() for r in extra]]


def lower_bound(requirement):
    bounds = [Version(spec.version) for spec in requirement.specifier if spec.operator == ">="]
    assert bounds, f"{requirement} has no lower bound"
    return max(bounds)


def test_dependency_lower_bounds_are_at_least_the_known_minima():
    bounds = {}
    for requirement in declared_requirements():
        bounds[requirement.name] = max(bounds.get(requirement.name, Version("0")),
                                       lower_bound(requirement))
    assert set(KNOWN_MINIMA) <= set(bounds)
    low = {name: f"{bounds[name]} < {minimum}" for name, minimum in KNOWN_MINIMA.items()
           if bounds[name] < Version(minimum)}
    assert not low, low


def test_installed_versions_satisfy_the_declared_bounds():
    checked, wrong = 0, []
    for requirement in declared_requirements():
        try:
            installed = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            continue                                   # an extra this environment lacks
        checked += 1
        if not requirement.specifier.contains(installed, prereleases=True):
            wrong.append(f"{requirement.name} {installed} does not satisfy {requirement}")
    assert checked >= 4 and not wrong, wrong
