#!/usr/bin/env bash
# Hardware in the loop (`make hil`, part of `make test`): boots Debian's own
# arm64 kernel on qemu-system's Raspberry Pi 3 machine (raspi3b, the
# kernel's bcm2837-rpi-3-b device tree) once, and inside it runs the arm64,
# armv7 and armv6 builds of ews in turn (the 32-bit ones in the kernel's
# compat mode, as Raspberry Pi OS runs armhf on a 64-bit kernel). The
# guest's /init is scripts/hil/init.sh; it prints "HIL PASS|FAIL name"
# lines and "HIL END", which this script checks against the list below.
# The kernel, its dtb and modules and busybox are cached under
# $EWS_HIL_CACHE (default /var/cache/ews-hil), keyed by package version.
# Skips (exit 0, one line) when not root and something is missing, or when
# the packages cannot be fetched.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
CACHE=${EWS_HIL_CACHE:-/var/cache/ews-hil}
TIMEOUT=${EWS_HIL_TIMEOUT:-300} # seconds for the whole guest run
BUILDS=${EWS_HIL_BUILDS:-arm64 armv7 armv6}
# Every check init.sh makes per build; a name missing from the output fails.
CHECKS="version config-check check-exit check-w1 check-i2c check-group serving run-as
out-requested out-on out-state out-off lowactive-idle lowactive-on lowactive-off
in-pull-up in-pull-down in-consumer in-read pwm-exported pwm-period pwm-duty pwm-full pwm-off
stop-before stop-before-lowactive sigterm-exit released stop-off stop-off-lowactive pwm-unexported"
SETUP="kernel/insmod-pwm-bcm2835 kernel/pwmchip kernel/gpiochip"

skip() {
	echo "hil: SKIP: $*"
	exit 0
}
root() { [ "$(id -u)" -eq 0 ]; }

tools="qemu-system-aarch64 cpio fdtput"
for t in $tools; do
	if ! command -v "$t" >/dev/null; then
		root || skip "not root and $t is missing (apt-get install qemu-system-arm cpio device-tree-compiler)"
		bash scripts/deps.sh qemu-system-arm:qemu-system-aarch64 cpio device-tree-compiler:fdtput ||
			skip "cannot install qemu-system-arm cpio device-tree-compiler (offline?)"
		break
	fi
done

# kernel: which Debian arm64 kernel the archive offers now (an older cached
# one when the archive cannot be asked)
arm64_known() { dpkg --print-foreign-architectures | grep -qx arm64; }
if root && ! arm64_known; then
	dpkg --add-architecture arm64
	apt-get update -qq || true
fi
kpkg=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}' || true)
kpkg=${kpkg%:arm64}
kver=""
[ -n "$kpkg" ] && kver=$(apt-cache show --no-all-versions "$kpkg:arm64" 2>/dev/null | awk '/^Version:/ {print $2; exit}' || true)
dir=""
if [ -n "$kver" ]; then
	dir=$CACHE/${kpkg}_$kver
else
	for d in "$CACHE"/linux-image-*/; do # the newest complete one
		if [ -e "$d.ok" ] && { [ -z "$dir" ] || [ "$d.ok" -nt "$dir/.ok" ]; }; then dir=${d%/}; fi
	done
	[ -n "$dir" ] || skip "no arm64 kernel known to apt and none cached in $CACHE (offline? run as root once online)"
	echo "hil: the archive does not list linux-image-arm64:arm64; using the cached $(basename "$dir")"
fi

