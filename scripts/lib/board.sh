# Shared by flash.sh and deploy.sh: argument checks and the boot config.
# shellcheck shell=bash

ARCHES="armv5 armv6 armv7 arm64"

die() { # exit with a message: die CODE MESSAGE
	local code=$1
	shift
	echo "$PROG: $*" >&2
	exit "$code"
}

check_arch() {
	case " $ARCHES " in
	*" $1 "*) ;;
	*) die 2 "unknown --arch '$1': want one of $ARCHES (armv6 for Pi Zero/1 and Raspberry Pi OS armhf, armv5 for XScale/ARM9)" ;;
	esac
}

# check_peers PEERS NAME: every entry is name=host:port, NAME is one of them.
# Sets PEER_PORT to NAME's gossip port and PEER_TOML to the TOML array.
check_peers() {
	local peers=$1 name=$2 entry pname addr found=""
	[ -n "$peers" ] || die 2 "--peers is required: \"ews1=10.0.0.11:7946,ews2=10.0.0.12:7946,...\""
	PEER_TOML=""
	local IFS=,
	for entry in $peers; do
		pname=${entry%%=*}
		addr=${entry#*=}
		if [ "$pname" = "$entry" ] || [ -z "$pname" ] || ! [[ "$addr" =~ ^[^:]+:[0-9]+$ ]]; then
			die 2 "--peers: '$entry' is not name=host:port"
		fi
		[[ "$pname" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$ ]] || die 2 "--peers: '$pname' is not a board name"
		PEER_TOML="$PEER_TOML${PEER_TOML:+, }\"$entry\""
		if [ "$pname" = "$name" ]; then
			found=1
			# shellcheck disable=SC2034 # read by the caller
			PEER_PORT=${addr##*:}
		fi
	done
	[ -n "$found" ] || die 2 "--name '$name' is not in --peers ($peers)"
	PEER_TOML="[$PEER_TOML]"
}

# check_key KEY: base64 of 16, 24 or 32 bytes.
check_key() {
	local n
	n=$(printf '%s' "$1" | base64 -d 2>/dev/null | wc -c) || n=0
	case "$n" in
	16 | 24 | 32) ;;
	*) die 2 "the cluster key must be base64 of 16, 24 or 32 bytes (make one: head -c32 /dev/urandom | base64)" ;;
	esac
}

# read_bundle FILE: sets KEY and TOKEN from a cluster bundle (`ews cluster
# init`). Refuses what it does not understand, naming file and line: a
# field it would otherwise drop could be a secret the boards need.
read_bundle() {
	local file=$1 n=0 line name value version=""
	[ -r "$file" ] || die 1 "--bundle $file: cannot read it"
	KEY="" TOKEN=""
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		line=${line%$'\r'}
		[[ "$line" =~ ^[[:space:]]*(#.*)?$ ]] && continue
		if [[ "$line" =~ ^[[:space:]]*([a-z_]+)[[:space:]]*=[[:space:]]*(.*[^[:space:]])[[:space:]]*$ ]]; then
			name=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
		else
			die 1 "$file:$n: not a key = value line"
		fi
		if [[ "$value" =~ ^\'([A-Za-z0-9+/=_.~-]*)\'$ ]] || [[ "$value" =~ ^\"([A-Za-z0-9+/=_.~-]*)\"$ ]]; then
			value=${BASH_REMATCH[1]}
		elif [ "$name" != version ]; then
			die 1 "$file:$n: $name: want a quoted base64 or token string (use 'ews cluster join' for anything else)"
		fi
		case "$name" in
		version) version=$value ;;
		key) KEY=$value ;;
		token) TOKEN=$value ;;
		session_secret | ca_cert | ca_key) ;; # read by ews from the bundle copy itself (cluster.bundle_file)
		*) die 1 "$file:$n: unknown field '$name' (a newer bundle? use that version's flash.sh or 'ews cluster join')" ;;
		esac
	done <"$file"
	case "$version" in 1 | 2) ;; *) die 1 "$file: version '${version}': this flash.sh reads versions 1 and 2" ;; esac
	[ -n "$KEY" ] || die 1 "$file: no key"
	[ -n "$TOKEN" ] || die 1 "$file: no token"
}

new_key() { head -c 32 /dev/urandom | base64 | tr -d '\n'; }

# boot_config NAME PORT: the boot config for one board, on stdout. With a
# bundle (BUNDLE set), bundle_file points at its copy in /etc/ews: the
# session secret and the TLS CA (HTTPS on :8443, node.http redirects).
boot_config() {
	local bundle_line=""
	[ -z "${BUNDLE:-}" ] || bundle_line='bundle_file = "/etc/ews/cluster.bundle"  # session secret and TLS CA: HTTPS on :8443'
	cat <<TOML
# ews boot config for board $1, written by scripts/$PROG.
# The cluster key is in /etc/ews/cluster.key on the root partition, not
# here: this FAT partition is readable by every user of the board.

[node]
name   = "$1"
http   = ":${HTTP_PORT:-8080}"
gossip = ":$2"

[cluster]
peers    = $PEER_TOML
key_file = "/etc/ews/cluster.key"
$bundle_line

[http]
auth       = "token"
token_file = "/etc/ews/token"
TOML
}

# host_ews: an ews binary that runs here, for `ews config check`; empty if none.
host_ews() {
	if [ -n "${EWS_BIN:-}" ]; then
		echo "$EWS_BIN"
	elif [ "$(uname -m)" = x86_64 ] && [ -x "$DIST/ews-linux-amd64" ]; then
		echo "$DIST/ews-linux-amd64"
	elif command -v ews >/dev/null 2>&1; then
		command -v ews
	fi
}
