#!/usr/bin/env bash
# One board's SD-card image for the field test (scripts/field.sh), made as a
# user makes it: the board OS (rootfs.sh's cache) unpacked into a root and a
# boot directory (the card's two partitions, mounted), then ews put on it
# either by scripts/flash.sh exactly as docs/guide/install.md's "Flash a board" says,
# or (--deb) as a package that `dpkg -i` installs at first boot with the
# board's bundle dropped in /etc/ews first. Then the two directories become
# a disk image: an MBR, a FAT boot partition (mkfs.vfat, mtools) and an ext4
# root (mkfs.ext4 -d); no loop device, no mount.
#
#   image.sh --cache DIR --dist DIR --bundle ADMIN --name ews1 --addr 10.77.0.11 \
#       (--peers LIST [--devices FILE] | --from-backup FILE) [--deb FILE] [--lean] --out IMG
#
# --lean leaves the kernel's modules and device trees out: a card that is
# only read back, never booted (smoke.sh), made in half the time.
#
# What stands for the user's own OS setup (not ews's): the hostname, a
# static address (systemd-networkd), fstab (the boot partition on
# /boot/firmware, as on Raspberry Pi OS), groups gpio and i2c and a udev
# rule giving /dev/gpiochip* to group gpio (Raspberry Pi OS ships both), and
# the test's agent (agent.sh). --devices appends [[device]] tables to the
# boot config, as a user edits it after flashing.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$HERE/../..
CACHE="" DIST="" BUNDLE="" NAME="" ADDR="" PEERS="" DEVICES="" BACKUP="" DEB="" OUT="" LEAN=()
while [ $# -gt 0 ]; do
	case "$1" in
	--cache) CACHE=$2; shift 2 ;;
	--dist) DIST=$2; shift 2 ;;
	--bundle) BUNDLE=$2; shift 2 ;;
	--name) NAME=$2; shift 2 ;;
	--addr) ADDR=$2; shift 2 ;;
	--peers) PEERS=$2; shift 2 ;;
	--devices) DEVICES=$2; shift 2 ;;
	--from-backup) BACKUP=$2; shift 2 ;;
	--deb) DEB=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--lean) LEAN=(--exclude=./usr/lib/modules --exclude='./usr/lib/linux-image-*'); shift ;;
	*) echo "image.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
for v in CACHE DIST BUNDLE NAME ADDR OUT; do
	[ -n "${!v}" ] || { echo "image.sh: --${v,,} is required" >&2; exit 2; }
done
[ -e "$CACHE/.ok" ] || { echo "image.sh: no board OS in $CACHE (scripts/field/rootfs.sh)" >&2; exit 1; }
EWS=$DIST/ews-linux-amd64 # the host's ews: mints the board's bundle, checks the config

