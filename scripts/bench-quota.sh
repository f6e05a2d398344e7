#!/usr/bin/env bash
# The master against HAProxy alone at an equal CPU quota, with wrk -t2 -c32
# (docs/BENCHMARKS.md "the master vs HAProxy alone"): 3 clustered boards
# (capacity 8, page_latency 0, auth none) with the master ews1 held to CORES
# of one core by a cgroup, and HAProxy (nbthread 1, leastconn, maxconn 8 per
# server) held to the same quota in front of 3 boards started alone. Each
# round runs wrk against both, alternately, on the same page; the boards
# behind HAProxy are not in its cgroup (HAProxy alone), the master serves
# its share of pages inside its own (it is a board).
# Usage: scripts/bench-quota.sh [EWS_BINARY] [ROUNDS] [PAGE]   (root: cgroups)
# CORES (default 0.15), DURATION (default 5s), BASE_PORT (default 45000).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-./ews}
rounds=${2:-3}
page=${3:-/}
cores=${CORES:-0.15}
dur=${DURATION:-5s}
base=${BASE_PORT:-45000}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
command -v haproxy >/dev/null || { apt-get update -qq && apt-get install -y -qq haproxy >/dev/null; }
dir=$(mktemp -d)
pids=()
cg=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for c in "${cg[@]}"; do rmdir "$c" 2>/dev/null || true; done
	rm -rf "$dir"
}
trap cleanup EXIT
# capgroup NAME: a cgroup holding its processes to $cores of one core (v2 cpu.max, else v1)
capgroup() {
	local quota
	quota=$(awk -v c="$cores" 'BEGIN {printf "%d", c * 100000}')
	if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
		echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
		mkdir -p "/sys/fs/cgroup/$1"
		echo "$quota 100000" >"/sys/fs/cgroup/$1/cpu.max"
		cg+=("/sys/fs/cgroup/$1")
		echo "/sys/fs/cgroup/$1"
	else
		mkdir -p "/sys/fs/cgroup/cpu/$1"
		echo 100000 >"/sys/fs/cgroup/cpu/$1/cpu.cfs_period_us"
		echo "$quota" >"/sys/fs/cgroup/cpu/$1/cpu.cfs_quota_us"
		cg+=("/sys/fs/cgroup/cpu/$1")
		echo "/sys/fs/cgroup/cpu/$1"
	fi
}
# board NAME HTTP_PORT GOSSIP_PORT PEERS: writes its config (PEERS "" = alone)
board() {
	local cluster=""
	if [[ -n $4 ]]; then
		cluster=$(printf '[cluster]\npeers = [%s]\nkey = "%s"\ntmax = "1s"\nheartbeat = "100ms"\n' "$4" "$key")
	fi
	cat >"$dir/$1.toml" <<TOML
[node]
name = "$1"
http = "127.0.0.1:$2"
gossip = "127.0.0.1:$3"
capacity = 8
state_dir = "$dir/state-$1"
mdns = false
$cluster
[http]
auth = "none"
max_conns_per_client = 16384
[sim]
page_latency = "0s"
TOML
	"$bin" run --config "$dir/$1.toml" >"$dir/$1.log" 2>&1 &
	pids+=($!)
}
key=$(head -c 32 /dev/urandom | base64)
peers="\"ews1=127.0.0.1:$((base + 100))\", \"ews2=127.0.0.1:$((base + 101))\", \"ews3=127.0.0.1:$((base + 102))\""
for i in 1 2 3; do board "ews$i" $((base + i - 1)) $((base + 99 + i)) "$peers"; done
master_pid=${pids[0]}
for i in 1 2 3; do board "alone$i" $((base + 10 + i)) $((base + 110 + i)) ""; done
cat >"$dir/haproxy.cfg" <<CFG
global
  maxconn 5000
  nbthread 1
defaults
  mode http
  option http-keep-alive
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  timeout queue 2s
frontend fe
  bind 127.0.0.1:$((base + 20))
  default_backend boards
backend boards
  balance leastconn
  server alone1 127.0.0.1:$((base + 11)) maxconn 8
  server alone2 127.0.0.1:$((base + 12)) maxconn 8
  server alone3 127.0.0.1:$((base + 13)) maxconn 8
CFG
haproxy -f "$dir/haproxy.cfg" -db >"$dir/haproxy.log" 2>&1 &
pids+=($!)
haproxy_pid=$!
formed=""
for _ in $(seq 150); do
	if curl -fs "http://127.0.0.1:$((base + 1))/api/cluster" 2>/dev/null | grep -q '"master":"ews1"' &&
		curl -fs -o /dev/null "http://127.0.0.1:$((base + 20))$page" 2>/dev/null; then
		formed=1
		break
	fi
	sleep 0.2
done
[[ -n $formed ]] || { echo "bench-quota: the cluster or HAProxy did not come up (logs: $dir)" >&2; exit 1; }
g1=$(capgroup ews-bench-quota-master)
g2=$(capgroup ews-bench-quota-haproxy)
echo "$master_pid" >"$g1/cgroup.procs"
echo "$haproxy_pid" >"$g2/cgroup.procs"
echo "cores per front: $cores; wrk -t2 -c32 -d$dur on $page; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	for side in haproxy master; do
		port=$base
		[[ $side == haproxy ]] && port=$((base + 20))
		out=$(wrk -t2 -c32 -d"$dur" --latency "http://127.0.0.1:$port$page")
		rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
		p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
		p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
		non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
		echo "round $r $side: ${rps} req/s p50 ${p50} p99 ${p99} non-2xx ${non2xx:-0}"
	done
done
