#!/usr/bin/env bash
# Loopback capture speed: how many RoCE packets per second `roce-inspect capture` (and the
# `top` dashboard, which analyses every frame) keep up with before libpcap reports drops,
# against `tcpdump -w /dev/null` on the same stream.
# Needs root; everything runs in a throw-away network namespace (loopback only); the `top` rows
# need tmux (top runs in a detached 100x30 session; its header's drops are read off the screen).
#
#   scripts/capture-speed.sh [RATE ...]        (default rates: 50k 100k 200k 400k 0=max)
#   ONLY=REGEX   run only the configurations whose name matches; MTU=N sets the loopback MTU;
#   DUR=SECS     flood duration (default 3); PROFILE=debug uses the debug build.
#
# Builds roce-inspect and examples/udp_flood first (cargo build --release) into
# $CARGO_TARGET_DIR (default target).
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
TARGET=${CARGO_TARGET_DIR:-target}
BIN=$(realpath -m "$TARGET/$PROFILE/roce-inspect")
FLOOD=$TARGET/$PROFILE/examples/udp_flood
DUR=${DUR:-3}
if ! { [ -x "$BIN" ] && [ -x "$FLOOD" ]; }; then
  if [ "$PROFILE" = release ]; then
    cargo build --release --bin roce-inspect --example udp_flood
  else
    cargo build --profile "$PROFILE" --bin roce-inspect --example udp_flood
  fi
fi
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

# trial_top NAME RATE: `top lo` in a detached tmux session in the namespace, flood at RATE, read
# the header (rates, frames, libpcap's drops) off the screen, then quit with `q`.
trial_top() {
  local name=$1 rate=$2
  [[ "$name" =~ ${ONLY:-.} ]] || return 0
  command -v tmux > /dev/null || { echo "$name: skipped (tmux not found)"; return 0; }
  local sock="ri-speed-top-$$"
  tmux -L "$sock" -f /dev/null new-session -d -x 100 -y 30 \
    "ip netns exec $NS $BIN top lo 2> $OUT/err; sleep 30"
  sleep 1
  local sent
  sent=$(ip netns exec "$NS" "$FLOOD" --rate "$rate" --duration "$DUR")
  # Two screen updates after the flood: the header holds the final counts.
  sleep 0.6
  local head
  head=$(tmux -L "$sock" capture-pane -p | head -2)
  tmux -L "$sock" send-keys q
  sleep 0.5
  tmux -L "$sock" kill-server 2> /dev/null || true
  printf '%-38s rate %-7s | %s\n' "$name" "$rate" "$sent"
  sed 's/^/    /' <<< "$head"
  grep -E "frames read|warning" "$OUT/err" | sed 's/^/    /' || true
}

for rate in "${@:-50000 100000 200000 400000 0}"; do
  for r in $rate; do
    # Text output to /dev/null: buffered reads (TPACKET_V3), decode + print every packet.
    trial "roce-inspect >/dev/null" "$r" "$BIN capture lo > /dev/null"
    trial "roce-inspect -w >/dev/null" "$r" "$BIN capture lo -w /dev/null > /dev/null"
    # Output into a pipe: immediate mode, flushed per packet (what `| jq` gets).
    trial "roce-inspect --json | cat" "$r" "$BIN capture lo --json | cat > /dev/null"
    trial "roce-inspect --buffered --json | cat" "$r" "$BIN capture lo --buffered --json | cat > /dev/null"
    # Reports only: the same decode and analysis as top, without the screen.
    trial "roce-inspect capture -q" "$r" "$BIN capture lo -q > /dev/null"
    trial_top "roce-inspect top" "$r"
    trial "tcpdump -w /dev/null" "$r" "tcpdump -i lo -B 65536 -w /dev/null 'udp dst port 4791' > /dev/null"
    trial "tcpdump --immediate-mode -w" "$r" "tcpdump -i lo -B 65536 --immediate-mode -w /dev/null 'udp dst port 4791' > /dev/null"
  done
done
rm -rf "$OUT"
