#!/usr/bin/env bash
# Deploys ews over ssh to running boards with a rolling restart: one board at
# a time gets the binary, the unit (and, with --peers, its boot config, the
# cluster key and API token, the same on every board), is restarted, and the
# next board waits until this one is back in the cluster table as running
# (GET http://HOST:PORT/api/cluster).
#
#   scripts/deploy.sh --boards "ews1=pi@10.0.0.11,ews2=pi@10.0.0.12,ews3=pi@10.0.0.13" --arch armv7 \
#       [--peers "ews1=10.0.0.11:7946,..." (--bundle FILE | (--key KEY | --key-file FILE) --token-file FILE) [--force]] \
#       [--http-port 8080] [--timeout 90] [--dist dist] [--ssh "ssh -o BatchMode=yes"] \
#       [--scp "scp -q -o BatchMode=yes"] [--ews PATH] [--lite] [--dry-run]   (--lite: the armv5 lite build)
#
# --bundle takes the admin bundle (ews cluster init): each board gets its
# own bundle minted from it (needs an ews for this machine: --ews,
# dist/ews-linux-amd64 or ews in PATH); the admin bundle stays here.
# The master is restarted last, so the cluster fails over once at most.
# Needs sudo without a password on the boards. --dry-run prints the commands.
# Exit codes: 0 ok, 1 a board failed or did not come back in time, 2 bad arguments.
set -euo pipefail
PROG=deploy.sh
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/board.sh
. "$HERE/lib/board.sh"

usage() { sed -n '2,20s/^# \{0,1\}//p' "$0"; }

BOARDS="" ARCH="" PEERS="" KEY="" KEYFILE="" BUNDLE="" TOKENFILE="" TOKEN="" FORCE="" DRY="" HTTP_PORT=8080 TIMEOUT=90 LITE=""
DIST="$HERE/../dist" SSH_CMD="ssh -o BatchMode=yes -o ConnectTimeout=10" SCP_CMD="scp -q -o BatchMode=yes -o ConnectTimeout=10"
while [ $# -gt 0 ]; do
	case "$1" in
	--boards) BOARDS=${2:?--boards needs a list}; shift 2 ;;
	--arch) ARCH=${2:?--arch needs a value}; shift 2 ;;
	--peers) PEERS=${2:?--peers needs a list}; shift 2 ;;
	--key) KEY=${2:?--key needs a value}; shift 2 ;;
	--key-file) KEYFILE=${2:?--key-file needs a file}; shift 2 ;;
	--bundle) BUNDLE=${2:?--bundle needs a file}; shift 2 ;;
	--token-file) TOKENFILE=${2:?--token-file needs a file}; shift 2 ;;
	--http-port) HTTP_PORT=${2:?--http-port needs a number}; shift 2 ;;
	--timeout) TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
	--dist) DIST=${2:?--dist needs a directory}; shift 2 ;;
	--ssh) SSH_CMD=${2:?--ssh needs a command}; shift 2 ;;
	--scp) SCP_CMD=${2:?--scp needs a command}; shift 2 ;;
	--ews) EWS_BIN=${2:?--ews needs a binary}; shift 2 ;;
	--force) FORCE=1; shift ;;
	--dry-run) DRY=1; shift ;;
	--lite) LITE=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die 2 "unknown argument '$1'" ;;
	esac
done
read -ra SSH <<<"$SSH_CMD"
read -ra SCP <<<"$SCP_CMD"

