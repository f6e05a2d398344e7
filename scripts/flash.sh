#!/usr/bin/env bash
# Installs ews onto an SD card: the binary for the board's arch, the systemd
# unit (enabled), the ews user/dirs (systemd-sysusers/tmpfiles at first boot),
# the board's own bundle (--bundle: gossip key and its certificate, minted
# from the admin bundle; no admin token) or the cluster key and API token
# on the root partition, and a boot config with this board's name and the
# peer list on the boot partition.
#
#   scripts/flash.sh --boot /media/me/bootfs --root /media/me/rootfs \
#       --arch armv6 --name ews2 --peers "ews1=10.0.0.11:7946,ews2=10.0.0.12:7946" \
#       (--bundle FILE | (--key KEY | --key-file FILE) --token-file FILE) \
#       [--http-port 8080] [--dist dist] [--lite] [--force] [--dry-run]   (--lite: the armv5 lite build)
#   scripts/flash.sh --image raspios.img ...   (attaches it with losetup, mounts partitions 1 and 2)
#   scripts/flash.sh ... --name ews2 --from-backup cluster.tar.gz   (a replacement board: its boot
#       config and outputs from `ews cluster backup`; --peers not needed; a card that has a config
#       keeps it, with a warning when it differs; a backup of another cluster is refused)
#
# Make the cluster's admin bundle once (ews cluster init --peers ...) and
# flash every board with --bundle ADMIN: flash.sh mints this board's own
# bundle from it (with an ews for this machine: --ews, dist/ews-linux-amd64
# or ews in PATH) and puts only that on the card: no CA key, no firmware
# signing key. A board's bundle (ews cluster board) is taken as it is.
# No secret is printed.
# An existing boot config is never overwritten without --force.
# Exit codes: 0 ok, 1 cannot do it (missing partition, existing config), 2 bad arguments.
set -euo pipefail
PROG=flash.sh
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/board.sh
. "$HERE/lib/board.sh"

usage() { sed -n '2,20s/^# \{0,1\}//p' "$0"; }

BOOT="" ROOT="" ARCH="" NAME="" PEERS="" KEY="" KEYFILE="" IMAGE="" BUNDLE="" TOKENFILE="" TOKEN=""
DIST="$HERE/../dist" FORCE="" DRY="" HTTP_PORT=8080 BACKUP="" LITE=""
while [ $# -gt 0 ]; do
	case "$1" in
	--boot) BOOT=${2:?--boot needs a directory}; shift 2 ;;
	--root) ROOT=${2:?--root needs a directory}; shift 2 ;;
	--arch) ARCH=${2:?--arch needs a value}; shift 2 ;;
	--name) NAME=${2:?--name needs a value}; shift 2 ;;
	--peers) PEERS=${2:?--peers needs a value}; shift 2 ;;
	--key) KEY=${2:?--key needs a value}; shift 2 ;;
	--key-file) KEYFILE=${2:?--key-file needs a file}; shift 2 ;;
	--bundle) BUNDLE=${2:?--bundle needs a file}; shift 2 ;;
	--token-file) TOKENFILE=${2:?--token-file needs a file}; shift 2 ;;
	--image) IMAGE=${2:?--image needs a file}; shift 2 ;;
	--from-backup) BACKUP=${2:?--from-backup needs a file}; shift 2 ;;
	--dist) DIST=${2:?--dist needs a directory}; shift 2 ;;
	--http-port) HTTP_PORT=${2:?--http-port needs a number}; shift 2 ;;
	--ews) EWS_BIN=${2:?--ews needs a binary}; shift 2 ;;
	--force) FORCE=1; shift ;;
	--dry-run) DRY=1; shift ;;
	--lite) LITE=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die 2 "unknown argument '$1'" ;;
	esac
done

# --- check everything before touching anything ---
[ -n "$ARCH" ] || die 2 "--arch is required ($ARCHES)"
check_arch "$ARCH"
[ -n "$NAME" ] || die 2 "--name is required"
if [ -n "$BACKUP" ]; then
	[ -z "$PEERS" ] || die 2 "--from-backup brings the peers: no --peers with it"
	[ -r "$BACKUP" ] || die 1 "--from-backup $BACKUP: cannot read it"
else
	check_peers "$PEERS" "$NAME"
fi
[[ "$HTTP_PORT" =~ ^[0-9]+$ ]] || die 2 "--http-port '$HTTP_PORT' is not a number"
[ -z "$KEY" ] || [ -z "$KEYFILE" ] || die 2 "give --key or --key-file, not both"
HINT="make the cluster's secrets once with 'ews cluster init' and flash every board with --bundle FILE"
if [ -n "$BUNDLE" ]; then
	[ -z "$KEY$KEYFILE$TOKENFILE" ] || die 2 "--bundle holds the key and token: no --key, --key-file or --token-file with it"
	read_bundle "$BUNDLE"