fetch() { # into $dir: vmlinuz, the Pi 3 dtb, modules, busybox
	root || skip "not root and no cached kernel in $dir"
	local dl
	dl=$(mktemp -d)
	chmod 755 "$dl"
	echo "hil: fetching $kpkg $kver and busybox-static (arm64) into $dir"
	(cd "$dl" && apt-get download -q "$kpkg:arm64=$kver" busybox-static:arm64 >/dev/null 2>&1) ||
		{
			rm -rf "$dl"
			skip "apt-get download $kpkg:arm64 busybox-static:arm64 failed (offline?)"
		}
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp/x" "$dir.tmp/modules"
	dpkg-deb -x "$dl"/busybox-static_*.deb "$dir.tmp/x"
	cp "$dir.tmp/x/bin/busybox" "$dir.tmp/busybox"
	local deb list
	deb=$(ls "$dl"/linux-image-*.deb)
	list=$(dpkg-deb -c "$deb" | awk '{print $NF}')
	# pwm-bcm2835 and what its modinfo says it depends on
	local want=(pwm-bcm2835) have=() m path
	while [ ${#want[@]} -gt 0 ]; do
		m=${want[0]}
		want=("${want[@]:1}")
		[[ " ${have[*]} " == *" $m "* ]] && continue
		path=$(grep -E "/${m//-/[-_]}\.ko(\.xz)?$" <<<"$list" | head -1)
		[ -n "$path" ] || { echo "hil: module $m not in $deb" >&2; exit 1; }
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir.tmp/x" "$path"
		case "$path" in *.xz) xz -d "$dir.tmp/x/$path" && path=${path%.xz} ;; esac
		cp "$dir.tmp/x/$path" "$dir.tmp/modules/"
		have+=("$m")
		for d in $(strings "$dir.tmp/x/$path" | sed -n 's/^depends=//p' | tr ',' ' '); do want+=("$d"); done
	done
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir.tmp/x" --wildcards './boot/vmlinuz-*' '*/broadcom/bcm2837-rpi-3-b.dtb'
	cp "$dir.tmp"/x/boot/vmlinuz-* "$dir.tmp/vmlinuz"
	find "$dir.tmp/x" -name bcm2837-rpi-3-b.dtb -exec cp {} "$dir.tmp/" \;
	rm -rf "$dir.tmp/x" "$dl"
	echo "$kpkg $kver" >"$dir.tmp/.ok"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
}
[ -e "$dir/.ok" ] || fetch

work=$(mktemp -d)
qemu_pid=""
cleanup() {
	if [ -n "$qemu_pid" ]; then kill "$qemu_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# the shipped builds, with the Makefile's flags
ldflags="-s -w -X github.com/ews-firmware/ews/internal/buildinfo.Version=hil"
rd=$work/rd
mkdir -p "$rd/bin" "$rd/ews" "$rd/lib/modules" "$rd/etc" "$rd/proc" "$rd/sys" "$rd/dev" "$rd/tmp"
for b in $BUILDS; do
	case $b in
	arm64) env=(GOARCH=arm64) ;;
	armv7) env=(GOARCH=arm GOARM=7) ;;
	armv6) env=(GOARCH=arm GOARM=6) ;;
	esac
	env GOOS=linux "${env[@]}" CGO_ENABLED=0 go build -trimpath -tags nethttpomithttp2 -ldflags "$ldflags" -o "$rd/ews/$b/ews" ./cmd/ews
done
GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$rd/bin/guest" ./scripts/hil/guest
cp "$dir/busybox" "$rd/bin/busybox"
cp "$dir"/modules/*.ko "$rd/lib/modules/"
install -m 755 scripts/hil/init.sh "$rd/init"
install -m 755 scripts/hil/pwm-rule.sh "$rd/bin/pwm-rule.sh"
(cd "$rd" && find . | cpio -o -H newc --quiet | gzip -1 >"$work/initrd.gz")
# the PWM block, as dtoverlay=pwm turns it on (some dtbs ship it disabled)
cp "$dir/bcm2837-rpi-3-b.dtb" "$work/pi3.dtb"
fdtput -t s "$work/pi3.dtb" /soc/pwm@7e20c000 status okay

log=$work/console.log
start=$(date +%s%N)
qemu-system-aarch64 -M raspi3b -kernel "$dir/vmlinuz" -dtb "$work/pi3.dtb" -initrd "$work/initrd.gz" \
	-append "console=ttyAMA0 loglevel=3 rdinit=/init" \
	-display none -monitor none -serial "file:$log" </dev/null >"$work/qemu.out" 2>&1 &
qemu_pid=$!
deadline=$((SECONDS + TIMEOUT))
until grep -q '^HIL END' "$log" 2>/dev/null; do
	if ! kill -0 "$qemu_pid" 2>/dev/null; then
		echo "hil: qemu exited before HIL END:" >&2
		cat "$work/qemu.out" >&2
		break
	fi
	if [ $SECONDS -ge $deadline ]; then
		echo "hil: no HIL END within ${TIMEOUT}s; stopping qemu" >&2
		break
	fi
	sleep 0.5 # the guest's console is a file; nothing to wait on
done
secs=$((($(date +%s%N) - start) / 1000000))
kill "$qemu_pid" 2>/dev/null || true
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=""
tr -d '\r' <"$log" >"$work/out"

model=$(sed -n 's/^HIL MODEL //p' "$work/out")
echo "hil: booted qemu-system-aarch64 -M raspi3b: ${model:-?} ($(sed -n 's/^HIL KERNEL //p' "$work/out")), $kpkg $kver, guest run $((secs / 1000)).$((secs % 1000 / 100)) s"
grep -E '^HIL (PASS|FAIL|TIME|NOTE)' "$work/out" | sed 's/^/hil: /'
bad=0
if grep -q '^HIL FAIL' "$work/out"; then bad=1; fi
expect=$SETUP
for b in $BUILDS; do
	for c in $CHECKS; do expect="$expect $b/$c"; done
done
for n in $expect; do
	grep -qxE "HIL (PASS|FAIL) $n( .*)?" "$work/out" || {
		echo "hil: MISSING $n" >&2
		bad=1
	}
done
grep -q '^HIL END' "$work/out" || bad=1
if [ $bad -ne 0 ]; then
	echo "hil: FAILED; the guest's console:" >&2
	grep -vE '^HIL (PASS|TIME)' "$work/out" | tail -60 >&2
	exit 1
fi
echo "hil: all $(wc -w <<<"$expect") checks passed on ${model:-?}"
