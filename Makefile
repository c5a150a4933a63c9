# The README's two commands: `make run` and `make test`. Each sets up a local virtualenv,
# installs the pinned dependencies, builds the Rust core into it, then runs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(BIN):$(PATH)

.PHONY: run test setup build lint rust-test py-test bench validation clean fuzz

run: build
	hmsim reproduce all --quick --out results

test: build lint rust-test py-test

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	touch $@

# Profile-guided when llvm-profdata of rustc's LLVM is installed (HMSIM_PGO=0: never; see
# scripts/build_core.sh and docs/performance.md, "Profile-guided build").
build: $(STAMP)
	scripts/build_core.sh

lint: $(STAMP)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	ruff check python tests scripts
	ruff format --check python tests scripts

rust-test:
	cargo test -p hmsim --quiet

py-test: $(STAMP)
	pytest -q

validation: build
	hmsim reproduce all --out results
	python -c "from hmsim.report import write_validation_doc; write_validation_doc('results', 'docs/validation.md')"

# The long fault-injection campaign (docs/reliability.md): many more hypothesis and proptest
# cases, then libFuzzer on each trace parser and the config loader for FUZZ_SECONDS each.
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly toolchain (or RUSTC_BOOTSTRAP=1).
FUZZ_SECONDS ?= 120
FUZZ_TOOLCHAIN ?= +nightly
FUZZ_TARGETS := trace_sniffed trace_each_format config_load
fuzz: build
	HMSIM_FUZZ_EXAMPLES=2000 HMSIM_FUZZ_FILES=400 HMSIM_FUZZ_OUTPUTS=400 HMSIM_FUZZ_SIGNALS=20 HMSIM_FUZZ_KILLS=10 HMSIM_FUZZ_OVERSIZED=500 \
	  pytest -q tests/test_reliab.py
	PROPTEST_CASES=20000 cargo test -p hmsim --test reliab --quiet
	set -o pipefail; cd fuzz && for t in $(FUZZ_TARGETS); do \
		new=$$(mktemp -d); \
		cargo $(FUZZ_TOOLCHAIN) fuzz run $$t $$new corpus/$$t -- -max_total_time=$(FUZZ_SECONDS) \
		  -max_len=65536 -rss_limit_mb=1024 -print_final_stats=1 2>&1 \
		  | grep -E '^(stat::number_of_executed_units|#[0-9]+.*DONE|==[0-9]+== ERROR|SUMMARY)'; \
		status=$$?; rm -rf $$new; [ $$status -le 1 ] || exit $$status; \
	done

bench: build
	hmsim bench
	cargo bench -p hmsim --bench storage

clean:
	rm -rf $(VENV) target results
