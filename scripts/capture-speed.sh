#!/usr/bin/env bash
# Loopback capture speed: how many RoCE packets per second `roce-inspect capture` keeps up with
# before libpcap reports drops, against `tcpdump -w /dev/null` on the same stream.
# Needs root; everything runs in a throw-away network namespace (loopback only).
#
#   scripts/capture-speed.sh [RATE ...]        (default rates: 50k 100k 200k 400k 0=max)
#   ONLY=REGEX   run only the configurations whose name matches; MTU=N sets the loopback MTU;
#   DUR=SECS     flood duration (default 3).
#
# Builds target/release/roce-inspect and examples/udp_flood first (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release/roce-inspect
FLOOD=target/release/examples/udp_flood
DUR=${DUR:-3}
[ -x "$BIN" ] && [ -x "$FLOOD" ] || cargo build --release --bin roce-inspect --example udp_flood
NS="ri-speed-$$"
ip netns add "$NS"
trap 'ip netns del "$NS" 2>/dev/null || true' EXIT
ip -n "$NS" link set lo up mtu "${MTU:-65536}"
OUT=$(mktemp -d)

# trial NAME RATE CMD: run the shell command CMD (a capture; its stderr goes to the report
# file) in the namespace, flood at RATE, then stop the capture with SIGINT.
trial() {
  local name=$1 rate=$2 cmd=$3
  [[ "$name" =~ ${ONLY:-.} ]] || return 0
  setsid ip netns exec "$NS" bash -c "$cmd" 2> "$OUT/err" &
  local pid=$!
  sleep 1
  local sent
  sent=$(ip netns exec "$NS" "$FLOOD" --rate "$rate" --duration "$DUR")
  sleep 0.5
  kill -INT -- "-$pid"; wait "$pid" || true
  printf '%-38s rate %-7s | %s\n' "$name" "$rate" "$sent"
  grep -E "captured|dropped|warning" "$OUT/err" | sed 's/^/    /'
}

for rate in "${@:-50000 100000 200000 400000 0}"; do
  for r in $rate; do
    # Text output to /dev/null: buffered reads (TPACKET_V3), decode + print every packet.
    trial "roce-inspect >/dev/null" "$r" "$BIN capture lo > /dev/null"
    trial "roce-inspect -w >/dev/null" "$r" "$BIN capture lo -w /dev/null > /dev/null"
    # Output into a pipe: immediate mode, flushed per packet (what `| jq` gets).
    trial "roce-inspect --json | cat" "$r" "$BIN capture lo --json | cat > /dev/null"
    trial "roce-inspect --buffered --json | cat" "$r" "$BIN capture lo --buffered --json | cat > /dev/null"
    trial "tcpdump -w /dev/null" "$r" "tcpdump -i lo -B 65536 -w /dev/null 'udp dst port 4791' > /dev/null"
    trial "tcpdump --immediate-mode -w" "$r" "tcpdump -i lo -B 65536 --immediate-mode -w /dev/null 'udp dst port 4791' > /dev/null"
  done
done
rm -rf "$OUT"
