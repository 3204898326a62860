#!/usr/bin/env bash
# Parquet export benchmark (issue 15): rate, size and peak RSS of `roce-inspect export`.
#
#   scripts/bench-export.sh [PACKETS] [BIG_PACKETS]     (defaults 1000000 and 0: no big trace)
#
# 1. Writes the PACKETS-packet benchmark trace with examples/make_trace.rs (8 RC QP pairs,
#    64-byte WRITE ONLY + ACK), then times `read --json > FILE` and `export --parquet DIR` on it
#    (best of 3, GNU time) and prints packets/s, the NDJSON and Parquet sizes and their ratio,
#    and the peak RSS of each.
# 2. With BIG_PACKETS > 0, writes a trace of that many packets and exports it once, printing its
#    size, time and peak RSS: bounded memory means the same peak RSS as on the small trace.
# The files are deleted at the end. Needs GNU time (make deps).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
BIG=${2:-0}
DIR=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/roce-export.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
export LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm-14/lib}
cargo build --release --quiet --example make_trace
cargo build --release --quiet
GEN=./target/release/examples/make_trace
BIN=./target/release/roce-inspect

# best CMD...: the best of 3 runs as "seconds peak_kb" in $BEST.
best() {
  BEST=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$DIR/t.txt" "$@"
    if [ -z "$BEST" ] || awk -v a="$(cut -d' ' -f1 "$DIR/t.txt")" -v b="${BEST%% *}" 'BEGIN{exit !(a<b)}'; then
      BEST=$(cat "$DIR/t.txt")
    fi
  done
}
rate() { awk -v n="$1" -v s="$2" 'BEGIN{ if (s > 0) printf "%.2f M packets/s", n / s / 1e6; else print "n/a" }'; }

"$GEN" "$DIR/t.pcap" "$N" > /dev/null
echo "trace: $N packets, $(stat -c %s "$DIR/t.pcap") bytes"
best sh -c "'$BIN' read '$DIR/t.pcap' --json > '$DIR/t.ndjson'"
read -r s kb <<< "$BEST"
echo "read --json > file: ${s} s ($(rate "$N" "$s")), peak RSS ${kb} KiB, NDJSON $(stat -c %s "$DIR/t.ndjson") bytes"
best sh -c "'$BIN' export '$DIR/t.pcap' --parquet '$DIR/pq' > /dev/null"
read -r s kb <<< "$BEST"
pq=$(du -sb "$DIR/pq" | cut -f1)
pk=$(du -sb "$DIR/pq/packets" | cut -f1)
echo "export --parquet: ${s} s ($(rate "$N" "$s")), peak RSS ${kb} KiB, Parquet ${pq} bytes (packets table ${pk})"
awk -v j="$(stat -c %s "$DIR/t.ndjson")" -v p="$pq" -v k="$pk" \
  'BEGIN{printf "size: all tables %.3f of the NDJSON (1/%.1f); packets table alone 1/%.1f\n", p/j, j/p, j/k}'
rm -f "$DIR/t.ndjson"

if [ "$BIG" -gt 0 ]; then
  "$GEN" "$DIR/big.pcap" "$BIG" > /dev/null
  echo "big trace: $BIG packets, $(stat -c %s "$DIR/big.pcap") bytes"
  /usr/bin/time -f "%e %M" -o "$DIR/t.txt" "$BIN" export "$DIR/big.pcap" --parquet "$DIR/big" > /dev/null
  read -r s kb < "$DIR/t.txt"
  echo "export --parquet: ${s} s ($(rate "$BIG" "$s")), peak RSS ${kb} KiB, Parquet $(du -sb "$DIR/big" | cut -f1) bytes"
fi
