#!/usr/bin/env bash
# roce-inspect against a bare libpcap loop, tcpdump and tshark on the same generated captures,
# side by side in one run: medians of 5 (wall time to the millisecond, peak RSS by GNU
# time), with `taskset -c 0` for the one-core figures.
#
#   scripts/bench-vs-tshark.sh [PACKETS] [RUNS]     (defaults 1000000, 5)
#
# Traces: examples/make_trace.rs (8 RC QP pairs, 64-byte WRITE ONLY + ACK, ~138 B per frame)
# and examples/make_mixed.rs (the sample scenarios tiled: PMTU 1024 WRITEs with loss and
# go-back-N, READs with timeouts, incast with CE and CNPs), both with valid ICRCs.
# The binaries are cargo's, in $CARGO_TARGET_DIR when it is set (else ./target).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
RUNS=${2:-5}
OUT=${BENCH_OUT:-bench-out}
mkdir -p "$OUT"
cargo build --release --quiet --example make_trace --example make_mixed --example pcap_loop
cargo build --release --quiet
SMALL="$OUT/trace-$N.pcap"
MIXED="$OUT/mixed-$((N / 2)).pcap"
TARGET=${CARGO_TARGET_DIR:-./target}
[ -f "$SMALL" ] || "$TARGET"/release/examples/make_trace "$SMALL" "$N" > /dev/null
[ -f "$MIXED" ] || "$TARGET"/release/examples/make_mixed "$MIXED" "$((N / 2))" > /dev/null
BIN=$TARGET/release/roce-inspect
LOOP=$TARGET/release/examples/pcap_loop
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "GNU time (/usr/bin/time) is needed (Debian package time)" >&2; exit 1; }
THREADS=""
$BIN read --help | grep -q -- '--threads' && THREADS=yes
# Display filters (issue 35): the same filter for both tools, matching few frames.
DFILTER=""
$BIN read --help | grep -q -- '--display-filter' && DFILTER='bth.psn > 100 && ecn == "ce"'
TSHARK_DFILTER='infiniband.bth.psn > 100 && ip.dsfield.ecn == 3'

# The medians of the current trace, by key, for the ratios printed after its table.
declare -A MED

# median of RUNS wall times (s, to the millisecond: taken around GNU time, whose own %e counts
# in steps of 10 ms, too coarse for the ratios to a 0.06 s loop) and the peak RSS (MB, GNU
# time's) of that run; the median is kept as MED[key] when a key is given
# (run [-k KEY] NAME COMMAND...)
run() {
  local key=""
  if [ "$1" = -k ]; then key=$2; shift 2; fi
  local name=$1; shift
  : > "$OUT/runs.txt"
  local t0 t1
  for _ in $(seq "$RUNS"); do
    t0=$(date +%s%N)
    "$TIME" -f "%M" -o "$OUT/time.txt" "$@" > /dev/null 2> "$OUT/stderr.txt" || true
    t1=$(date +%s%N)
    # Only the figure: GNU time adds "Command exited with non-zero status N" for a failure.
    grep -E '^[0-9]+$' "$OUT/time.txt" |
      awk -v ns=$((t1 - t0)) '{ printf "%.4f %s\n", ns / 1e9, $1 }' >> "$OUT/runs.txt" || true
  done
  local line
  line=$(sort -n "$OUT/runs.txt" | awk -v n="$RUNS" 'NR == int((n + 1) / 2) { print $1, $2 }')
  [ -n "$key" ] && MED[$key]=${line%% *}
  awk -v name="$name" -v l="$line" \
    'BEGIN { split(l, v, " "); printf "%-48s %8.3f s %8.1f MB\n", name, v[1], v[2] / 1024 }'
}

# The issue-16 targets beside the ratios of this trace's medians (a ratio to a median of 0, a
# command that did not run, is printed as "-"). Each wall time includes starting the process
# under GNU time (about 1–2 ms here), which weighs on the ratios of tiny traces only.
ratios() {
  ratio() { awk -v a="${MED[$1]:-0}" -v b="${MED[$2]:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }
  echo "-- ratios (issue 16 targets in brackets)"
  echo "   read -q, 1 core / libpcap loop:          $(ratio q1 loop)x  [<= 1.5]"
  [ -n "${MED[q2]:-}" ] && echo "   read -q --threads 2 / libpcap loop:      $(ratio q2 loop)x  [<= 1.0]"
  echo "   tcpdump -nn -r / read (text):            $(ratio tcpdump text)x  [>= 5]"
  echo "   tshark -T fields / read --json:          $(ratio fields json)x  [>= 40]"
  echo "   tshark -q -z io,phs / read -q:           $(ratio phs q)x"
  if [ -n "$DFILTER" ]; then
    echo "-- ratios (issue 35 targets in brackets)"
    echo "   read -Y / read -q, 1 core:               $(ratio y1 q1)x  [<= 1.2]"
    echo "   tshark -Y / read -Y:                     $(ratio tsharky y)x  [>= 30]"
  fi
}

bench() {
  local trace=$1
  # Into the page cache first: this machine drops files from it between runs.
  cat "$trace" > /dev/null
  echo "== $trace ($(du -h "$trace" | cut -f1), $($LOOP "$trace" | cut -d' ' -f1) frames), median of $RUNS"
  run -k loop "libpcap pcap_next_ex loop (1 core)" taskset -c 0 $LOOP "$trace"
  run -k q1 "roce-inspect read -q (1 core)" taskset -c 0 $BIN read -q "$trace"
  if [ -n "$THREADS" ]; then
    run "roce-inspect read -q --threads 1" $BIN read -q --threads 1 "$trace"
    run -k q2 "roce-inspect read -q --threads 2" $BIN read -q --threads 2 "$trace"
  fi
  run -k q "roce-inspect read -q" $BIN read -q "$trace"
  run -k text "roce-inspect read (text)" $BIN read "$trace"
  run -k json "roce-inspect read --json" $BIN read "$trace" --json
  run -k tcpdump "tcpdump -nn -r" tcpdump -nn -r "$trace"
  run -k fields "tshark -T fields (2 fields)" tshark -r "$trace" -T fields -e infiniband.bth.destqp -e infiniband.bth.psn
  run -k phs "tshark -q -z io,phs" tshark -r "$trace" -q -z io,phs
  if [ -n "$DFILTER" ]; then
    run -k y1 "roce-inspect read -Y (1 core)" taskset -c 0 $BIN read -Y "$DFILTER" "$trace"
    run -k y "roce-inspect read -Y" $BIN read -Y "$DFILTER" "$trace"
    run -k tsharky "tshark -Y (same filter)" tshark -r "$trace" -Y "$TSHARK_DFILTER"
    # With the analysis marks (one thread, a window of frames for late marks); no tshark
    # counterpart for InfiniBand.
    run "roce-inspect read -Y analysis.retransmission" $BIN read -Y analysis.retransmission "$trace"
  fi
  ratios
  MED=()
}

bench "$SMALL"
bench "$MIXED"
