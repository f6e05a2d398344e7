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

# dist_binary DIST ARCH [LITE]: the make dist binary for ARCH, the lite
# build's (armv5 only) when LITE is not empty. Sets BIN; dies when missing.
dist_binary() {
	local dir=$1 arch=$2 lite=${3:-}
	if [ -n "$lite" ]; then
		[ "$arch" = armv5 ] || die 2 "--lite: the lite build is armv5 only (make dist builds ews-lite-linux-armv5)"
		BIN="$dir/ews-lite-linux-$arch"
	else
		BIN="$dir/ews-linux-$arch"
	fi
	[ -f "$BIN" ] || die 1 "no binary $BIN: run 'make dist' first"
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

# read_bundle FILE: sets KEY, TOKEN, BUNDLE_VERSION, BUNDLE_KIND and
# BUNDLE_NAME from a cluster bundle (`ews cluster init`, or a board's from
# `ews cluster board`). Refuses what it does not understand, naming file
# and line: a field it would otherwise drop could be a secret the boards
# need.
read_bundle() {
	local file=$1 n=0 line name value
	[ -r "$file" ] || die 1 "--bundle $file: cannot read it"
	KEY="" TOKEN="" BUNDLE_VERSION="" BUNDLE_KIND="" BUNDLE_NAME=""
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
		elif [ "$name" != version ] && [ "$name" != generation ]; then
			die 1 "$file:$n: $name: want a quoted base64 or token string (use 'ews cluster join' for anything else)"
		fi
		case "$name" in
		version) BUNDLE_VERSION=$value ;;
		kind) BUNDLE_KIND=$value ;;
		name) BUNDLE_NAME=$value ;;
		key) KEY=$value ;;
		token) TOKEN=$value ;;
		session_secret | ca_cert | ca_key | cert | cert_key | sign_key | verify_key | admin_token_hash | admin_token_key | store_key | generation) ;; # read by ews itself
		*) die 1 "$file:$n: unknown field '$name' (a newer bundle? use that version's $PROG or 'ews cluster join')" ;;
		esac
	done <"$file"
	case "$BUNDLE_VERSION" in
	1 | 2) die 1 "$file: a version $BUNDLE_VERSION bundle holds the cluster's CA key, which no longer goes on a board: make the admin bundle with 'ews cluster migrate $file --peers LIST --out ADMIN' (it keeps the key and token) and give --bundle ADMIN" ;;
	3) ;;
	*) die 1 "$file: version '${BUNDLE_VERSION}': this $PROG reads version 3" ;;
	esac
	case "$BUNDLE_KIND" in admin | board) ;; *) die 1 "$file: kind '$BUNDLE_KIND': want admin or board" ;; esac
	[ -n "$KEY" ] || die 1 "$file: no key"
	# a board bundle of this build carries no token (a card is no admin)
	[ -n "$TOKEN" ] || [ "$BUNDLE_KIND" = board ] || die 1 "$file: no token"
}

# board_bundle NAME HOST OUT: writes board NAME's bundle to OUT: minted
# from the admin bundle BUNDLE with the host ews (its certificate names
# NAME, NAME.local and HOST), or BUNDLE itself when it is NAME's board
# bundle. The admin bundle (CA key, signing key) never goes to OUT.
board_bundle() {
	local name=$1 host=$2 out=$3 ews
	if [ "$BUNDLE_KIND" = board ]; then
		[ "$BUNDLE_NAME" = "$name" ] || die 1 "$BUNDLE is board $BUNDLE_NAME's bundle, not $name's: give the admin bundle (it mints each board's)"
		(umask 077 && cp "$BUNDLE" "$out")
		return
	fi
	ews=$(host_ews)
	[ -n "$ews" ] || die 1 "--bundle $BUNDLE is the admin bundle: minting $name's bundle from it needs an ews for this machine (--ews PATH), or mint it yourself with 'ews cluster board $name --addr $host --bundle $BUNDLE --out $name.bundle' and give --bundle $name.bundle"
	rm -f "$out"
	"$ews" cluster board "$name" --addr "$host" --bundle "$BUNDLE" --out "$out" >/dev/null ||
		die 1 "could not mint board $name's bundle from $BUNDLE (above)"
}

# peer_host PEERS NAME: the host of NAME in PEERS (name=host:port,...).
peer_host() {
	local entry IFS=,
	for entry in $1; do
		if [ "${entry%%=*}" = "$2" ]; then
			entry=${entry#*=}
			echo "${entry%:*}"
			return
		fi
	done
}

new_key() { head -c 32 /dev/urandom | base64 | tr -d '\n'; }

# boot_config NAME PORT: the boot config for one board, on stdout. With a
# bundle (BUNDLE set), bundle_file points at the board's bundle in
# /etc/ews, and it alone gives the gossip key, the token, the session
# secret and TLS (HTTPS on :8443, node.http redirects).
boot_config() {
	if [ -n "${BUNDLE:-}" ]; then
		cat <<TOML
# ews boot config for board $1, written by scripts/$PROG.
# The cluster's secrets are in /etc/ews/cluster.bundle on the root
# partition, not here: this FAT partition is readable by every user.

[node]
name   = "$1"
http   = ":${HTTP_PORT:-8080}"
gossip = ":$2"

[cluster]
peers       = $PEER_TOML
bundle_file = "/etc/ews/cluster.bundle"  # gossip key, this board's TLS certificate (no admin token)

[http]
auth = "token"
TOML
		return
	fi
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
