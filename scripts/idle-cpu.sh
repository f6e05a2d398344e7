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
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$d"; }
trap cleanup EXIT
key=$(head -c 32 /dev/urandom | base64)
peers="\"ews1=127.0.0.1:$((base + 100))\", \"ews2=127.0.0.1:$((base + 101))\", \"ews3=127.0.0.1:$((base + 102))\""
for i in 1 2 3; do
	cat >"$d/ews$i.toml" <<TOML
[node]
name = "ews$i"
http = "127.0.0.1:$((base + i - 1))"
gossip = "127.0.0.1:$((base + 99 + i))"
state_dir = "$d/state$i"
mdns = false
[cluster]
peers = [$peers]
key = "$key"
tmax = "1s"
heartbeat = "100ms"
[http]
auth = "none"
TOML
	"$bin" run --config "$d/ews$i.toml" >"$d/ews$i.log" 2>&1 &
	pids+=($!)
done
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
