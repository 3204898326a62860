#!/usr/bin/env bash
# Scale test (issue 7, point 4): a capture of at least 5 GiB and adversarial QPN spraying.
#
#   scripts/scale-test.sh [GIB]          (default 5; SCALE_DIR sets where the files go)
#
# 1. Writes a GIB-GiB trace with examples/make_trace.rs (8 RC QP pairs, 64-byte WRITE ONLY +
#    ACK, valid ICRCs, 116 bytes per record on average) to a temporary file, runs
#    `roce-inspect read F --summary --json` under GNU time, and checks that every frame is
#    counted (total = roce = packets written, nothing other/malformed/truncated/untracked, the
#    16 flows' packets add up) with peak RSS under 32 MiB, the same as on a 1M-packet trace.
# 2. QPN spraying: 2 M packets over 1 M QP pairs (2 M flows of 1 packet) and 4 M packets over
#    2 M QP pairs: with the default --max-flows the table stops at 16384 flows and the peak RSS is
#    under 32 MiB and the same for both (bounded, not growing with the flows sprayed); with
#    --max-flows 1000 it stays under 32 MiB too. Every frame is counted: the tracked flows' packets + frames.untracked
#    = total, and frames.flows_dropped counts the refused flows (exact below 65536: checked with
#    20000 QP pairs and --max-flows 1000, 39000 flows dropped).
# The files are deleted at the end. Needs jq and GNU time (make deps).
set -euo pipefail
cd "$(dirname "$0")/.."
GIB=${1:-5}
LIMIT_KB=$((32 * 1024))
DIR=$(mktemp -d "${SCALE_DIR:-${TMPDIR:-/tmp}}/roce-scale.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
export LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm-14/lib}
cargo build --release --quiet --example make_trace
cargo build --release --quiet
GEN=./target/release/examples/make_trace
BIN=./target/release/roce-inspect
fail() { echo "scale-test: FAIL: $*" >&2; exit 1; }

# summary FILE [ARGS...]: report JSON in $DIR/r.json, "seconds peak_kb" in $DIR/t.txt.
summary() {
  local f=$1; shift
  /usr/bin/time -f "%e %M" -o "$DIR/t.txt" "$BIN" read "$f" --summary --json "$@" > "$DIR/r.json"
  read -r SECS RSS_KB < "$DIR/t.txt"
}
jqr() { jq -r "$1" "$DIR/r.json"; }

check_all_counted() { # N FLOWS
  local n=$1 flows=$2
  [ "$(jqr '.frames | [.total, .roce, .other, .malformed, .truncated, .untracked] | map(tostring) | join(" ")')" = "$n $n 0 0 0 0" ] \
    || fail "frames $(jqr -c .frames | cut -c1-300) for $n packets"
  [ "$(jqr '.flows | length')" = "$flows" ] || fail "$(jqr '.flows | length') flows, want $flows"
  [ "$(jqr '[.flows[].packets] | add')" = "$n" ] || fail "flow packets do not add up to $n"
}

# --- 1. Size -----------------------------------------------------------------------------------
N1=1000000
"$GEN" "$DIR/small.pcap" "$N1"
summary "$DIR/small.pcap"
check_all_counted "$N1" 16
echo "1M packets ($(stat -c %s "$DIR/small.pcap") bytes): ${SECS} s, peak RSS ${RSS_KB} KiB"
rm -f "$DIR/small.pcap"

BYTES=$((GIB * 1024 * 1024 * 1024))
N=$(( (BYTES - 24 + 115) / 116 ))
T0=$(date +%s.%N)
"$GEN" "$DIR/big.pcap" "$N"
T1=$(date +%s.%N)
SIZE=$(stat -c %s "$DIR/big.pcap")
[ "$SIZE" -ge "$BYTES" ] || fail "trace is $SIZE bytes, want >= $BYTES"
echo "wrote $N packets, $SIZE bytes ($(echo "scale=2; $SIZE / 1073741824" | bc) GiB) in $(echo "$T1 - $T0" | bc) s"
summary "$DIR/big.pcap"
check_all_counted "$N" 16
echo "read --summary: ${SECS} s ($(echo "scale=2; $N / $SECS / 1000000" | bc) M packets/s), peak RSS ${RSS_KB} KiB"
[ "$RSS_KB" -lt "$LIMIT_KB" ] || fail "peak RSS ${RSS_KB} KiB >= ${LIMIT_KB} KiB"
rm -f "$DIR/big.pcap"

# --- 2. QPN spraying -----------------------------------------------------------------------------
spray() { # PACKETS PAIRS MAX_FLOWS
  local n=$1 pairs=$2 mf=$3
  "$GEN" "$DIR/spray.pcap" "$n" "$pairs"
  summary "$DIR/spray.pcap" --max-flows "$mf"
  rm -f "$DIR/spray.pcap"
  local flows in_flows untracked dropped exact
  flows=$(jqr '.flows | length'); in_flows=$(jqr '[.flows[].packets] | add // 0')
  untracked=$(jqr .frames.untracked); dropped=$(jqr .frames.flows_dropped)
  exact=$(jqr .frames.flows_dropped_exact)
  [ "$(jqr .frames.total)" = "$n" ] && [ "$(jqr .frames.roce)" = "$n" ] || fail "spray: frames $(jqr -c .frames)"
  [ "$flows" = "$mf" ] || fail "spray: $flows flows tracked, want $mf"
  [ $((in_flows + untracked)) = "$n" ] || fail "spray: $in_flows in flows + $untracked untracked != $n"
  local want=$((2 * pairs - mf))
  if [ "$want" -le 65536 ]; then
    [ "$dropped" = "$want" ] && [ "$exact" = true ] || fail "spray: flows_dropped $dropped ($exact), want $want exact"
  else
    [ "$dropped" = 65536 ] && [ "$exact" = false ] || fail "spray: flows_dropped $dropped ($exact), want 65536 as a lower bound"
  fi
  echo "spray $n packets over $((2 * pairs)) flows, --max-flows $mf: ${SECS} s, peak RSS ${RSS_KB} KiB; untracked $untracked frames, flows_dropped $dropped (exact: $exact)"
}
spray 2000000 1000000 16384; RSS_A=$RSS_KB
[ "$RSS_KB" -lt "$LIMIT_KB" ] || fail "default --max-flows: peak RSS ${RSS_KB} KiB >= ${LIMIT_KB} KiB"
spray 4000000 2000000 16384; RSS_B=$RSS_KB
[ "$RSS_KB" -lt "$LIMIT_KB" ] || fail "default --max-flows: peak RSS ${RSS_KB} KiB >= ${LIMIT_KB} KiB"
# Bounded: twice the sprayed flows and packets, within 10% of the same peak RSS.
[ $((RSS_B * 10)) -le $((RSS_A * 11)) ] || fail "spray RSS grew: ${RSS_A} -> ${RSS_B} KiB"
spray 4000000 2000000 1000
[ "$RSS_KB" -lt "$LIMIT_KB" ] || fail "--max-flows 1000: peak RSS ${RSS_KB} KiB >= ${LIMIT_KB} KiB"
spray 400000 20000 1000
echo "scale-test: OK"