# --- check everything first ---
[ -n "$BOARDS" ] || die 2 "--boards is required: \"ews1=host1,ews2=user@host2,...\""
[ -n "$ARCH" ] || die 2 "--arch is required ($ARCHES)"
check_arch "$ARCH"
[[ "$HTTP_PORT" =~ ^[0-9]+$ ]] || die 2 "--http-port '$HTTP_PORT' is not a number"
[[ "$TIMEOUT" =~ ^[0-9]+$ ]] || die 2 "--timeout '$TIMEOUT' is not a number of seconds"
NAMES=() HOSTS=()
IFS=, read -ra entries <<<"$BOARDS"
for entry in "${entries[@]}"; do
	name=${entry%%=*} host=${entry#*=}
	if [ "$name" = "$entry" ] || [ -z "$name" ] || [ -z "$host" ]; then
		die 2 "--boards: '$entry' is not name=host"
	fi
	NAMES+=("$name")
	HOSTS+=("$host")
done
if [ -n "$PEERS" ]; then
	for name in "${NAMES[@]}"; do check_peers "$PEERS" "$name"; done
	[ -z "$KEY" ] || [ -z "$KEYFILE" ] || die 2 "give --key or --key-file, not both"
	HINT="make the cluster's secrets once with 'ews cluster init' and give --bundle FILE"
	if [ -n "$BUNDLE" ]; then
		[ -z "$KEY$KEYFILE$TOKENFILE" ] || die 2 "--bundle holds the key and token: no --key, --key-file or --token-file with it"
		read_bundle "$BUNDLE"
	else
		if [ -n "$KEYFILE" ]; then
			[ -r "$KEYFILE" ] || die 1 "--key-file $KEYFILE: cannot read it"
			KEY=$(tr -d ' \n\r' <"$KEYFILE")
		fi
		[ -n "$KEY" ] || die 2 "--peers writes boot configs: give the cluster key: $HINT (or --key/--key-file with --token-file)"
		[ -n "$TOKENFILE" ] || die 2 "--peers writes boot configs: every board needs the same API token: $HINT (or --token-file FILE)"
		[ -r "$TOKENFILE" ] || die 1 "--token-file $TOKENFILE: cannot read it"
		TOKEN=$(tr -d ' \n\r' <"$TOKENFILE")
		[ -n "$TOKEN" ] || die 2 "--token-file $TOKENFILE is empty"
	fi
	check_key "$KEY"
elif [ -n "$KEY$KEYFILE$BUNDLE$TOKENFILE$FORCE" ]; then
	die 2 "--bundle, --key, --key-file, --token-file and --force only go with --peers"
fi
dist_binary "$DIST" "$ARCH" "$LITE" # sets BIN
PKG="$HERE/../packaging"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

run() { # print a command, run it unless --dry-run
	echo "+ $*"
	[ -n "$DRY" ] || "$@"
}

# cluster_json HOST: the board's /api/cluster, or nothing.
# With --bundle the boards serve HTTPS (node.http redirects there): follow
# the redirect, trusting the cluster's CA only.
CURL_TLS=()
if [ -n "$BUNDLE" ] && [ -z "$DRY" ]; then
	EWS_HOST=$(host_ews)
	[ -n "$EWS_HOST" ] || die 1 "--bundle needs an ews for this machine (--ews PATH) to mint the boards' bundles"
	"$EWS_HOST" cluster ca "$BUNDLE" >"$TMP/ca.pem" || die 1 "cannot read the CA of $BUNDLE"
	CURL_TLS=(-L --proto-redir "=https" --cacert "$TMP/ca.pem")
fi
cluster_json() {
	curl -fsS --max-time 2 ${CURL_TLS[@]+"${CURL_TLS[@]}"} "http://${1#*@}:$HTTP_PORT/api/cluster" 2>/dev/null || true
}

# running_in JSON NAME: NAME is a node of the table with runstate running.
running_in() {
	printf '%s' "$1" | tr -d ' \n\t\r' | sed 's/"load":{[^}]*}//g' |
		grep -Eq "\{[^{}]*\"name\":\"$2\"[^{}]*\"runstate\":\"running\"|\{[^{}]*\"runstate\":\"running\"[^{}]*\"name\":\"$2\""
}

# wait_running NAME HOST: poll the board until it is back in the table.
wait_running() {
	local deadline=$((SECONDS + TIMEOUT))
	echo "+ wait until $1 is running in http://${2#*@}:$HTTP_PORT/api/cluster (up to ${TIMEOUT}s)"
	[ -z "$DRY" ] || return 0
	while ((SECONDS < deadline)); do
		if running_in "$(cluster_json "$2")" "$1"; then
			echo "$PROG: $1 is back in the table"
			return 0
		fi
		sleep 1
	done
	die 1 "$1 ($2) is not running in the cluster table after ${TIMEOUT}s; stopping the rollout here (check: ssh ${2} journalctl -u ews)"
}

# The master goes last: restarting it causes a takeover.
ORDER=()
master=""
if [ -z "$DRY" ]; then
	master=$(cluster_json "${HOSTS[0]}" | tr -d ' \n' | sed -n 's/.*"master":"\([^"]*\)".*/\1/p')
fi
for i in "${!NAMES[@]}"; do [ "${NAMES[i]}" = "$master" ] || ORDER+=("$i"); done
for i in "${!NAMES[@]}"; do [ "${NAMES[i]}" != "$master" ] || ORDER+=("$i"); done
[ -z "$master" ] || echo "$PROG: $master is the master; it goes last"

STAGE=/tmp/ews-deploy
for i in "${ORDER[@]}"; do
	name=${NAMES[i]} host=${HOSTS[i]}
	echo "$PROG: --- $name ($host)"
	files=("$BIN" "$PKG/ews.service" "$PKG/sysusers.conf" "$PKG/tmpfiles.conf")
	remote="set -e"
	if [ -n "$PEERS" ]; then # refuse before changing anything
		# shellcheck disable=SC2016 # expanded on the board
		remote="$remote"'
boot=/boot/ews.toml; [ -d /boot/firmware ] && boot=/boot/firmware/ews.toml
if [ -e "$boot" ] && [ -z "'"$FORCE"'" ]; then echo "$boot exists; not overwriting it without --force" >&2; exit 1; fi'
	fi
	remote="$remote
install -D -m 0755 $STAGE/$(basename "$BIN") /usr/bin/ews
install -D -m 0644 $STAGE/ews.service /etc/systemd/system/ews.service
install -D -m 0644 $STAGE/sysusers.conf /etc/sysusers.d/ews.conf
install -D -m 0644 $STAGE/tmpfiles.conf /etc/tmpfiles.d/ews.conf
systemd-sysusers /etc/sysusers.d/ews.conf
systemd-tmpfiles --create /etc/tmpfiles.d/ews.conf"
	if [ -n "$PEERS" ]; then
		check_peers "$PEERS" "$name"
		boot_config "$name" "$PEER_PORT" >"$TMP/ews.toml"
		files+=("$TMP/ews.toml")
		if [ -n "$BUNDLE" ]; then # this board's own bundle: no CA key, no signing key
			board_bundle "$name" "$(peer_host "$PEERS" "$name")" "$TMP/cluster.bundle"
			files+=("$TMP/cluster.bundle")
			remote="$remote
install -D -m 0600 -o ews -g ews $STAGE/cluster.bundle /etc/ews/cluster.bundle"
		else
			(umask 077 && printf '%s\n' "$KEY" >"$TMP/cluster.key" && printf '%s\n' "$TOKEN" >"$TMP/token")
			files+=("$TMP/cluster.key" "$TMP/token")
			# shellcheck disable=SC2016 # expanded on the board
			remote="$remote"'
install -D -m 0600 -o ews -g ews '"$STAGE"'/cluster.key /etc/ews/cluster.key
install -D -m 0600 -o ews -g ews '"$STAGE"'/token /etc/ews/token'
		fi
		# shellcheck disable=SC2016 # expanded on the board
		remote="$remote"'
install -m 0644 '"$STAGE"'/ews.toml "$boot"'
	fi
	remote="$remote
rm -rf $STAGE
systemctl daemon-reload
systemctl enable ews.service
systemctl restart ews.service"
	run "${SSH[@]}" "$host" "rm -rf $STAGE && mkdir -m 0700 $STAGE"
	run "${SCP[@]}" "${files[@]}" "$host:$STAGE/"
	run "${SSH[@]}" "$host" "sudo sh -c '$remote'"
	wait_running "$name" "$host"
done
echo "$PROG: ${#NAMES[@]} boards deployed${DRY:+ (dry run: nothing was changed)}"
