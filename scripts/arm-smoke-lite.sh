#!/usr/bin/env bash
# ARM smoke of the lite build (docs/NOTES.md "The lite build"): builds the
# lite armv5 binary as `make dist` does, checks its size (scripts/sizes.sh),
# runs three of it under qemu-arm-static -cpu pxa255 (the papers' XScale:
# ARMv5TE, no VFP) as one cluster on loopback, toggles a device wired to a
# follower through the master, and checks that `ews config check` names a
# section the lite build cannot honour, and that the left-out features' code
# is not linked. Every wait is bounded.
#   scripts/arm-smoke-lite.sh [BINARY]
# BINARY: check that build instead (make dist's dist/ews-lite-linux-armv5).
set -euo pipefail
given=${1:+$(realpath "$1")}
cd "$(dirname "$0")/.."
bash scripts/deps.sh qemu-user-static:qemu-arm-static curl binutils:strings
out=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$out"
}
trap cleanup EXIT
bin=$out/ews-lite-linux-armv5
if [ -n "$given" ]; then
	cp "$given" "$bin"
else
	ldflags="-s -w -X github.com/ews-firmware/ews/internal/buildinfo.Version=smoke"
	read -ra gcflags <<<"$(bash scripts/gcflags.sh lite)" # make dist's (Makefile LITE)
	GOOS=linux GOARCH=arm GOARM=5 CGO_ENABLED=0 go build -trimpath -tags "nethttpomithttp2 lite" "${gcflags[@]}" -ldflags "$ldflags" -o "$bin" ./cmd/ews
fi
bash scripts/sizes.sh "$bin"
qemu=(qemu-arm-static -cpu pxa255)

# each left-out feature's code is gone from the binary, not only unreachable:
# a stub that keeps the feature's type (a nil *vip.Manager started as a
# component) would link it all again. Function names survive -s in pclntab.
strings "$bin" >"$out/names"
for f in 'github.com/eclipse/paho%2emqtt%2egolang.(*client).Connect' \
	'github.com/ews-firmware/ews/node/rules.(*Engine).Run' \
	'github.com/ews-firmware/ews/vip.(*Manager).Run' \
	'github.com/mdlayher/arp.(*Client)' \
	'github.com/ews-firmware/ews/node/mdns.(*Responder).Run' \
	'github.com/ews-firmware/ews/node/history.(*Store).' \
	'github.com/beevik/ntp.Query' \
	'go.etcd.io/bbolt.Open' \
	'github.com/ews-firmware/ews/internal/tool/bench.' \
	'github.com/ews-firmware/ews/internal/tool/demo.'; do
	if grep -F "$f" "$out/names" | grep -qv '\.init$'; then
		echo "arm-smoke-lite: the lite binary links $f (docs/NOTES.md \"The lite build\": replace the type at the seam)" >&2
		exit 1
	fi
done
echo "arm-smoke-lite: no MQTT, rules, VIP, NTP, mDNS, history, BoltDB, bench or demo code linked"

v=$("${qemu[@]}" "$bin" version)
case "$v" in
*"GOARM=5, lite build"*) echo "arm-smoke-lite: $v" ;;
*) echo "arm-smoke-lite: version says '$v', want GOARM=5 and the lite build" >&2; exit 1 ;;
esac

# its own example config passes; a section it leaves out is named (exit 1)
"${qemu[@]}" "$bin" config init >"$out/mqtt.toml"
"${qemu[@]}" "$bin" config check "$out/mqtt.toml" >/dev/null
printf '\n[mqtt]\nbroker = "tcp://127.0.0.1:1883"\n' >>"$out/mqtt.toml"
if "${qemu[@]}" "$bin" config check "$out/mqtt.toml" 2>"$out/check.err"; then
	echo "arm-smoke-lite: config check took [mqtt]" >&2
	exit 1
fi
grep -q 'mqtt: \[mqtt\] (the MQTT bridge) is not in the lite build' "$out/check.err" || {
	echo "arm-smoke-lite: config check did not name [mqtt]:" >&2
	cat "$out/check.err" >&2
	exit 1
}
echo "arm-smoke-lite: config check refuses [mqtt]: $(grep 'lite build' "$out/check.err")"

# a left-out command says so and exits 2
if "${qemu[@]}" "$bin" bench --url http://127.0.0.1:1 2>"$out/bench.err"; then
	echo "arm-smoke-lite: ews bench ran in the lite build" >&2
	exit 1
fi
grep -q 'not in the lite build' "$out/bench.err" || {
	echo "arm-smoke-lite: ews bench said: $(cat "$out/bench.err")" >&2
	exit 1
}

# three boards on loopback; relay1 is wired to ews2. Timings for emulated
# PXA255s beside make test's race tests on two cores (a load of 25-30 starves
# qemu for seconds: with tmax 2s the boards kept electing new masters)
base=$((20000 + RANDOM % 20000))
key=$(head -c32 /dev/urandom | base64)
peers="\"ews1=127.0.0.1:$((base + 100))\", \"ews2=127.0.0.1:$((base + 101))\", \"ews3=127.0.0.1:$((base + 102))\""
for i in 1 2 3; do
	cat >"$out/ews$i.toml" <<CFG
[node]
name = "ews$i"
http = "127.0.0.1:$((base + i - 1))"
gossip = "127.0.0.1:$((base + 99 + i))"
capacity = 2
[cluster]
peers = [$peers]
key = "$key"
tmax = "6s"
tthreshold = "3s"
heartbeat = "500ms"
[http]
auth = "token"
token = "t0k"
[sim]
device_latency = "5ms"
[[device]]
name = "relay1"
driver = "sim-switch"
node = "ews2"
max_age = "0s"
CFG
	"${qemu[@]}" "$bin" run --config "$out/ews$i.toml" 2>"$out/ews$i.log" &
	pids+=($!)
