#!/usr/bin/env bash
# Hardware in the loop (`make hil`, part of `make test`): boots Debian's own
# kernels on qemu-system's Raspberry Pi machines and runs the shipped ARM
# builds of ews inside, each in turn:
#   raspi3b  Pi 3 Model B, Debian's arm64 kernel: arm64 natively, armv7 and
#            armv6 in the kernel's 32-bit mode (Raspberry Pi OS's armhf
#            userland on its 64-bit kernel)
#   raspi2b  Pi 2 Model B, Debian's armmp (32-bit) kernel: armv7, armv6
# The guest's /init is scripts/hil/init.sh; it prints "HIL PASS|FAIL name"
# lines and "HIL END", which this script checks against the list below.
# Kernels, dtbs, modules and busybox are cached under $EWS_HIL_CACHE
# (default /var/cache/ews-hil), keyed by package version. Skips (exit 0,
# one line) when not root and something is missing, or when the packages
# cannot be fetched (offline). EWS_HIL_MACHINES picks machines.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
CACHE=${EWS_HIL_CACHE:-/var/cache/ews-hil}
TIMEOUT=${EWS_HIL_TIMEOUT:-420} # seconds for one machine's whole run (130 s seen at load 20)
MACHINES=${EWS_HIL_MACHINES:-raspi3b raspi2b}
# Every check init.sh makes per build; a name missing from the output fails.
CHECKS="version config-check check-exit check-w1 check-i2c check-group serving run-as
out-requested out-on out-state out-off lowactive-idle lowactive-on lowactive-off
in-pull-up in-pull-down in-consumer in-read pwm-exported pwm-period pwm-duty pwm-full pwm-off
stop-before stop-before-lowactive sigterm-exit released stop-off stop-off-lowactive pwm-unexported"
SETUP="kernel/insmod-pwm-bcm2835 kernel/pwmchip kernel/pwm-rule kernel/gpiochip"

# machine NAME: what to boot and run on it
machine() {
	case $1 in
	raspi3b) march=arm64 flavour=arm64 qemu=qemu-system-aarch64 dtb=bcm2837-rpi-3-b builds="arm64 armv7 armv6" ;;
	raspi2b) march=armhf flavour=armmp qemu=qemu-system-arm dtb=bcm2836-rpi-2-b builds="armv7 armv6" ;;
	*)
		echo "hil: unknown machine $1 (raspi3b raspi2b)" >&2
		exit 2
		;;
	esac
}

skip() {
	echo "hil: SKIP: $*"
	exit 0
}
root() { [ "$(id -u)" -eq 0 ]; }

for t in qemu-system-aarch64 qemu-system-arm cpio fdtput; do
	if ! command -v "$t" >/dev/null; then
		root || skip "not root and $t is missing (apt-get install qemu-system-arm cpio device-tree-compiler)"
		bash scripts/deps.sh qemu-system-arm:qemu-system-aarch64 cpio device-tree-compiler:fdtput ||
			skip "cannot install qemu-system-arm cpio device-tree-compiler (offline?)"
		break
	fi
done

# kernel MACHINE: sets kpkg, kver and dir (the cache entry), fetching it
# when missing: the kernel the archive offers now, or the newest cached
# one when the archive cannot be asked.
updated=""
kernel() {
	machine "$1"
	if root && ! dpkg --print-foreign-architectures | grep -qx "$march"; then
		dpkg --add-architecture "$march"
		updated=""
	fi
	if root && [ -z "$updated" ] && ! apt-cache show "linux-image-$flavour:$march" >/dev/null 2>&1; then
		apt-get update -qq || true
		updated=1
	fi
	kpkg=$(apt-cache depends "linux-image-$flavour:$march" 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}' || true)
	kpkg=${kpkg%:"$march"}
	kver=""
	[ -n "$kpkg" ] && kver=$(apt-cache show --no-all-versions "$kpkg:$march" 2>/dev/null | awk '/^Version:/ {print $2; exit}' || true)
	dir=""
	if [ -n "$kver" ]; then
		dir=$CACHE/${kpkg}_$kver
	else
		for d in "$CACHE"/linux-image-*-"${flavour}"_*/; do # the newest complete one
			if [ -e "$d.ok" ] && { [ -z "$dir" ] || [ "$d.ok" -nt "$dir/.ok" ]; }; then dir=${d%/}; fi
		done
		[ -n "$dir" ] || skip "no $march kernel known to apt and none cached in $CACHE (offline? run as root once online)"
		read -r kpkg kver <"$dir/.ok"
		echo "hil: the archive does not list linux-image-$flavour:$march; using the cached $kpkg $kver"
	fi
	[ -e "$dir/.ok" ] || fetch
}

