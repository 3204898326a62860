# roce-inspect — build, test and demo entry points. `make test` is what CI runs.

SHELL := /bin/bash
CARGO ?= cargo
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages the build, the tests and the demo need.
DEB_PACKAGES := libpcap-dev pkg-config libibverbs-dev librdmacm-dev libclang-dev fonts-dejavu-core \
                tshark tcpdump mandoc iproute2 time bc jq python3 python3-pip librsvg2-bin tmux
# Headless browser for tests/html.rs, installed only under CI (the test skips without it).
ifneq ($(CI),)
DEB_PACKAGES += chromium
endif

# rdma-sys 0.3 builds its bindings with bindgen 0.59, which fails on libclang >= 16: prefer the
# oldest installed libclang (Debian 12 ships 14) unless the caller set LIBCLANG_PATH.
LIBCLANG_PATH ?= $(patsubst %/,%,$(dir $(firstword $(wildcard /usr/lib/llvm-14/lib/libclang.so.1 /usr/lib/llvm-15/lib/libclang.so.1))))
ifneq ($(LIBCLANG_PATH),)
export LIBCLANG_PATH
endif

.PHONY: all build deps demo test fmt clippy bench clean assets fuzz samples install plots

all: build

build:
	$(CARGO) build --release

## deps: install the Debian packages (idempotent). As root it runs apt-get itself, otherwise
## through sudo; `apt-get update` runs once, before installing, and only when something is missing.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "deps: all Debian packages present"; fi
	@# The Python duckdb and polars packages for the Parquet dataset test
	@# (tests/export_duckdb.py); the test skips with one line without them. As root or as a
	@# user, with or without PEP 668 markers.
	@python3 -c 'import duckdb, polars' 2>/dev/null || { \
	  echo "installing: python duckdb polars"; \
	  python3 -m pip install -q duckdb polars 2>/dev/null || \
	  python3 -m pip install -q --user duckdb polars 2>/dev/null || \
	  python3 -m pip install -q --user --break-system-packages duckdb polars || \
	  echo "deps: could not install the Python duckdb and polars packages; tests/export.rs skips its DuckDB and Polars check"; }

## demo: release build, then decode a bundled sample and print its report.
demo: deps
	$(CARGO) build --release
	./target/release/roce-inspect read samples/write_bw.pcap --summary

## samples: rewrite samples/ with the project's scenario writers (identical bytes each time).
samples:
	$(CARGO) run --quiet --example make_samples

## install: the binary, the man pages and the bash/zsh/fish completions under
## $(DESTDIR)$(PREFIX) (PREFIX defaults to /usr/local).
PREFIX ?= /usr/local
BIN ?= target/release/roce-inspect
install: build
	install -Dm755 $(BIN) $(DESTDIR)$(PREFIX)/bin/roce-inspect
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -Dm644 completions/roce-inspect.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/roce-inspect
	install -Dm644 completions/_roce-inspect $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_roce-inspect
	install -Dm644 completions/roce-inspect.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/roce-inspect.fish

## test: formatting, lints, and every test (unit, integration, tshark differential).
test: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --quiet
	$(CARGO) test

## fuzz: seed the corpora from samples/, tests/hostile, snap-length cuts of the sample scenarios
## and, when present, the third-party captures (ROCE_INSPECT_CAPTURES), then run each cargo-fuzz target (libFuzzer,
## nightly, debug assertions on) for FUZZ_SECONDS seconds, one target at a time. Fails on a crash
## (the input lands in fuzz/artifacts/TARGET/; the panic and, up to 8 KiB, the input in base64 are printed). Executions per target: the `stat::` lines.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := decode_frame analyze capture_file
fuzz:
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	$(CARGO) run --quiet --example fuzz_seeds
	@set -o pipefail; mkdir -p fuzz/logs; for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  (cd fuzz && $(CARGO) +nightly fuzz run -a $$t -- -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1) \
	    > fuzz/logs/$$t.log 2>&1 || { grep -m1 -A25 '^error' fuzz/logs/$$t.log; tail -40 fuzz/logs/$$t.log | cut -c1-300; \
	    df -h . | tail -1; grep -m1 -A2 -E 'panicked at|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)' fuzz/logs/$$t.log; \
	    for a in fuzz/artifacts/$$t/*; do [ -f "$$a" ] && [ $$(stat -c %s "$$a") -le 8192 ] && \
	      { echo "$$a, base64:"; base64 -w 100 "$$a"; }; done; \
	    echo "fuzz: $$t FAILED (see fuzz/artifacts/$$t/)"; exit 1; }; \
	  grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' fuzz/logs/$$t.log; \
	done

## assets: regenerate man/ and completions/ from the CLI definitions.
assets:
	$(CARGO) run --quiet --example gen_assets

## plots: regenerate the README's pictures (docs/plots/) from the bundled samples with `plot`.
PLOTS := psn:write_bw rate:congestion psn:congestion latency:read_timeout messages:write_bw
plots:
	$(CARGO) build --quiet
	@mkdir -p docs/plots; for p in $(PLOTS); do k=$${p%%:*}; s=$${p##*:}; \
	  $${CARGO_TARGET_DIR:-target}/debug/roce-inspect plot samples/$$s.pcap --kind $$k -o docs/plots/$$k-$$s.png || exit 1; \
	  echo "docs/plots/$$k-$$s.png"; done
	@$${CARGO_TARGET_DIR:-target}/debug/roce-inspect plot samples/nccl_node0.pcap samples/nccl_node1.pcap \
	  samples/nccl_node2.pcap --kind nccl -o docs/plots/nccl-steps.png && echo docs/plots/nccl-steps.png

bench: deps
	$(CARGO) bench --bench decode
	./scripts/bench-vs-tshark.sh

clean:
	$(CARGO) clean
