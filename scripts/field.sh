#!/usr/bin/env bash
# Field test (`make field`, root, not part of `make test`): three boards
# booted from SD-card images made as a user makes them, on one virtual LAN,
# checked from outside as a client would. Each board is qemu-system-aarch64
# -M virt (TCG: no KVM here) booting Debian's arm64 kernel into a small
# Debian bookworm with systemd, where the packaged unit runs ews as user
# ews; the machine's PL061 GPIO controller (Debian's kernel drives it;
# its lines named GPIO0..7 in the device tree, as a Pi's are) gives it a
# real GPIO character device.
#   ews1, ews2  flashed with scripts/flash.sh --bundle (docs/guide/install.md "Flash a board")
#   ews3        the .deb, dpkg -i at first boot, its board bundle in /etc/ews
# The LAN is a bridge and three taps in a network namespace this script
# makes (ews-field, 10.77.0.0/24; nothing outside it); the checks run from
# that namespace over HTTPS with the cluster's CA. It prints
#   FIELD PASS|FAIL <check> <figure>   cluster toggle journal watchdog
#                                      upgrade rollback takeover power-cut rebuild
#   FIELD TIME boot-to-serving ...
# The board OS is built once (scripts/field/rootfs.sh, some minutes) and
# cached in $EWS_FIELD_CACHE (default /var/cache/ews-field); each run makes
# fresh cards in $EWS_FIELD_CACHE/run (kept for its console logs).
# EWS_FIELD_STEPS picks checks (comma-separated, in the order above).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin:/usr/sbin:/sbin
CACHE=${EWS_FIELD_CACHE:-/var/cache/ews-field}
STEPS=${EWS_FIELD_STEPS:-cluster,toggle,journal,watchdog,upgrade,rollback,takeover,power-cut,rebuild}
NS=ews-field
PEERS="ews1=10.77.0.11:7946,ews2=10.77.0.12:7946,ews3=10.77.0.13:7946"
BOARDS="ews1=10.77.0.11,ews2=10.77.0.12,ews3=10.77.0.13"

[ "$(id -u)" -eq 0 ] || {
	echo "field: needs root (mmdebstrap, a network namespace, taps)" >&2
	exit 1
}
bash scripts/deps.sh mmdebstrap qemu-user-static:qemu-aarch64-static qemu-system-arm:qemu-system-aarch64 \
	e2fsprogs:mkfs.ext4 mtools:mcopy dosfstools:mkfs.vfat fdisk:sfdisk binfmt-support:update-binfmts device-tree-compiler:fdtput
bash scripts/field/rootfs.sh "$CACHE"

RUN=$CACHE/run
rm -rf "$RUN"
mkdir -p "$RUN/dist"
NSUP=""
cleanup() {
	if [ -n "$NSUP" ]; then ip netns del "$NS" 2>/dev/null || true; fi
}
trap cleanup EXIT

# --- the user's side: builds, the cluster's secrets, the cards ---
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
read -ra gcflags <<<"$(bash scripts/gcflags.sh full)" # the shipped builds' (Makefile GCFLAGS)
build() { # build VERSION GOARCH OUT [PKG]
	CGO_ENABLED=0 GOOS=linux GOARCH=$2 nice -n 19 go build -trimpath -tags nethttpomithttp2 "${gcflags[@]}" \
		-ldflags "-s -w -X github.com/ews-firmware/ews/internal/buildinfo.Version=$1 -X github.com/ews-firmware/ews/internal/buildinfo.Commit=$commit" \
		-o "$3" "${4:-./cmd/ews}"
}
echo "field: building ews (arm64 field-1 and field-2, amd64 for the host)"
build field-1 amd64 "$RUN/dist/ews-linux-amd64"
build field-1 arm64 "$RUN/dist/ews-linux-arm64"
build field-2 arm64 "$RUN/ews-field-2"
CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -o "$RUN/ews-broken" ./scripts/field/broken
EWS=$RUN/dist/ews-linux-amd64
"$EWS" cluster init --peers "$PEERS" --out "$RUN/admin.bundle" >/dev/null
for b in "$RUN/dist/ews-linux-arm64" "$RUN/ews-field-2" "$RUN/ews-broken"; do
	"$EWS" firmware sign --bundle "$RUN/admin.bundle" "$b" >/dev/null
done
go run ./scripts/pkg --dist "$RUN/dist" --version field-1 --arch arm64 >/dev/null
"$EWS" cluster ca "$RUN/admin.bundle" >"$RUN/ca.pem"
(umask 077 && sed -n "s/^token *= *['\"]\(.*\)['\"] *$/\1/p" "$RUN/admin.bundle" >"$RUN/token")
[ -s "$RUN/token" ] || {
	echo "field: no token in the admin bundle" >&2
	exit 1
}

devices() { # devices: what the user adds to every board's boot config
	local n
	cat <<TOML

[history]
flush = "1s"  # the power-cut check cuts the power while the board writes
TOML
	for n in 1 2 3; do
		cat <<TOML

[[device]]
name = "relay$n"
node = "ews$n"
driver = "gpio-out"
pin = "GPIO4"  # the PL061's line 4 (3 is the virt machine's power key)
TOML
	done
}
devices >"$RUN/devices.toml"
for n in 1 2 3; do
	args=(--cache "$CACHE" --dist "$RUN/dist" --bundle "$RUN/admin.bundle" --name "ews$n" --addr "10.77.0.1$n"
		--peers "$PEERS" --devices "$RUN/devices.toml" --out "$RUN/ews$n.img")
	[ $n -ne 3 ] || args+=(--deb "$(ls "$RUN"/dist/ews_*_arm64.deb)")
	nice -n 19 bash scripts/field/image.sh "${args[@]}"
done
# ews3's card rebuilt from a backup (the rebuild check): flash.sh --from-backup
REBUILD="nice -n 19 bash scripts/field/image.sh --cache $CACHE --dist $RUN/dist --bundle $RUN/admin.bundle --name ews3 --addr 10.77.0.13 --out $RUN/ews3.img"

# --- the LAN: a bridge and three taps in a namespace of our own ---
ip netns del "$NS" 2>/dev/null || true
ip netns add "$NS"
NSUP=1
nsx() { ip netns exec "$NS" "$@"; }
nsx ip link set lo up
nsx ip link add ews-br type bridge
nsx ip addr add 10.77.0.1/24 dev ews-br
nsx ip link set ews-br up
for n in 1 2 3; do
	nsx ip tuntap add "ews-tap$n" mode tap
	nsx ip link set "ews-tap$n" master ews-br up
done

go build -o "$RUN/driver" ./scripts/field/driver
echo "field: booting ews1 ews2 ews3 (qemu-system-aarch64 -M virt, TCG; consoles in $RUN/ews*/console.log)"
rc=0
nsx "$RUN/driver" --work "$RUN" --boards "$BOARDS" --kernel "$CACHE/vmlinuz" --initrd "$CACHE/initrd.img" \
	--cacert "$RUN/ca.pem" --token-file "$RUN/token" --ews "$EWS" \
	--upgrade "$RUN/ews-field-2" --upgrade-version field-2 --broken "$RUN/ews-broken" \
	--rebuild "$REBUILD" --steps "$STEPS" || rc=$?
[ $rc -eq 0 ] && echo "field: all checks passed" || echo "field: FAILED (consoles in $RUN)"
exit $rc
