#!/usr/bin/env bash
# Time `plot` (each kind) and `read --html` against `read -q` on the generated benchmark trace
# (issue 14's target: at most 2x `read -q`), and print the output sizes.
#
#   scripts/plot-speed.sh [PACKETS]      (default 1000000)
#
# Best of 3 wall times and peak RSS (GNU time) on examples/make_trace.rs's trace (8 RC QP pairs,
# 64-byte WRITE ONLY + ACK).
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

best() {
  local b="" m=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$@" > /dev/null 2>"$OUT/stderr.txt" \
      || { cat "$OUT/stderr.txt" >&2; exit 1; }
    read -r t rss < "$OUT/time.txt"
    if [ -z "$b" ] || (( $(echo "$t < $b" | bc) )); then b=$t; m=$rss; fi
  done
  echo "$b $m"
}

read -r base base_rss < <(best "$BIN" read "$TRACE" -q)
printf '%-40s %6s s  %6s MB  %s\n' "read -q" "$base" "$((base_rss / 1024))" "1.00x"
for k in psn rate latency messages; do
  read -r t m < <(best "$BIN" plot "$TRACE" --kind "$k" -o "$OUT/$k.svg")
  printf '%-40s %6s s  %6s MB  %.2fx  (%s bytes)\n' "plot --kind $k" "$t" "$((m / 1024))" \
    "$(echo "$t / $base" | bc -l)" "$(stat -c %s "$OUT/$k.svg")"
done
read -r t m < <(best "$BIN" plot "$TRACE" --kind psn -o "$OUT/psn.png")
printf '%-40s %6s s  %6s MB  %.2fx\n' "plot --kind psn (PNG)" "$t" "$((m / 1024))" \
  "$(echo "$t / $base" | bc -l)"
read -r t m < <(best "$BIN" read "$TRACE" --html "$OUT/report.html")
printf '%-40s %6s s  %6s MB  %.2fx  (%s bytes)\n' "read --html" "$t" "$((m / 1024))" \
  "$(echo "$t / $base" | bc -l)" "$(stat -c %s "$OUT/report.html")"
