# Two entry points (README quick start): `make demo` and `make test`.
# Both create .venv on first use and (re)install the package, compiling the Cython
# kernels, only when the build inputs change; a second run goes straight to the job.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.simplexsg-installed
BUILD_INPUTS := pyproject.toml setup.py $(wildcard simplexsg/_ext/*.pyx simplexsg/_ext/*.pxd)

.PHONY: demo test test-fast bench docs install clean

install: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(BUILD_INPUTS) | $(PY)
	$(PY) -m pip install --quiet -e '.[test,demo,bench,dask,docs]'
	touch $@

# Tests run on one process per core, up to 4 (pytest-xdist), a module's tests on one of them,
# so that a module's fixtures are computed once. pytest exits 5 when it collects nothing;
# that is a failure here, never a pass.
PARALLEL := -n auto --maxprocesses=4 --dist loadscope

test: $(STAMP)
	$(PY) -m pytest tests $(PARALLEL) --durations=15 $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$rc

# The development loop: every test but those marked slow (long statistical checks, the
# estimator checks, Sphinx, Dask clusters, subprocesses). Under 90 s on 2 cores.
test-fast: $(STAMP)
	$(PY) -m pytest tests -m "not slow" -q $(PARALLEL) $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$rc

demo: $(STAMP)
	$(PY) examples/lda_wikipedia.py --out out

# The documentation site; warnings are errors (tests/test_docs.py builds it the same way).
docs: $(STAMP)
	$(PY) -m sphinx -W --keep-going -b html docs docs/_build/html

# The short form (--quick) of every script in benchmarks/, one after another: each writes
# benchmarks/results/quick/NAME.json (and NAME.log); bench.json there has their wall seconds.
bench: $(STAMP)
	$(PY) -m benchmarks.harness.suite --quick --out benchmarks/results/quick/bench.json

clean:
	rm -rf $(VENV) build *.egg-info simplexsg/_ext/*.c simplexsg/_ext/*.so docs/_build \
	    docs/api/generated
