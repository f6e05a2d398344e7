#!/usr/bin/env bash
# watchdog-box.sh: time 002's watchdog pair on ews under a real systemd
# with the shipped unit (packaging/ews.service, unchanged), without booting
# an image: systemd (the host's /lib/systemd/systemd) runs as PID 1 of its
# own PID, mount, cgroup and UTS namespaces, in a root made of the host's
# /usr (read-only, ews and the helper laid over it), a fresh /etc, /run,
# /var and /tmp, a read-only /sys and /proc/sys, and a cgroup2 of its own.
# The network is the host's: ews listens on 127.0.0.1 only.
#
#   watchdog-box.sh EWS HELPER REPS
#
# EWS: an ews built with -tags ewsfault (node/supervise/stall_fault.go: the
# watch loop stalls when a file appears); HELPER: a program that, run as
# `HELPER __serve-readyz FILE`, serves /readyz (and /kill: SIGKILL itself) on
# loopback and writes "PID ADDR" to FILE (cmd/benchpaper). Prints, per rep:
#   WATCHDOG helper rep=N killed_to_ready_s=S
#   WATCHDOG stall  rep=N stall_to_serving_s=S ews_start_s=S signal=...
# and the unit's settings as systemd read them:
#   WATCHDOG unit WatchdogUSec=... RestartUSec=...
# Needs root, util-linux's unshare and nsenter, curl. Cleans up after itself.
set -euo pipefail
PROG=watchdog-box.sh
EWS=$(readlink -f "$1") HELPER=$(readlink -f "$2") REPS=${3:-3}
REPO=$(cd "$(dirname "$0")/.." && pwd)
PORT=${WATCHDOG_BOX_PORT:-18480}
die() { echo "$PROG: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (namespaces, mounts)"
[ -x /lib/systemd/systemd ] || die "no /lib/systemd/systemd"
[ -d /sys/fs/cgroup/unified ] || [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || die "no cgroup2 hierarchy"
cg=/sys/fs/cgroup/unified
[ -d "$cg" ] || cg=/sys/fs/cgroup

T=$(mktemp -d /tmp/ews-watchdog-box.XXXXXX)
R=$T/root
BOXCG=$cg/ews-watchdog-box-$$
mkdir -p "$R" "$T/usr-up/bin" "$T/usr-up/local/bin" "$T/usr-work" "$T/state" "$T/etc"
spid="" upid=""
cleanup() {
	if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then
		kill -9 "$spid" 2>/dev/null || true # PID 1 of the namespace: every process in it dies with it
		for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.05; done
	fi
	[ -z "$upid" ] || wait "$upid" 2>/dev/null || true # unshare leaves the cgroup when it exits
	for _ in $(seq 50); do # deepest first; a cgroup empties a moment after its last process exits
		[ -d "$BOXCG" ] || break
		find "$BOXCG" -depth -type d -exec rmdir {} \; 2>/dev/null || sleep 0.1
	done
	rm -rf "$T"
}
trap cleanup EXIT

# --- the root's /etc: users, the shipped unit, a target that wants only ews ---
E=$T/etc
mkdir -p "$E/systemd/system" "$E/ews" "$E/default"
cat >"$E/passwd" <<'P'
root:x:0:0:root:/root:/bin/bash
ews:x:990:990:ews:/var/lib/ews:/usr/sbin/nologin
ews-cgi:x:989:989:ews cgi:/nonexistent:/usr/sbin/nologin
systemd-journal:x:988:988::/:/usr/sbin/nologin
P
cat >"$E/group" <<'G'
root:x:0:
ews:x:990:
ews-cgi:x:989:
gpio:x:997:ews
i2c:x:996:ews
systemd-journal:x:988:
G
: >"$E/machine-id"
cp /etc/os-release "$E/os-release" 2>/dev/null || cp /usr/lib/os-release "$E/os-release"
install -m 0644 "$REPO/packaging/ews.service" "$E/systemd/system/ews.service"
cat >"$E/systemd/system/ews-watchdog-box.target" <<'U'
[Unit]
Description=ews and nothing else (scripts/watchdog-box.sh)
Wants=ews.service
U
ln -s ews-watchdog-box.target "$E/systemd/system/default.target"
# Units that would reach past the box into the host kernel or its devices.
for u in systemd-binfmt.service proc-sys-fs-binfmt_misc.automount systemd-modules-load.service \
	kmod-static-nodes.service systemd-sysctl.service systemd-udevd.service systemd-udev-trigger.service \
	systemd-udevd-control.socket systemd-udevd-kernel.socket systemd-firstboot.service systemd-repart.service \
	systemd-pcrphase.service systemd-pcrphase-sysinit.service systemd-random-seed.service \
	systemd-tmpfiles-setup-dev.service sys-kernel-config.mount sys-kernel-debug.mount sys-kernel-tracing.mount \
	sys-fs-fuse-connections.mount dev-hugepages.mount dev-mqueue.mount systemd-timesyncd.service \
	systemd-journald-audit.socket systemd-machine-id-commit.service getty.target console-getty.service; do
	ln -s /dev/null "$E/systemd/system/$u"
done
# The board's config: one board, loopback only, one [[supervise]] helper.
cat >"$E/ews/ews.toml" <<C
[node]
name     = "ews1"
http     = "127.0.0.1:$PORT"
gossip   = "127.0.0.1:$((PORT + 1))"
capacity = 4

[[supervise]]
name    = "critical"
command = ["/usr/local/bin/ews-box-helper", "__serve-readyz", "/var/lib/ews/helper.addr"]
C
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$E/ews/token" # as the .deb's postinst writes it
chown 0:990 "$E/ews/token" && chmod 0640 "$E/ews/token"
chown 0:990 "$E/ews" && chmod 0770 "$E/ews"
echo "EWS_FAULT_STALL_WATCH=/var/lib/ews/stall-watch" >"$E/default/ews"
install -m 0755 "$EWS" "$T/usr-up/bin/ews"
install -m 0755 "$HELPER" "$T/usr-up/local/bin/ews-box-helper"
chown 990:990 "$T/state"

# --- PID 1 of the box ---
cat >"$T/init.sh" <<INIT
set -e
R=$R
mount -t tmpfs -o mode=755 root "\$R"
mkdir -p "\$R"/{usr,etc,var/lib/ews,var/log,run,tmp,proc,sys,dev,root}
mount -t overlay overlay -o lowerdir=/usr,upperdir=$T/usr-up,workdir=$T/usr-work "\$R/usr"
for l in bin lib lib64 sbin; do [ -e "/\$l" ] && ln -s "usr/\$l" "\$R/\$l"; done
cp -a $T/etc/. "\$R/etc/"
mount --bind $T/state "\$R/var/lib/ews"
mount -t tmpfs -o mode=755 run "\$R/run"
mount -t tmpfs -o mode=1777 tmp "\$R/tmp"
mount -t proc proc "\$R/proc"
mount --bind "\$R/proc/sys" "\$R/proc/sys" && mount -o remount,bind,ro "\$R/proc/sys"
mount -t sysfs -o ro sysfs "\$R/sys"
mount -t cgroup2 cgroup2 "\$R/sys/fs/cgroup"
mount -t tmpfs -o mode=755 dev "\$R/dev"
for d in null zero full random urandom tty; do touch "\$R/dev/\$d"; mount --bind /dev/\$d "\$R/dev/\$d"; done
mkdir -p "\$R/dev/pts" "\$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "\$R/dev/pts"
ln -s pts/ptmx "\$R/dev/ptmx"
mount -t tmpfs -o mode=1777 shm "\$R/dev/shm"
cd "\$R"
exec env -i container=ews-watchdog-box PATH=/usr/sbin:/usr/bin chroot "\$R" /lib/systemd/systemd --system --log-target=console
INIT

mkdir "$BOXCG"
(
	echo "$BASHPID" >"$BOXCG/cgroup.procs"
	exec unshare --pid --fork --mount --cgroup --uts --propagation private bash "$T/init.sh"
) >"$T/box.log" 2>&1 &
upid=$!

box() { nsenter -t "$spid" -m -p -u -r -w -- "$@"; } # a command inside the box
# systemd is the unshare's child, PID 1 inside
for _ in $(seq 200); do
	spid=$(pgrep -P "$upid" -x systemd || true)
	[ -n "$spid" ] && break
	sleep 0.05
done
[ -n "$spid" ] || { cat "$T/box.log" >&2; die "systemd did not start"; }

url=http://127.0.0.1:$PORT/healthz
serving() { curl -s -o /dev/null -m 0.5 -w '%{http_code}' "$url" 2>/dev/null | grep -q 200; }
now() { date +%s.%N; }
waitfor() { # waitfor SECONDS CMD...: poll every 20 ms
	local end
	end=$(echo "$(now) + $1" | bc)
	shift
	until "$@"; do
		(($(echo "$(now) > $end" | bc))) && return 1
		sleep 0.02
	done
}
waitfor 60 serving || { box journalctl -b --no-pager | tail -40 >&2; cat "$T/box.log" >&2; die "ews did not serve within 60 s"; }
echo "WATCHDOG unit $(box systemctl show -p WatchdogUSec ews) $(box systemctl show -p RestartUSec ews) $(box systemctl show -p NRestarts ews)"

helperpid() { [ -s "$T/state/helper.addr" ] && cut -d' ' -f1 "$T/state/helper.addr"; }
helperaddr() { cut -d' ' -f2 "$T/state/helper.addr"; }
newhelper() { # a helper other than $1 answers /readyz
	local p
	p=$(helperpid) || return 1
	[ -n "$p" ] && [ "$p" != "$1" ] && curl -s -o /dev/null -m 0.5 "http://$(helperaddr)/readyz"
}
waitfor 30 newhelper none || die "the helper did not come up"
for rep in $(seq "$REPS"); do
	old=$(helperpid)
	t0=$(now)
	curl -s -o /dev/null -m 1 "http://$(helperaddr)/kill" || true
	waitfor 30 newhelper "$old" || die "helper rep $rep: not back within 30 s"
	echo "WATCHDOG helper rep=$rep killed_to_ready_s=$(echo "$(now) - $t0" | bc -l | xargs printf '%.2f')"
	# a fresh backoff for the next kill: the supervisor resets it after 30 s up;
	# one kill per rep and a new stall (an ews restart) in between does that.
	mainpid=$(box systemctl show -p MainPID --value ews)
	t0=$(now)
	touch "$T/state/stall-watch"
	waitfor 5 test -e "$T/state/stall-watch.stalled" || die "stall rep $rep: the ewsfault hook did not fire (an ews built without -tags ewsfault?)"
	stalled=$(cat "$T/state/stall-watch.stalled")
	rm -f "$T/state/stall-watch.stalled"
	gone() { ! serving || [ "$(box systemctl show -p MainPID --value ews)" != "$mainpid" ]; }
	waitfor 300 gone || die "stall rep $rep: ews never restarted within 300 s"
	tgone=$(now)
	waitfor 120 serving || die "stall rep $rep: ews did not serve again"
	tback=$(now)
	sig=$(box journalctl -b -u ews --no-pager -o cat | grep -ci 'watchdog' || true)
	echo "WATCHDOG stall rep=$rep stall_to_serving_s=$(echo "$tback - $stalled / 1000000000" | bc -l | xargs printf '%.2f') stall_to_killed_s=$(echo "$tgone - $stalled / 1000000000" | bc -l | xargs printf '%.2f') killed_to_serving_s=$(echo "$tback - $tgone" | bc -l | xargs printf '%.2f') touch_to_stall_s=$(echo "$stalled / 1000000000 - $t0" | bc -l | xargs printf '%.2f') watchdog_lines=$sig"
	waitfor 30 newhelper none || die "the helper did not come up after the restart"
done
box journalctl -b -u ews --no-pager -o short-monotonic | grep -iE 'watchdog|probe|stall|Started|Stopped|restart' | tail -20 | sed 's/^/JOURNAL /'
