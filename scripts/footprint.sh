#!/usr/bin/env bash
# Footprint of a standalone node: time from start to /readyz 200, and RSS
# after it has idled. Usage: scripts/footprint.sh [BINARY] [IDLE_SECONDS]
# (defaults: ./ews, 60). Wrap the binary with qemu via EWS_WRAP=qemu-arm-static.
set -euo pipefail
bin=${1:-./ews}
idle=${2:-60}
dir=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
cat >"$dir/ews.toml" <<CFG
[node]
name = "ews1"
http = "127.0.0.1:$port"
[http]
auth = "none"
[sim]
device_latency = "20ms"
CFG
start=$(date +%s%N)
# shellcheck disable=SC2086
${EWS_WRAP:-} "$bin" run --config "$dir/ews.toml" 2>"$dir/log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 3000); do
	if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
	sleep 0.01
done
ready=$(date +%s%N)
echo "start to /readyz 200: $(((ready - start) / 1000000)) ms"
sleep "$idle"
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
echo "RSS after ${idle}s idle: $((rss / 1024)) MiB ($rss kB)"
# the binary's pages (file) apart from heap, stacks and runtime (anon)
awk '/RssAnon|RssFile/ {printf "%s %s kB  ", $1, $2} END {print ""}' "/proc/$pid/status"
