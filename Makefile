# haslab: build, test and demo entry points. Everything installs into .venv.
#   make demo    install, then run the demo (8 players, Westwood+ vs TcpHas; writes demo-out/demo.png)
#   make test    install, then cargo test + pytest + the wheel in a clean venv
#   make bench   install, then the two benchmark cases
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
CARGO ?= cargo

.PHONY: all install tshark live-deps live-build ns3-deps ns3-build venv demo test test-rust test-python test-wheel bench fmt lint

all: test

# tshark is only needed by the pcap tests; failing to install it is a warning, not an error.
tshark:
	@if command -v tshark >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing tshark (apt-get)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; } \
	    || echo "warning: could not install tshark; the pcap tests will be skipped" >&2; \
	else echo "warning: tshark not found (and not root): the pcap tests will be skipped" >&2; fi

# Live mode (docs/live.md): iproute2 (ip, tc), iptables (NFQUEUE rules), ethtool (TSO/GSO off), clang +
# libbpf-dev + bpftool (the BPF congestion controls; bpftool also registers them). Installed with
# apt-get when root; otherwise a warning, and the live tests skip.
# tcpdump (the router's pcap), chromium + ffmpeg (dash.js playing real fMP4); dash.js itself comes from npm.
LIVE_PKGS := iproute2 iptables ethtool clang llvm libbpf-dev bpftool make tcpdump chromium ffmpeg
live-deps:
	@missing=""; for p in $(LIVE_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing for live mode:$$missing (apt-get)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; } \
	    || echo "warning: could not install$$missing; the live tests will be skipped" >&2; \
	else echo "warning: live mode needs$$missing (and root): the live tests will be skipped" >&2; fi
	@if [ ! -f .live-web/node_modules/dashjs/dist/dash.all.min.js ]; then \
	  if command -v npm >/dev/null 2>&1; then \
	    echo "installing dash.js (npm) into .live-web/"; mkdir -p .live-web; \
	    npm install --silent --no-audit --no-fund --prefix .live-web dashjs@4.7.4 >/dev/null \
	      || echo "warning: could not install dash.js; the dash.js test will be skipped" >&2; \
	  else echo "warning: npm not found: dash.js is not installed; the dash.js test will be skipped" >&2; fi; \
	fi

# The delay box (Rust, release) and the BPF object (needs clang and kernel BTF; skipped without them).
live-build:
	@$(CARGO) build -q --release -p haslab-delaybox
	@if command -v clang >/dev/null 2>&1 && [ -r /sys/kernel/btf/vmlinux ]; then $(MAKE) -s -C bpf; \
	else echo "warning: clang or kernel BTF missing: the BPF congestion controls are not built" >&2; fi

# ns-3 3.37 (Debian's libns3-dev) for `haslab crosscheck ns3` (docs/fidelity.md): installed with
# apt-get when root; otherwise a warning, and the crosscheck and its test skip.
# libns3-dev's pkg-config files link libgsl.so and libsqlite3.so: their -dev packages are needed too.
NS3_PKGS := libns3-dev libgsl-dev libsqlite3-dev pkg-config g++
ns3-deps:
	@missing=""; for p in $(NS3_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing for the ns-3 crosscheck:$$missing (apt-get)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; } \
	    || echo "warning: could not install$$missing; the ns-3 crosscheck will be skipped" >&2; \
	else echo "warning: the ns-3 crosscheck needs$$missing (and root to install them): it will be skipped" >&2; fi

# The crosscheck's ns-3 program (validation/ns3/), built into build/ns3/ (not committed).
NS3_MODULES := ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications ns3-traffic-control
NS3_BIN := build/ns3/dumbbell
ns3-build:
	@if pkg-config --exists $(NS3_MODULES) 2>/dev/null; then \
	  $(MAKE) -s $(NS3_BIN); \
	else echo "warning: ns-3 not found by pkg-config: validation/ns3 is not built" >&2; fi

$(NS3_BIN): validation/ns3/dumbbell.cc
	@mkdir -p $(dir $@)
	@echo "g++ $< -> $@ (ns-3 $$(pkg-config --modversion ns3-core))"
	@$${CXX:-g++} -O2 -std=c++17 -o $@ $< $$(pkg-config --cflags --libs $(NS3_MODULES))

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

# Editable install: maturin compiles crates/haslab-py (release profile) into python/haslab/;
# constraints.txt pins the Python packages to the tested versions. PGO=1: the profile-guided
# build (tools/pgo-build; twice the build time, a faster simulator, the same results).
PGO ?= 0
install: tshark live-deps ns3-deps venv
	@echo "pip install -e '.[dev]': compiles the simulator (release; a few minutes the first time)"
	@# an extension built before the stable-ABI wheel (_core.cpython-3XX-*.so) would shadow the new one
	@rm -f python/haslab/_core.cpython-*.so
	@# PGO=1: maturin and NumPy (the training run) first, then tools/pgo-build installs the package (no plain build before it)
	@if [ "$(PGO)" = 1 ]; then $(VPY) -m pip install -q -c constraints.txt maturin numpy && VENV=$(VENV) tools/pgo-build editable; \
	else $(VPY) -m pip install -q -c constraints.txt -e '.[dev]'; fi
	@$(MAKE) -s live-build
	@$(MAKE) -s ns3-build

demo: install
	$(VENV)/bin/haslab demo --out demo-out

# rustfmt's check first when the toolchain has it (`make lint` adds clippy)
test-rust:
	if $(CARGO) fmt --version >/dev/null 2>&1; then $(CARGO) fmt --all -- --check; fi
	$(CARGO) test --workspace --exclude haslab-py
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p haslab-core --no-deps

test-python:
	$(VENV)/bin/pytest -q python/tests

# The wheel (abi3, maturin) installed into a clean virtualenv runs an example (.ci/test-wheel).
test-wheel:
	PYTHON=$(PYTHON) VENV=$(VENV) .ci/test-wheel

test: install
	$(MAKE) test-rust
	$(MAKE) test-python
	$(MAKE) test-wheel

bench: install
	$(VENV)/bin/haslab bench

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
