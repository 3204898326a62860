#!/usr/bin/env bash
# Peak memory of `read -q` against its bound (issue 38): the release binary reads the
# 500k-frame mixed trace (examples/make_mixed.rs: 337 MB, 7,832 flows, the sample scenarios
# tiled with loss, go-back-N, READ timeouts, CE marks and CNPs) RUNS times, with the default
# threads and with one, and fails when any run's peak RSS (GNU time's %M) is over the bound.
#
#   scripts/rss-check.sh [FRAMES] [BOUND_KIB] [RUNS]     (defaults 500000, 32768 = 32 MiB, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-500000}
BOUND=${2:-32768}
RUNS=${3:-3}
OUT=${BENCH_OUT:-bench-out}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "GNU time (/usr/bin/time) is needed (Debian package time)" >&2; exit 1; }
mkdir -p "$OUT"
cargo build --release --quiet --bin roce-inspect --example make_mixed
DIR=${CARGO_TARGET_DIR:-target}/release
TRACE="$OUT/mixed-$N.pcap"
[ -f "$TRACE" ] || "$DIR/examples/make_mixed" "$TRACE" "$N" > /dev/null
worst=0
for threads in "" "--threads 1"; do
  peaks=""
  for _ in $(seq "$RUNS"); do
    # shellcheck disable=SC2086 # $threads is empty or two words
    "$TIME" -f %M -o "$OUT/rss.txt" "$DIR/roce-inspect" read -q $threads "$TRACE" > /dev/null
    kib=$(grep -E '^[0-9]+$' "$OUT/rss.txt")
    peaks="$peaks $kib"
    [ "$kib" -gt "$worst" ] && worst=$kib
  done
  echo "read -q ${threads:---threads default}: peak RSS KiB:$peaks"
done
if [ "$worst" -gt "$BOUND" ]; then
  echo "FAIL: peak RSS $worst KiB is over the bound of $BOUND KiB" >&2
  exit 1
fi
echo "ok: peak RSS at most $worst KiB, bound $BOUND KiB"
