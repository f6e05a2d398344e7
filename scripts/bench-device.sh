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
mkdir -p "$out"
if [[ -z $bin ]]; then
	bin=$out/ews
	go build -o "$bin" ./cmd/ews
fi
base=$((20000 + RANDOM % 20000))
key=$(head -c 32 /dev/urandom | base64)
peers="\"ews1=127.0.0.1:$((base + 10))\", \"ews2=127.0.0.1:$((base + 11))\", \"ews3=127.0.0.1:$((base + 12))\""
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
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
for i in 1 2 3; do
	cat >"$out/ews$i.toml" <<TOML
[node]
name = "ews$i"
http = "127.0.0.1:$((base + i - 1))"
gossip = "127.0.0.1:$((base + 9 + i))"
capacity = 3
state_dir = "$out/state$i"
mdns = false
[cluster]
peers = [$peers]
key = "$key"
tmax = "1s"
heartbeat = "100ms"
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
	"$bin" run --config "$out/ews$i.toml" >"$out/ews$i.log" 2>&1 &
	pids+=($!)
done
url=http://127.0.0.1:$base
entry=$url
[[ ${ENTRY:-master} == follower ]] && entry=http://127.0.0.1:$((base + 1))
for _ in $(seq 100); do
	if curl -fs "$url/api/cluster" | grep -q '"master":"ews1"' && [[ $(curl -fs "$url/api/cluster" | grep -o '"runstate":"running"' | wc -l) -eq 3 ]]; then break; fi
	sleep 0.2
done
if ! curl -fs "$url/api/cluster" | grep -q '"master":"ews1"' || [[ $(curl -fs "$url/api/cluster" | grep -o '"runstate":"running"' | wc -l) -ne 3 ]]; then
	# a board that did not start (its port taken by another process) would
	# turn its pinned devices' requests into sheds: no figure from that
	echo "bench-device: the three boards are not all running; logs in $out" >&2
	exit 1
fi
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
