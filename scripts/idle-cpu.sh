#!/usr/bin/env bash
# CPU of an idle 3-board cluster (docs/BENCHMARKS.md "Idle CPU"): starts 3
# boards on loopback (heartbeat 100 ms, tmax 1 s, auth none), waits for the
# master, then prints each board's CPU centiseconds (utime + stime from
# /proc/PID/stat) over SECONDS of idling.
# Usage: scripts/idle-cpu.sh [EWS_BINARY] [BASE_PORT] [SECONDS]
set -euo pipefail
bin=${1:-./ews}
base=${2:-42000}
secs=${3:-30}
d=$(mktemp -d)
# shellcheck source-path=SCRIPTDIR source=lib/loopback.sh
. "$(dirname "$0")/lib/loopback.sh"
LOOPBACK_RM=1
loopback_init "$d" "$base" $((base + 100))
board_toml() { # the config of board ews$1
	loopback_toml "$1"
	cat <<TOML
[http]
auth = "none"
TOML
}
loopback_start "$bin"
for _ in $(seq 100); do
	curl -fs "http://127.0.0.1:$((base + 2))/api/cluster" 2>/dev/null | grep -q '"master":"ews1"' && break
	sleep 0.2
done
sleep 5 # the start's work (raft bootstrap, first elections) is not idling
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
before=()
for p in "${pids[@]}"; do before+=("$(cpu "$p")"); done
sleep "$secs"
out=""
for i in 0 1 2; do out+=" ews$((i + 1)) $(($(cpu "${pids[$i]}") - before[i]))cs"; done
echo "$(basename "$bin"):$out (CPU centiseconds in $secs s)"