else
	[ -n "$KEY$KEYFILE" ] || die 2 "no cluster key: $HINT (or give --key-file and --token-file)"
	[ -n "$TOKENFILE" ] || die 2 "no API token: every board needs the same one; $HINT (or give --token-file FILE)"
	if [ -n "$KEYFILE" ]; then
		[ -r "$KEYFILE" ] || die 1 "--key-file $KEYFILE: cannot read it"
		KEY=$(tr -d ' \n\r' <"$KEYFILE")
	fi
	[ -r "$TOKENFILE" ] || die 1 "--token-file $TOKENFILE: cannot read it"
	TOKEN=$(tr -d ' \n\r' <"$TOKENFILE")
	[ -n "$TOKEN" ] || die 2 "--token-file $TOKENFILE is empty"
fi
check_key "$KEY"
dist_binary "$DIST" "$ARCH" "$LITE" # sets BIN

CLEANUP=()
cleanup() {
	local i
	for ((i = ${#CLEANUP[@]} - 1; i >= 0; i--)); do eval "${CLEANUP[i]}" || true; done
}
trap cleanup EXIT

if [ -n "$IMAGE" ]; then
	[ -z "$BOOT$ROOT" ] || die 2 "give --image or --boot/--root, not both"
	[ -f "$IMAGE" ] || die 1 "--image $IMAGE: no such file"
	if [ -n "$DRY" ]; then
		echo "+ losetup --find --show --partscan $IMAGE; mount p1 (boot) and p2 (root) under a temp dir"
		BOOT=/mnt/ews-image/boot ROOT=/mnt/ews-image/root
	else
		[ "$(id -u)" -eq 0 ] || die 1 "--image needs root (losetup, mount)"
		LOOP=$(losetup --find --show --partscan "$IMAGE" 2>&1) ||
			die 1 "--image is unsupported here: losetup failed ($LOOP); mount the image's partitions yourself and use --boot/--root"
		CLEANUP+=("losetup -d '$LOOP'")
		MNT=$(mktemp -d)
		CLEANUP+=("rmdir '$MNT/boot' '$MNT/root' '$MNT'")
		mkdir -p "$MNT/boot" "$MNT/root"
		mount "${LOOP}p1" "$MNT/boot" || die 1 "--image: cannot mount ${LOOP}p1 (boot)"
		CLEANUP+=("umount '$MNT/boot'")
		mount "${LOOP}p2" "$MNT/root" || die 1 "--image: cannot mount ${LOOP}p2 (root)"
		CLEANUP+=("umount '$MNT/root'")
		BOOT=$MNT/boot ROOT=$MNT/root
	fi
else
	[ -n "$BOOT" ] || die 2 "--boot is required (the mounted boot partition), or --image"
	[ -n "$ROOT" ] || die 2 "--root is required (the mounted root partition), or --image"
	[ -d "$BOOT" ] || die 1 "boot partition $BOOT: not a directory (is the SD card mounted?)"
	[ -d "$ROOT" ] || die 1 "root partition $ROOT: not a directory (is the SD card mounted?)"
	[ -d "$ROOT/etc" ] || die 1 "root partition $ROOT has no etc/: is it really the root partition?"
fi

CONF="$BOOT/ews.toml"
KEEP_CONF="" # --from-backup onto a card that has a config: the card's is kept
if [ -e "$CONF" ] && [ -z "$FORCE" ]; then
	[ -n "$BACKUP" ] || die 1 "$CONF exists; not overwriting it without --force"
	KEEP_CONF=1
fi
if [ -z "$BUNDLE" ] && [ -s "$ROOT/etc/ews/token" ] && [ "$(tr -d ' \n\r' <"$ROOT/etc/ews/token")" != "$TOKEN" ] && [ -z "$FORCE" ]; then
	die 1 "$ROOT/etc/ews/token holds a different token; not replacing it without --force (boards with different tokens refuse each other's requests)"
fi

# The config is checked before it is written.
TMP=$(mktemp -d)
CLEANUP+=("rm -rf '$TMP'")
EWS=$(host_ews)
if [ -n "$BACKUP" ]; then
	# the backup's config and outputs for this board, into $TMP/card (a copy
	# of the card's own config there first, so a card of another cluster is
	# refused before anything is written)
	[ -n "$EWS" ] || die 1 "--from-backup needs an ews binary for this machine (--ews PATH)"
	# The cluster's stores go to $TMP/root (the root side's state_dir),
	# copied onto the card in the write phase below, so --dry-run writes
	# nothing; flash.sh mints the board's bundle itself, never from the backup.
	mkdir "$TMP/card" "$TMP/root"
	[ -z "$KEEP_CONF" ] || cp "$CONF" "$TMP/card/ews.toml"
	"$EWS" cluster restore --from "$BACKUP" --board "$NAME" --out "$TMP/card" --root "$TMP/root" >/dev/null 2>"$TMP/restore.err" || {
		sed "s#$TMP/card#$BOOT#g" "$TMP/restore.err" >&2
		die 1 "cannot restore board $NAME from $BACKUP"
	}
	sed "s#$TMP/card#$BOOT#g; s#$TMP/root#$ROOT#g" "$TMP/restore.err" >&2
	rm -rf "$TMP/root/etc" # a --secrets backup's bundle: this card gets the one minted here
	cp "$TMP/card/ews.toml" "$TMP/ews.toml"
else
	boot_config "$NAME" "$PEER_PORT" >"$TMP/ews.toml"
fi
if [ -n "$BUNDLE" ]; then
	SELF=$PEERS
	if [ -n "$BACKUP" ]; then
		# no --peers with a backup: the restored config's own entry
		# ("NAME=host:port") names the address its certificate must carry
		SELF=$(grep -o -m 1 "\"$NAME=[^\"]*\"" "$TMP/ews.toml" | tr -d '"' || true)
	fi
	board_bundle "$NAME" "$(peer_host "$SELF" "$NAME")" "$TMP/cluster.bundle"
	sed -i "s|\"/etc/ews/cluster.bundle\"|\"$TMP/cluster.bundle\"|" "$TMP/ews.toml" # checked against the real bundle
fi
if [ -n "$EWS" ]; then
	"$EWS" config check "$TMP/ews.toml" >/dev/null 2>"$TMP/check.err" || {
		cat "$TMP/check.err" >&2
		die 1 "the boot config does not validate (ews config check)"
	}
	echo "$PROG: boot config validated with $EWS"
else
	echo "$PROG: no ews binary for this machine: boot config not validated (use --ews PATH)" >&2
fi
(umask 077 && printf '%s\n' "$TOKEN" >"$TMP/token")
[ -z "$BUNDLE" ] || sed -i "s|\"$TMP/cluster.bundle\"|\"/etc/ews/cluster.bundle\"|" "$TMP/ews.toml"

# --- do it (or, with --dry-run, say it) ---
run() { # print a step, run it unless --dry-run
	echo "+ $*"
	[ -n "$DRY" ] || "$@"
}
put() { # put MODE SRC DEST [secret]: install a file; never prints a secret
	echo "+ install -m $1 $2 $3${4:+ (secret)}"
	[ -n "$DRY" ] || install -D -m "$1" "$2" "$3"
}

PKG="$HERE/../packaging"
(umask 077 && printf '%s\n' "$KEY" >"$TMP/cluster.key")
put 0755 "$BIN" "$ROOT/usr/bin/ews"
put 0644 "$PKG/ews.service" "$ROOT/etc/systemd/system/ews.service"
run mkdir -p "$ROOT/etc/systemd/system/multi-user.target.wants"
run ln -sfn /etc/systemd/system/ews.service "$ROOT/etc/systemd/system/multi-user.target.wants/ews.service"
put 0644 "$PKG/sysusers.conf" "$ROOT/etc/sysusers.d/ews.conf"
put 0644 "$PKG/tmpfiles.conf" "$ROOT/etc/tmpfiles.d/ews.conf"
run mkdir -p "$ROOT/var/lib/ews/cgi-bin" # tmpfiles.d sets owners and modes at boot
run install -d -m 0700 "$ROOT/etc/ews"
if [ -n "$BUNDLE" ]; then
	put 0600 "$TMP/cluster.bundle" "$ROOT/etc/ews/cluster.bundle" secret
else
	put 0600 "$TMP/cluster.key" "$ROOT/etc/ews/cluster.key" secret
	put 0600 "$TMP/token" "$ROOT/etc/ews/token" secret
fi
[ -n "$KEEP_CONF" ] || put 0644 "$TMP/ews.toml" "$CONF"
if [ -n "$BACKUP" ]; then
	for f in ews-outputs.json ews.toml.from-backup; do
		[ ! -e "$TMP/card/$f" ] || put 0644 "$TMP/card/$f" "$BOOT/$f"
	done
	# the configuration and users stores, into the state_dir on the root
	# side, 0600 and the unit's user's: by the card's own ids when it has
	# user ews already (a card that booted before), else the package's
	# tmpfiles.d gives them to ews at first boot, once systemd-sysusers made
	# it (/var/lib/ews is root:ews, so tmpfiles may: issue 45). A board's
	# own store already on the card is kept, as `ews cluster restore --root` does.
	OWNER=$(awk -F: '$1 == "ews" { print $3 ":" $4 }' "$ROOT/etc/passwd" 2>/dev/null || true)
	while IFS= read -r f; do
		if [ -e "$ROOT/$f" ]; then
			echo "$PROG: warning: $ROOT/$f exists: kept (the board's own store)" >&2
		else
			put 0600 "$TMP/root/$f" "$ROOT/$f"
			[ -z "$OWNER" ] || run chown -h "$OWNER" "$ROOT/$f"
		fi
	done < <(cd "$TMP/root" && find . -type f | sed 's#^\./##' | sort)
fi
if [ -n "$DRY" ]; then
	echo "--- $CONF would be:"
	cat "$TMP/ews.toml"
	echo "---"
fi
run sync "$ROOT/usr/bin/ews" "$ROOT/etc/ews" "$CONF"

echo "$PROG: board $NAME ready${DRY:+ (dry run: nothing was changed)}; first boot creates user ews and starts ews.service"