fetch() { # into $dir: vmlinuz, the machine's dtb, modules, busybox
	root || skip "not root and no cached kernel in $dir"
	local dl
	dl=$(mktemp -d)
	chmod 755 "$dl" # apt's sandbox user writes here
	echo "hil: fetching $kpkg $kver and busybox-static ($march) into $dir"
	(cd "$dl" && apt-get download -q "$kpkg:$march=$kver" "busybox-static:$march" >/dev/null 2>&1) ||
		{
			rm -rf "$dl"
			skip "apt-get download $kpkg:$march busybox-static:$march failed (offline?)"
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
		[ -n "$path" ] || {
			echo "hil: module $m not in $deb" >&2
			exit 1
		}
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir.tmp/x" "$path"
		case "$path" in *.xz) xz -d "$dir.tmp/x/$path" && path=${path%.xz} ;; esac
		cp "$dir.tmp/x/$path" "$dir.tmp/modules/"
		have+=("$m")
		for d in $(strings "$dir.tmp/x/$path" | sed -n 's/^depends=//p' | tr ',' ' '); do want+=("$d"); done
	done
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir.tmp/x" --wildcards './boot/vmlinuz-*' "*/$dtb.dtb"
	cp "$dir.tmp"/x/boot/vmlinuz-* "$dir.tmp/vmlinuz"
	find "$dir.tmp/x" -name "$dtb.dtb" -exec cp {} "$dir.tmp/" \;
	rm -rf "$dir.tmp/x" "$dl"
	echo "$kpkg $kver" >"$dir.tmp/.ok"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
}

declare -A kdir kname
for m in $MACHINES; do
	kernel "$m"
	kdir[$m]=$dir
	kname[$m]="$kpkg $kver"
done

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait
	rm -rf "$work"
}
trap cleanup EXIT

# the shipped builds, with the Makefile's flags, and the guest's helper
# (armv6: it runs on every kernel here)
ldflags="-s -w -X github.com/ews-firmware/ews/internal/buildinfo.Version=hil"
read -ra gcflags <<<"$(bash scripts/gcflags.sh full)"
for b in arm64 armv7 armv6; do
	case $b in
	arm64) env=(GOARCH=arm64) ;;
	armv7) env=(GOARCH=arm GOARM=7) ;;
	armv6) env=(GOARCH=arm GOARM=6) ;;
	esac
	env GOOS=linux "${env[@]}" CGO_ENABLED=0 go build -trimpath -tags nethttpomithttp2 "${gcflags[@]}" -ldflags "$ldflags" -o "$work/ews/$b/ews" ./cmd/ews
done
GOOS=linux GOARCH=arm GOARM=6 CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/guest" ./scripts/hil/guest

