#!/usr/bin/env bash
# Issue 27, part 2: req/s and latency of a trivial page entering through the
# master and through a follower, in the same run, interleaved.
# 3 simulated boards on loopback (capacity 64, page latency 0, auth none).
# Usage: scripts/bench-fastentry.sh [BINARY] [ROUNDS] [PATH]
# CAPACITY (default 64) sets every board's slots: 4 makes the master queue
# (32 connections on 12 slots), so followers place every request.
set -euo pipefail
bin=${1:-./ews}
rounds=${2:-3}
page=${3:-/}
base=${BASE_PORT:-18181}
dir=$(mktemp -d)
# shellcheck source-path=SCRIPTDIR source=lib/loopback.sh
. "$(dirname "$0")/lib/loopback.sh"
LOOPBACK_RM=1
loopback_init "$dir" "$base" $((base + 100))
board_toml() { # the config of board ews$1
	loopback_toml "$1" "capacity = ${CAPACITY:-64}"
	cat <<TOML
tthreshold = "500ms"
[http]
auth = "none"
[sim]
page_latency = "0s"
TOML
}
PPROF_BASE=${PPROF:+$((base + 199))} loopback_start "$bin"
for _ in $(seq 100); do
	if curl -fs "http://127.0.0.1:$base/api/cluster" 2>/dev/null | grep -q '"master":"ews1"' &&
		curl -fs "http://127.0.0.1:$((base + 1))/api/cluster" 2>/dev/null | grep -q '"master":"ews1"'; then
		break
	fi
	sleep 0.2
done
curl -fs -o /dev/null "http://127.0.0.1:$((base + 1))$page" # opens the follower's placement channel
for r in $(seq "$rounds"); do
	for side in master follower; do
		port=$base
		[ "$side" = follower ] && port=$((base + 1))
		prof=()
		if [ -n "${PPROF:-}" ] && [ "$r" = "$rounds" ]; then # profile every board through the last round's side
			for i in 1 2 3; do
				curl -fs -o "${PPROF}-$side-ews$i.pprof" "http://127.0.0.1:$((base + 199 + i))/debug/pprof/profile?seconds=4" &
				prof+=($!)
			done
		fi
		out=$(wrk -t2 -c32 -d5s --latency "http://127.0.0.1:$port$page")
		for p in "${prof[@]}"; do wait "$p" || true; done
		rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
		p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
		p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
		non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
		echo "round $r via $side: ${rps} req/s p50 ${p50} p99 ${p99} non-2xx ${non2xx:-0}"
	done
done
if [ -n "${SHOW_METRICS:-}" ]; then
	curl -fs "http://127.0.0.1:$((base + 1))/metrics" | grep -E '^ews_dispatch_(placed|forwarded)_total' || true
	curl -fs "http://127.0.0.1:$base/metrics" | grep -E '^ews_dispatch_(placements|forwarded)_total' || true
fi