work=$(mktemp -d "${OUT%/*}/.image.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root boot=$work/boot
mkdir -p "$root" "$boot"
tar -x -p --numeric-owner "${LEAN[@]}" -C "$root" -f "$CACHE/rootfs.tar"

# --- the user's OS setup ---
echo "$NAME" >"$root/etc/hostname"
# (under TCG udev may take minutes to announce vda1: past systemd's 90 s
# device timeout the boot would stop in emergency mode)
cat >"$root/etc/fstab" <<FSTAB
/dev/vda2 /              ext4 defaults,noatime 0 1
/dev/vda1 /boot/firmware vfat defaults,umask=0022,x-systemd.device-timeout=15min 0 2
FSTAB
mkdir -p "$root/boot/firmware" "$root/etc/systemd/network"
cat >"$root/etc/systemd/network/10-lan.network" <<NET
[Match]
Name=en* eth*

[Network]
Address=$ADDR/24
NET
wants() { # wants TARGET UNIT PATH: enable UNIT by hand (no systemctl in a chroot of another arch)
	mkdir -p "$root/etc/systemd/system/$1.wants"
	ln -sfn "$3" "$root/etc/systemd/system/$1.wants/$2"
}
wants multi-user.target systemd-networkd.service /lib/systemd/system/systemd-networkd.service
wants sockets.target systemd-networkd.socket /lib/systemd/system/systemd-networkd.socket
wants network-online.target systemd-networkd-wait-online.service /lib/systemd/system/systemd-networkd-wait-online.service
for g in gpio i2c; do # as on Raspberry Pi OS: the groups come with the OS
	grep -q "^$g:" "$root/etc/group" || groupadd -R "$root" -r "$g"
done
echo 'SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"' >"$root/etc/udev/rules.d/60-gpio.rules"
install -m 0755 "$HERE/agent.sh" "$root/usr/local/sbin/ews-field-agent"
install -m 0644 "$HERE/ews-field-agent.service" "$root/etc/systemd/system/ews-field-agent.service"
wants multi-user.target ews-field-agent.service /etc/systemd/system/ews-field-agent.service
mkdir -p "$root/var/log/journal" # persistent: the journal check reads it after a restart
# TCG runs the board's CPU 10-50 times slower than a Pi's on these shared
# cores: an HTTPS probe of the unit's watchdog (half of WatchdogSec) and a
# start (TimeoutStartSec) take longer; a drop-in, as `systemctl edit ews`
# makes (docs/NOTES.md, Testing: field test)
mkdir -p "$root/etc/systemd/system/ews.service.d"
cat >"$root/etc/systemd/system/ews.service.d/tcg.conf" <<UNIT
[Service]
WatchdogSec=180s
TimeoutStartSec=5min
UNIT

# --- ews, as the user puts it there ---
if [ -z "$DEB" ]; then
	args=(--boot "$boot" --root "$root" --arch arm64 --name "$NAME" --bundle "$BUNDLE" --dist "$DIST" --ews "$EWS")
	if [ -n "$BACKUP" ]; then args+=(--from-backup "$BACKUP"); else args+=(--peers "$PEERS"); fi
	bash "$REPO/scripts/flash.sh" "${args[@]}"
else
	# docs/guide/install.md: a board bundle in /etc/ews/cluster.bundle before installing the
	# .deb, and the boot config flash.sh would write
	install -d -m 0700 "$root/etc/ews"
	"$EWS" cluster board "$NAME" --addr "$ADDR" --bundle "$BUNDLE" --out "$root/etc/ews/cluster.bundle" >/dev/null
	chmod 0600 "$root/etc/ews/cluster.bundle"
	(
		PROG=image.sh
		# shellcheck source=../lib/board.sh
		. "$REPO/scripts/lib/board.sh"
		check_peers "$PEERS" "$NAME"
		boot_config "$NAME" "$PEER_PORT" >"$boot/ews.toml"
	)
	install -m 0644 "$DEB" "$root/root/"
	install -m 0644 "$HERE/ews-field-firstboot.service" "$root/etc/systemd/system/"
	wants multi-user.target ews-field-firstboot.service /etc/systemd/system/ews-field-firstboot.service
fi
if [ -n "$DEVICES" ] && [ -z "$BACKUP" ]; then
	# the gossip timings for boards this slow (see tcg.conf above): under [cluster]
	sed -i 's/^\[cluster\]$/[cluster]\ntmax       = "10s"    # TCG, niced: 10-100x slower than a Pi\ntthreshold = "6s"\nheartbeat  = "1s"/' "$boot/ews.toml"
	cat "$DEVICES" >>"$boot/ews.toml"
	"$EWS" config check "$boot/ews.toml" >/dev/null 2>&1 || true # bundle_file is on the root: checked on the board
fi

# --- the card: MBR, FAT32 boot (64 MiB) at 1 MiB, ext4 root after it ---
boot_mb=64
root_kb=$(($(du -sk "$root" | cut -f1) * 13 / 10 + 131072))
root_mb=$((root_kb / 1024 + 1))
img=$work/card.img
truncate -s $((1 + boot_mb + root_mb + 1))M "$img"
printf 'label: dos\nstart=1MiB, size=%dMiB, type=c\nstart=%dMiB, type=83\n' $boot_mb $((1 + boot_mb)) |
	sfdisk -q "$img"
mkfs.vfat -F 32 -s 1 -n BOOTFS --offset $((1024 * 1024 / 512)) "$img" $((boot_mb * 1024)) >/dev/null 2>&1
MTOOLS_SKIP_CHECK=1 mcopy -s -p -i "$img@@1M" "$boot"/* ::
mkfs.ext4 -q -F -L rootfs -E offset=$(((1 + boot_mb) * 1024 * 1024)) -d "$root" "$img" "${root_mb}M"
mv "$img" "$OUT"
how="flash.sh${BACKUP:+ --from-backup}"
[ -z "$DEB" ] || how="dpkg -i ${DEB##*/} at first boot"
echo "image.sh: $NAME: $OUT ($(du -h --apparent-size "$OUT" | cut -f1), $how)"