# boot MACHINE: one boot, every build of it, in a subshell of its own
# (the machines boot side by side); exits 1 on a failure.
boot() {
	local name=$1
	dir=${kdir[$1]} qemu_pid="" # globals of this subshell: the trap reads qemu_pid
	machine "$name"
	trap 'if [ -n "$qemu_pid" ]; then kill "$qemu_pid" 2>/dev/null; fi' EXIT
	local rd=$work/$name/rd out=$work/$name/out log=$work/$name/console.log
	mkdir -p "$rd/bin" "$rd/ews" "$rd/lib/modules" "$rd/etc" "$rd/proc" "$rd/sys" "$rd/dev" "$rd/tmp"
	for b in $builds; do cp -r "$work/ews/$b" "$rd/ews/"; done
	cp "$work/guest" "$rd/bin/guest"
	cp "$dir/busybox" "$rd/bin/busybox"
	cp "$dir"/modules/*.ko "$rd/lib/modules/"
	install -m 755 scripts/hil/init.sh "$rd/init"
	install -m 755 scripts/hil/pwm-rule.sh "$rd/bin/pwm-rule.sh"
	(cd "$rd" && find . | cpio -o -H newc --quiet | gzip -1 >"$work/$name/initrd.gz")
	# the PWM block, as dtoverlay=pwm turns it on (some dtbs ship it disabled)
	cp "$dir/$dtb.dtb" "$work/$name/board.dtb"
	fdtput -t s "$work/$name/board.dtb" /soc/pwm@7e20c000 status okay

	local start secs
	start=$(date +%s%N)
	"$qemu" -M "$name" -kernel "$dir/vmlinuz" -dtb "$work/$name/board.dtb" -initrd "$work/$name/initrd.gz" \
		-append "console=ttyAMA0 loglevel=3 rdinit=/init" \
		-display none -monitor none -serial "file:$log" </dev/null >"$work/$name/qemu.out" 2>&1 &
	qemu_pid=$!
	local deadline=$((SECONDS + TIMEOUT))
	until grep -q '^HIL END' "$log" 2>/dev/null; do
		if ! kill -0 "$qemu_pid" 2>/dev/null; then
			echo "hil: $name: qemu exited before HIL END:" >&2
			cat "$work/$name/qemu.out" >&2
			break
		fi
		if [ $SECONDS -ge $deadline ]; then
			echo "hil: $name: no HIL END within ${TIMEOUT}s; stopping qemu" >&2
			break
		fi
		sleep 0.5 # the guest's console is a file; nothing to wait on
	done
	secs=$((($(date +%s%N) - start) / 1000000))
	kill "$qemu_pid" 2>/dev/null || true
	wait "$qemu_pid" 2>/dev/null || true
	qemu_pid=""
	tr -d '\r' <"$log" >"$out"

	local model failed=0
	model=$(sed -n 's/^HIL MODEL //p' "$out")
	echo "hil: $name: booted $qemu -M $name: ${model:-?} ($(sed -n 's/^HIL KERNEL //p' "$out")), ${kname[$name]}, guest run $((secs / 1000)).$((secs % 1000 / 100)) s"
	grep -E '^HIL (PASS|FAIL|TIME|NOTE)' "$out" | sed "s/^HIL /hil: $name: /" || true
	if grep -q '^HIL FAIL' "$out"; then failed=1; fi
	local expect=$SETUP b c n
	for b in $builds; do
		for c in $CHECKS; do expect="$expect $b/$c"; done
	done
	for n in $expect; do
		grep -qxE "HIL (PASS|FAIL) $n( .*)?" "$out" || {
			echo "hil: $name: MISSING $n" >&2
			failed=1
		}
	done
	grep -q '^HIL END' "$out" || failed=1
	if [ $failed -ne 0 ]; then
		echo "hil: $name: FAILED; the guest's console:" >&2
		grep -vE '^HIL (PASS|TIME)' "$out" | tail -60 >&2 || true
		exit 1
	fi
	echo "hil: $name: all $(wc -w <<<"$expect") checks passed on ${model:-?}"
}

for m in $MACHINES; do
	(boot "$m") >"$work/$m.report" 2>&1 &
	pids+=($!)
done
bad=0
total=0
i=0
for m in $MACHINES; do
	wait "${pids[$i]}" || bad=1
	i=$((i + 1))
	cat "$work/$m.report"
	n=$(sed -n "s/^hil: $m: all \([0-9]*\) checks passed.*/\1/p" "$work/$m.report")
	total=$((total + ${n:-0}))
done
pids=()
[ $bad -eq 0 ] || exit 1
echo "hil: all $total checks passed on $MACHINES"
