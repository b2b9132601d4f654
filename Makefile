# haslab: build, test and demo entry points. Everything installs into .venv.
#   make demo    install, then run the demo (writes demo-out/demo.png)
#   make test    install, then cargo test + pytest
#   make bench   install, then the two benchmark cases
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
CARGO ?= cargo

.PHONY: all install tshark venv demo test test-rust test-python bench fmt lint

all: test

# tshark is only needed by the pcap tests; failing to install it is a warning, not an error.
tshark:
	@if command -v tshark >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing tshark (apt-get)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; } \
	    || echo "warning: could not install tshark; the pcap tests will be skipped" >&2; \
	else echo "warning: tshark not found (and not root): the pcap tests will be skipped" >&2; fi

# Debian ships `venv` support in a separate package (python3-venv).
venv:
	@if [ ! -x $(VPY) ]; then \
	  if ! $(PYTHON) -m venv $(VENV) 2>/dev/null; then \
	    rm -rf $(VENV); \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; \
	    fi; \
	    $(PYTHON) -m venv $(VENV); \
	  fi; \
	fi

# Editable install: maturin compiles crates/haslab-py (release profile) into python/haslab/.
install: tshark venv
	@echo "pip install -e '.[dev]': compiles the simulator (release; a few minutes the first time)"
	@$(VPY) -m pip install -q -e '.[dev]'

demo: install
	$(VENV)/bin/haslab demo --out demo-out

test-rust:
	$(CARGO) test --workspace --exclude haslab-py

test-python:
	$(VENV)/bin/pytest -q python/tests

test: install
	$(MAKE) test-rust
	$(MAKE) test-python

bench: install
	$(VENV)/bin/haslab bench

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
