# Shared by the bench scripts (bench-device, bench-floor, bench-fastentry,
# idle-cpu): three boards on loopback, configured by the caller.
# shellcheck shell=bash

# loopback_init DIR HTTP GOSSIP: boards ews1..3 answer HTTP on ports
# HTTP..HTTP+2 and gossip on GOSSIP..GOSSIP+2, keep their state and logs in
# DIR; sets key (a fresh cluster key), peers and pids, and the trap that
# stops every board started, and removes DIR when LOOPBACK_RM is set.
loopback_init() {
	lb_dir=$1 lb_http=$2 lb_gossip=$3
	# key and peers: read by the caller's board_toml
	# shellcheck disable=SC2034
	key=$(head -c 32 /dev/urandom | base64)
	# shellcheck disable=SC2034
	peers="\"ews1=127.0.0.1:$3\", \"ews2=127.0.0.1:$(($3 + 1))\", \"ews3=127.0.0.1:$(($3 + 2))\""
	pids=()
	trap loopback_cleanup EXIT
}

# loopback_here OUT: loopback_init in OUT (made if missing) on random ports,
# HTTP from base (set: LOOPBACK_BASE, else 20000..39999) and gossip from
# base+10 (a session beside that owns a range gives its own); bin, when the
# caller left it empty, is OUT/ews built from ./cmd/ews (run from the tree).
loopback_here() {
	mkdir -p "$1"
	if [[ -z ${bin:-} ]]; then
		bin=$1/ews
		go build -o "$bin" ./cmd/ews
	fi
	base=${LOOPBACK_BASE:-$((20000 + RANDOM % 20000))}
	loopback_init "$1" "$base" $((base + 10))
}

loopback_cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ -n ${LOOPBACK_RM:-} ]]; then rm -rf "$lb_dir"; fi
}

# loopback_start BIN: writes DIR/ewsI.toml from the caller's board_toml I
# (its whole config on stdout) and starts each board as `BIN run`, its log
# in DIR/ewsI.log; PPROF_BASE set gives board I pprof on PPROF_BASE+I.
loopback_start() {
	local i
	for i in 1 2 3; do
		board_toml "$i" >"$lb_dir/ews$i.toml"
		EWS_PPROF=${PPROF_BASE:+127.0.0.1:$((PPROF_BASE + i))} "$1" run --config "$lb_dir/ews$i.toml" >"$lb_dir/ews$i.log" 2>&1 &
		pids+=($!)
	done
}

# loopback_toml I [NODE_LINES]: the start of board ewsI's config: its
# [node] (NODE_LINES added) and its [cluster] (timers of 1 s and 100 ms),
# left open for more cluster lines.
loopback_toml() {
	cat <<TOML
[node]
name = "ews$1"
http = "127.0.0.1:$((lb_http + $1 - 1))"
gossip = "127.0.0.1:$((lb_gossip + $1 - 1))"
${2:-}
state_dir = "$lb_dir/state$1"
mdns = false
[cluster]
peers = [$peers]
key = "$key"
tmax = "1s"
heartbeat = "100ms"
TOML
}

# loopback_running: waits (20 s at most) until ews1 is master and all three
# boards run, as ews1 sees them, else exits 1; sets url (ews1's) and entry, where the
# requests go: ews2's with ENTRY=follower, else url.
loopback_running() {
	url=http://127.0.0.1:$lb_http
	# entry: read by the caller
	# shellcheck disable=SC2034
	entry=$url
	# shellcheck disable=SC2034
	if [[ ${ENTRY:-master} == follower ]]; then entry=http://127.0.0.1:$((lb_http + 1)); fi
	for _ in $(seq 100); do
		if curl -fs "$url/api/cluster" | grep -q '"master":"ews1"' && [[ $(curl -fs "$url/api/cluster" | grep -o '"runstate":"running"' | wc -l) -eq 3 ]]; then break; fi
		sleep 0.2
	done
	if ! curl -fs "$url/api/cluster" | grep -q '"master":"ews1"' || [[ $(curl -fs "$url/api/cluster" | grep -o '"runstate":"running"' | wc -l) -ne 3 ]]; then
		# a board that did not start (its port taken by another process)
		# would turn its pinned devices' requests into sheds: no figure
		# from that
		echo "$0: the three boards are not all running; logs in $lb_dir" >&2
		exit 1
	fi
}
