# The README's two commands: `make run` and `make test`. Each sets up a local virtualenv,
# installs the pinned dependencies, builds the Rust core into it, then runs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(BIN):$(PATH)

.PHONY: run test setup build lint rust-test py-test bench validation clean

run: build
	hmsim reproduce all --quick --out results

test: build lint rust-test py-test

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	touch $@

build: $(STAMP)
	maturin develop --release

lint: $(STAMP)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	ruff check python tests
	ruff format --check python tests

rust-test:
	cargo test -p hmsim --quiet

py-test: $(STAMP)
	pytest -q

validation: build
	hmsim reproduce all --out results
	python -c "from hmsim.report import write_validation_doc; write_validation_doc('results', 'docs/validation.md')"

bench: build
	hmsim bench
	cargo bench -p hmsim --bench storage

clean:
	rm -rf $(VENV) target results
