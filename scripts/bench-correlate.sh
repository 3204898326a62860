#!/usr/bin/env bash
# Time `roce-inspect correlate` on two captures of the same generated RoCEv2 trace, the second
# shifted by a known clock offset, and show that memory is bounded by the matching window.
#
#   scripts/bench-correlate.sh [PACKETS]      (default 1000000 per capture)
#
# Trace: examples/make_trace.rs (8 RC QP pairs, 64-byte WRITE ONLY + ACK, 1 µs apart); the
# shifted copy is written by editcap -t (Wireshark) as a nanosecond pcap, so the shift is exact.
# Reports wall time, CPU time, peak RSS (GNU time) and packets per second over both files, best
# of 3; then peak RSS against a trace whose packets mostly do not match (9 QP pairs), where
# every copy waits the whole window.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
OUT=${BENCH_OUT:-bench-out}
mkdir -p "$OUT"
A="$OUT/trace-$N.pcap"; B="$OUT/trace-$N-shifted.pcap"; C="$OUT/trace-$N-9qp.pcap"
cargo build --release --quiet --example make_trace
cargo build --release --quiet
[ -f "$A" ] || ./target/release/examples/make_trace "$A" "$N"
[ -f "$B" ] || editcap -F nsecpcap -t 0.001234567 "$A" "$B"
[ -f "$C" ] || ./target/release/examples/make_trace "$C" "$N" 9
BIN=./target/release/roce-inspect

run() {
  local name=$1; shift
  local best="" line=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %U %S %M" -o "$OUT/time.txt" "$@" > /dev/null
    read -r t u s m < "$OUT/time.txt"
    if [ -z "$best" ] || (( $(echo "$t < $best" | bc) )); then
      best=$t
      line=$(printf '%-44s %6.2f s wall %6.2f s CPU %6.1f MB  %5.2f M packets/s (wall)' "$name" \
        "$t" "$(echo "$u + $s" | bc)" "$(echo "$m / 1024" | bc -l)" "$(echo "2 * $N / $t / 1000000" | bc -l)")
    fi
  done
  echo "$line"
}

echo "traces: $A, $B (+1.234567 ms), $C; $N packets each"
run "correlate (shifted copy)" $BIN correlate "$A" "$B"
for w in 1 0.1 0.01; do
  run "correlate (9 QP pairs, --window $w)" $BIN correlate "$A" "$C" --window "$w"
done