done
url=http://127.0.0.1:$base
start=$SECONDS
# waitfor SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s until it succeeds
waitfor() {
	local limit=$1 what=$2
	shift 2
	local deadline=$((SECONDS + limit))
	until "$@"; do
		if ((SECONDS >= deadline)); then
			echo "arm-smoke-lite: no $what within ${limit}s" >&2
			for i in 1 2 3; do echo "--- ews$i log (last lines):" >&2; tail -n 15 "$out/ews$i.log" >&2; done
			exit 1
		fi
		sleep 0.2
	done
}
# one master, three running boards, as ews1 sees the table
three_running() {
	curl -fsS -m 5 "$url/api/cluster" >"$out/cluster.json" 2>/dev/null || return 1
	[ "$(grep -o '"runstate":"running"' "$out/cluster.json" | wc -l)" -eq 3 ] && grep -q '"master":"ews[123]"' "$out/cluster.json"
}
waitfor 180 "cluster of three running boards with a master" three_running
echo "arm-smoke-lite: three lite boards running under qemu pxa255, $(grep -o '"master":"ews[123]"' "$out/cluster.json"), $((SECONDS - start)) s after start"
# keyed: a retry after a client timeout replays the answer instead of
# toggling back (an emulated PXA255 on a loaded host can take > 10 s)
toggle() {
	curl -fsS -m 30 -X POST -H 'Authorization: Bearer t0k' -H 'Idempotency-Key: arm-smoke-lite-1' \
		"$url/api/devices/relay1/toggle" >"$out/toggle.json" 2>/dev/null
}
waitfor 90 "device toggle through ews1" toggle
grep -q '"state":"on"' "$out/toggle.json" || {
	echo "arm-smoke-lite: toggle answered $(cat "$out/toggle.json"), want state on" >&2
	exit 1
}
echo "arm-smoke-lite: relay1 (on ews2) toggled through ews1: $(cat "$out/toggle.json")"
# a left-out feature's API answers 501 with its reason
code=$(curl -sS -m 10 -o "$out/hist.json" -w '%{http_code}' -H 'Authorization: Bearer t0k' "$url/api/devices/relay1/history")
if [ "$code" != 501 ] || ! grep -q 'not in the lite build' "$out/hist.json"; then
	echo "arm-smoke-lite: history answered $code $(cat "$out/hist.json"), want 501 naming the lite build" >&2
	exit 1
fi
echo "arm-smoke-lite: history answers 501: $(cat "$out/hist.json")"

# RAM (issue 49): what a 32-64 MB board has to give. Two figures per board:
# what the Go runtime holds from the OS (go_memstats_sys_bytes less the heap
# it released, from /metrics: the board's own figure) and the qemu process's
# resident set (VmRSS; VmHWM, its peak, after the load): an upper bound, as it
# includes the emulator and its translated code. Idle first, then after 10 s
# of 100 req/s through ews1 (ews bench of the host's build: Poisson arrivals,
# seed 1, 30 % relay1 reads on ews2, 70 % /api/cluster). Goals (lite): the
# runtime's figure idle <= 12 MiB, under load <= 20 MiB; printed, met or missed.
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
held() { # board index: bytes the Go runtime holds from the OS
	curl -fsS -m 20 -H 'Authorization: Bearer t0k' "http://127.0.0.1:$((base + $1 - 1))/metrics" 2>/dev/null |
		awk '$1 == "go_memstats_sys_bytes" { s = $2 } $1 == "go_memstats_heap_released_bytes" { r = $2 } END { if (s == "") exit 1; printf "%d", s - r }'
}
proc() { awk -v k="$2:" '$1 == k { print $2 * 1024 }' "/proc/$1/status"; }
ram() { # phase goal_mib
	local i sys rss worst=0
	for i in 1 2 3; do
		sys=$(held "$i") || { echo "arm-smoke-lite: ews$i's /metrics did not answer" >&2; exit 1; }
		rss=$(proc "${pids[$((i - 1))]}" "$([ "$1" = idle ] && echo VmRSS || echo VmHWM)")
		echo "arm-smoke-lite: RAM $1 ews$i: Go runtime holds $(mib "$sys") MiB; qemu process $([ "$1" = idle ] && echo resident || echo peak) $(mib "$rss") MiB"
		((sys > worst)) && worst=$sys
	done
	if ((worst <= $2 * 1048576)); then
		echo "arm-smoke-lite: RAM $1: goal <= $2 MiB met (largest $(mib "$worst") MiB)"
	else
		echo "arm-smoke-lite: RAM $1: goal <= $2 MiB missed (largest $(mib "$worst") MiB)"
	fi
}
ram idle 12
go build -o "$out/ews-host" ./cmd/ews
"$out/ews-host" bench --url "$url" --rate 100 --duration 10s --max 1000 --seed 1 --timeout 30s \
	--header 'Authorization: Bearer t0k' --mix 'control=0.3:POST /api/devices/relay1/read,browse=0.7:GET /api/cluster' >"$out/bench.txt" 2>&1 || {
	echo "arm-smoke-lite: ews bench failed:" >&2
	cat "$out/bench.txt" >&2
	exit 1
}
echo "arm-smoke-lite: load: $(grep -m1 -iE 'completed|requests' "$out/bench.txt")"
ram "under 100 req/s" 20
