#!/usr/bin/env bash
# Measured control latency beside the floor (issue 27): starts 3 simulated
# boards on loopback (capacity 2, 20 ms per device operation and per page:
# 300 req/s), sends each mix at 0.5x, 1x and 2x for DURATION (default 3s)
# with `ews bench`, then prints cmd/benchfloor's table for every run.
# Usage: scripts/bench-floor.sh [EWS_BINARY] [OUT_DIR]
# LOADS (default "0.5 1 2") are the multiples of 300 req/s sent; MIXES
# (default "paper hot") the mixes; ENTRY=follower sends every request to
# the follower ews2 instead of the master ews1 (the fast entry); HEADROOM
# (default off) sets [sched] headroom (slots kept for control); BARE=1 first
# times a bare net/http server and ews's control request alone (scripts/bare).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
out=${2:-$(mktemp -d)}
dur=${DURATION:-3s}
# shellcheck source=scripts/lib/loopback.sh
. scripts/lib/loopback.sh
loopback_here "$out"
board_toml() { # the config of board ews$1
	loopback_toml "$1" "capacity = 2"
	cat <<TOML
[sched]
headroom = "${HEADROOM:-off}"
[http]
auth = "none"
[sim]
device_latency = "20ms"
page_latency = "20ms"
[[device]]
name = "s1"
driver = "sim-sensor"
node = "any"
[[device]]
name = "temp1"
driver = "sim-sensor"
node = "ews2"
[[device]]
name = "led1"
driver = "sim-pwm"
node = "ews3"
TOML
}
loopback_start "$bin"
loopback_running
if [[ -n ${BARE:-} ]]; then
	# what the testbed adds with nothing of ews in it: a bare net/http server
	# answering at once and after a device's 20 ms, then ews's control request
	# through the entry, each timed alone (300 sequential requests, 20 ms apart)
	go build -o "$out/bare" ./scripts/bare
	"$out/bare" --serve "127.0.0.1:$((base + 20))" --sleep 20ms &
	pids+=($!)
	for _ in $(seq 50); do curl -fs "http://127.0.0.1:$((base + 20))/" >/dev/null && break; sleep 0.1; done
	echo "testbed, bare net/http, GET / : $("$out/bare" --url "http://127.0.0.1:$((base + 20))/")"
	echo "testbed, bare net/http, 20 ms : $("$out/bare" --url "http://127.0.0.1:$((base + 20))/sleep")"
	echo "ews control alone via $entry  : $("$out/bare" --method POST --url "$entry/api/devices/s1/read")"
fi
declare -A mixes=(
	[paper]="control=0.25:POST /api/devices/s1/read,browse=0.75:GET /"
	[hot]="read=0.3:POST /api/devices/temp1/read,act=0.05:POST /api/devices/led1/toggle,browse=0.65:GET /"
)
reports=()
for name in ${MIXES:-paper hot}; do
	for x in ${LOADS:-0.5 1 2}; do
		rate=$(awk "BEGIN{print 300*$x}")
		"$bin" bench --url "$entry" --rate "$rate" --duration "$dur" --seed 7 --mix "${mixes[$name]}" --json "$out/$name-${x}x.json" >/dev/null
		reports+=("$out/$name-${x}x.json")
	done
done
${BENCHFLOOR:-go run ./cmd/benchfloor} --device-latency 20ms --page-latency 20ms --max-age 5ms "${reports[@]}"
echo "reports and logs in $out"
