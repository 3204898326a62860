#!/usr/bin/env bash
# Time roce-inspect against tcpdump and tshark on the same generated RoCEv2 trace.
#
#   scripts/bench-vs-tshark.sh [PACKETS]      (default 1000000)
#
# Generates the trace with examples/make_trace.rs (8 RC QP pairs, 64-byte WRITE ONLY + ACK,
# valid ICRCs), then reports wall time and peak RSS (GNU time) for each reader, best of 3.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
OUT=${BENCH_OUT:-bench-out}
mkdir -p "$OUT"
TRACE="$OUT/trace-$N.pcap"
cargo build --release --quiet --example make_trace
cargo build --release --quiet
[ -f "$TRACE" ] || ./target/release/examples/make_trace "$TRACE" "$N"
BIN=./target/release/roce-inspect
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "GNU time (/usr/bin/time) is needed for RSS figures" >&2; TIME=""; }

run() {
  local name=$1; shift
  local best="" rss=""
  for _ in 1 2 3; do
    if [ -n "$TIME" ]; then
      "$TIME" -f "%e %M" -o "$OUT/time.txt" "$@" > /dev/null 2>"$OUT/stderr.txt" || true
      read -r t m < "$OUT/time.txt"
    else
      local s=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; local e=$(date +%s.%N)
      t=$(echo "$e - $s" | bc); m=0
    fi
    if [ -z "$best" ] || (( $(echo "$t < $best" | bc) )); then best=$t; rss=$m; fi
  done
  printf '%-42s %8.2f s %8.1f MB\n' "$name" "$best" "$(echo "$rss / 1024" | bc -l)"
}

echo "trace: $TRACE ($(du -h "$TRACE" | cut -f1), $N packets)"
run "roce-inspect read (text)" $BIN read "$TRACE"
run "roce-inspect read --json" $BIN read "$TRACE" --json
if $BIN read --help | grep -q -- '--summary'; then
  run "roce-inspect read --summary" $BIN read "$TRACE" --summary -q
fi
command -v tcpdump >/dev/null && run "tcpdump -nn -r" tcpdump -nn -r "$TRACE"
if command -v tshark >/dev/null; then
  run "tshark -T fields (2 fields)" tshark -r "$TRACE" -T fields -e infiniband.bth.destqp -e infiniband.bth.psn
  run "tshark -q -z io,phs" tshark -r "$TRACE" -q -z io,phs
fi
