# The README's commands. Everything is installed from the package registries into .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BENCH_VENV := .venv-bench
export CARGO_TARGET_DIR := $(CURDIR)/target
export PYO3_PYTHON := $(CURDIR)/$(PY)

.PHONY: all venv develop stub test lint rust-test py-test stubtest docs wheel wheels wheel-check wheel-check-host demo examples bench bench-report clean

all: test

$(VENV)/.installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

venv: $(VENV)/.installed

# Release build of the extension, installed into .venv (editable: python/ is the package).
# Then the stub's generated Session section is rewritten from the op table (`make stub`).
develop: venv
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin develop --release -q
	$(MAKE) stub

# The uniform Session methods of python/tenferro/_tenferro.pyi and docs/ops.md's catalog table from
# the op table (tools/gen_stub.py; needs the built extension; tests/test_op_table.py fails when
# either is stale).
stub:
	$(PY) tools/gen_stub.py

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	cargo fmt --all --check
	cargo clippy --workspace --release --all-targets -- -D warnings

# Same profile (release) and target directory as the wheel: dependencies compile once.
rust-test: venv
	cargo test --workspace --release --exclude tenferro-py

py-test: develop
	$(PY) -m pytest

stubtest: develop
	$(PY) -m mypy.stubtest tenferro._tenferro

# The documentation site: guide pages (docs/*.md) and an API reference generated from the
# docstrings (docs/conf.py), warnings as errors; then every public name is checked against the
# site's inventory (tools/check_docs.py). Output: docs/_build/html.
$(VENV)/.docs-installed: requirements-docs.txt $(VENV)/.installed
	$(PY) -m pip install -q -r requirements-docs.txt
	touch $@

docs: develop $(VENV)/.docs-installed
	$(PY) -m sphinx -E -b html -q -W --keep-going docs docs/_build/html
	$(PY) tools/check_docs.py docs/_build/html

test: develop lint rust-test py-test stubtest docs

# The wheel we ship and the sdist, into target/wheels: pyproject.toml's settings (release
# profile), linked by zig against glibc 2.28 so that the wheel is manylinux_2_28 (RHEL 8/9-class
# cluster nodes), stripped. `--zig` and `--strip` are flags because maturin 1.16 reads neither
# from pyproject.toml. One wheel per interpreter (no abi3: see docs/architecture.md, "Wheels"):
# `make wheel` builds the running interpreter's, `make wheels` those of CPython 3.11-3.13
# (maturin cross-builds the ones not installed from its bundled interpreter configurations).
MATURIN_BUILD := VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(VENV)/bin:$$PATH \
	$(VENV)/bin/maturin build --zig --compatibility manylinux_2_28 --strip -o target/wheels

$(VENV)/.wheel-installed: requirements-wheel.txt $(VENV)/.installed
	$(PY) -m pip install -q -r requirements-wheel.txt
	touch $@

wheel: $(VENV)/.wheel-installed
	rm -rf target/wheels
	$(MATURIN_BUILD)
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin sdist -o target/wheels

wheels: $(VENV)/.wheel-installed
	rm -rf target/wheels
	$(MATURIN_BUILD) -i python3.11 python3.12 python3.13
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin sdist -o target/wheels

# Install the wheel into a fresh venv outside the source tree; smoke test and the installed
# package's doctests there (tools/wheel_check.sh).
wheel-check: wheel
	PYTHON=$(PYTHON) tools/wheel_check.sh target/wheels

# The same check on a wheel linked by the host toolchain (tag linux_x86_64, not for upload): it
# reuses the crates `make develop` compiled, where the zig-linked wheel compiles the whole
# workspace again for an explicit target (about 7 of CI's minutes on 2 cores). The packaged
# files are the same; only the glibc the extension links against differs. CI runs this one
# after `make test`.
wheel-check-host: develop
	rm -rf target/wheels-host
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin build --release --compatibility linux \
		--strip -o target/wheels-host
	PYTHON=$(PYTHON) tools/wheel_check.sh target/wheels-host

# The main job: variational MPS ground state of the transverse-field Ising chain (defaults:
# 16 sites, bond 8, g = 1, tol 1e-6, seed 0); exits non-zero when the tolerance is not reached.
# In graph mode (--jit: energy and gradient traced once by tf.jit, one program per evaluation):
# faster end to end, trace included (2 shared cores, 5 interleaved runs each, medians: 1.0 s
# against 1.4 s from the first evaluation to convergence, 4.1 s against 4.7 s for the whole
# process; the same energy and 621 evaluations); drop --jit for the eager run.
demo: develop
	$(PY) examples/tfim_ground_state.py --jit --plot tfim_convergence.png

# The other runnable examples (each exits non-zero when its check fails).
examples: develop
	$(PY) examples/quickstart.py
	$(PY) examples/digits_softmax.py

$(BENCH_VENV)/.installed: benches/requirements-bench.txt
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install -q -r benches/requirements-bench.txt maturin
	touch $@

bench: $(BENCH_VENV)/.installed
	VIRTUAL_ENV=$(CURDIR)/$(BENCH_VENV) PYO3_PYTHON=$(CURDIR)/$(BENCH_VENV)/bin/python \
		$(BENCH_VENV)/bin/maturin develop --release -q
	$(BENCH_VENV)/bin/python benches/bench_ops.py
	$(BENCH_VENV)/bin/python benches/bench_engines.py
	$(BENCH_VENV)/bin/python benches/bench_ad.py
	$(BENCH_VENV)/bin/python benches/bench_einsum.py
	$(BENCH_VENV)/bin/python benches/bench_einsum_planner.py
	$(BENCH_VENV)/bin/python benches/bench_slicing.py
	$(BENCH_VENV)/bin/python benches/bench_tfim.py
	$(BENCH_VENV)/bin/python benches/bench_linalg.py
	$(BENCH_VENV)/bin/python benches/bench_fft.py
	$(BENCH_VENV)/bin/python benches/report.py

# Rebuild docs/benchmarks.md and docs/benchmarks.png from the results already in benches/results/.
bench-report: $(BENCH_VENV)/.installed
	$(BENCH_VENV)/bin/python benches/report.py

clean:
	rm -rf $(VENV) $(BENCH_VENV) target docs/_build docs/_api
