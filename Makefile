# Two commands set up everything on a fresh machine: `make plan` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STACK  ?= training-dev
BENCH_OUT ?= .bench

.PHONY: plan test bench clean

$(BIN)/gpu-infra: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

plan: $(BIN)/gpu-infra  ## offline plan of $(STACK) (default training-dev)
	$(BIN)/gpu-infra plan $(STACK)

test: $(BIN)/gpu-infra  ## lint, type check and the whole test suite
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest

bench: $(BIN)/gpu-infra  ## benchmarks of the shipped and generated stacks; results in $(BENCH_OUT)/
	$(BIN)/python -m bench --out $(BENCH_OUT)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .bench
