#!/usr/bin/env bash
# Device-bound control (issue 49 part 1): 3 simulated boards of 3 slots, six
# devices, 15 ms per device operation, 30 ms pages; `ews bench` sends a mix
# of 35 % control spread over the six devices and 65 % pages at each of
# LOADS, then cmd/benchfloor prints the device-bound floor beside it.
# Usage: scripts/bench-device.sh [EWS_BINARY] [OUT_DIR]
# MIX=sensors (default): reads of six sensors, node = "any" (any board
#   reaches them: shared, a read joins the read under way);
# MIX=relays: toggles of six relays pinned two to a board (nothing shared).
# POLICY (default priority-lc) is [sched] policy; LOADS (default "0.4 1.8")
# multiples of 1x = 360 req/s (9 slots ÷ the mix's mean work of 24.75 ms);
# DURATION (default 10s) each; TRACE=1 passes --trace to ews bench (the
# per-request trace in the JSON, docs/BENCHMARKS.md); ENTRY=follower sends
# to ews2 instead of the master ews1; GENERATOR (default EWS_BINARY) is the
# binary whose `ews bench` sends (one generator for builds compared).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
out=${2:-$(mktemp -d)}
dur=${DURATION:-10s}
mix=${MIX:-sensors}
policy=${POLICY:-priority-lc}
# shellcheck source=scripts/lib/loopback.sh
. scripts/lib/loopback.sh
loopback_here "$out"
devices=""
spec=""
for d in 1 2 3 4 5 6; do
	if [[ $mix == relays ]]; then
		devices+=$'\n[[device]]\nname = "r'$d$'"\ndriver = "sim-switch"\nnode = "ews'$(((d - 1) % 3 + 1))$'"\n'
		spec+="r$d=0.0583333:POST /api/devices/r$d/toggle,"
	else
		devices+=$'\n[[device]]\nname = "s'$d$'"\ndriver = "sim-sensor"\nnode = "any"\n'
		spec+="s$d=0.0583333:POST /api/devices/s$d/read,"
	fi
done
spec+="browse=0.65:GET /"
board_toml() { # the config of board ews$1
	loopback_toml "$1" "capacity = 3"
	cat <<TOML
[sched]
policy = "$policy"
headroom = "${HEADROOM:-off}"
[http]
auth = "none"
[sim]
device_latency = "15ms"
page_latency = "30ms"
$devices
TOML
}
loopback_start "$bin"
loopback_running
trace=()
[[ -n ${TRACE:-} ]] && trace=(--trace)
reports=()
for x in ${LOADS:-0.4 1.8}; do
	rate=$(awk "BEGIN{print 360*$x}")
	"${GENERATOR:-$bin}" bench --url "$entry" --rate "$rate" --duration "$dur" --seed 7 --mix "$spec" "${trace[@]}" --json "$out/$mix-$policy-${x}x.json" >/dev/null
	reports+=("$out/$mix-$policy-${x}x.json")
done
# a sensor's own max_age is a quarter of its read (hal.DefaultMaxAgeShare): 3.75 ms
${BENCHFLOOR:-go run ./cmd/benchfloor} --device-latency 15ms --page-latency 30ms --max-age 3750us "${reports[@]}"
echo "reports and logs in $out"
