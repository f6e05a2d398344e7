#!/bin/busybox sh
# shellcheck shell=sh
# The HIL guest's /init (scripts/hil.sh builds the initramfs around it): on
# the real kernel of a Raspberry Pi machine under qemu-system it runs each
# ews build in /ews in turn, as the packaged unit does (user ews, groups
# gpio and i2c), and checks what ews does through the kernel's own view
# (debugfs, sysfs, the GPIO character device's line info) and ews's API.
# Output, one line each, for the host to parse:
#   HIL MODEL <the device tree's model>
#   HIL PASS <build>/<check>
#   HIL FAIL <build>/<check> <what was seen>
#   HIL TIME boot uptime_at_init_s=S
#   HIL TIME <build> start_to_ready_ms=N uptime_ready_s=S
#   HIL NOTE <build>: <what was seen, not checked>
#   HIL END
# The machine does not power off: the host stops qemu at "HIL END".
/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /tmp /run /var/lib/ews
ifconfig lo 127.0.0.1 up

echo "HIL TIME boot uptime_at_init_s=$(cut -d' ' -f1 /proc/uptime)"
echo "HIL MODEL $(tr -d '\0' </proc/device-tree/model)"
echo "HIL KERNEL $(uname -r) $(uname -m)"

DBG=/sys/kernel/debug/gpio
API=http://127.0.0.1:8080
A=setup

pass() { echo "HIL PASS $A/$1"; }
FAILS=0
fail() {
	FAILS=$((FAILS + 1))
	n=$1
	shift
	echo "HIL FAIL $A/$n $*"
}
# check NAME GOT WANT: pass when GOT contains WANT.
check() {
	case "$2" in
	*"$3"*) pass "$1" ;;
	*) fail "$1" "got '$2', want '$3'" ;;
	esac
}
# dbg N: the debugfs line of GPIO N; "|consumer ) out hi" while requested.
dbg() { grep "(GPIO$1 " $DBG | tr -s ' '; }
# base: the global number of the pinctrl-bcm2835 chip's line 0.
base() {
	for c in /sys/class/gpio/gpiochip*; do
		if [ "$(cat "$c/label")" = pinctrl-bcm2835 ]; then
			cat "$c/base"
			return
		fi
	done
}
# released N: "out hi" etc. of GPIO N after ews let it go, read through
# sysfs (which leaves the line as it is).
released() {
	g=$(($(base) + $1))
	echo "$g" >/sys/class/gpio/export 2>/dev/null
	d=$(cat "/sys/class/gpio/gpio$g/direction" 2>&1)
	v=$(cat "/sys/class/gpio/gpio$g/value" 2>&1)
	echo "$g" >/sys/class/gpio/unexport
	case "$v" in 1) v=hi ;; 0) v=lo ;; esac
	echo "$d $v"
}
post() { wget -q -O- --post-data '' "$API/api/devices/$1" 2>&1; }
get() { wget -q -O- "$API/$1" 2>&1; }
ms() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }

# The packaged unit's user and groups (packaging/ews.service, postinst), and
# what Raspberry Pi OS's udev rules give them: /dev/gpiochip* to group gpio,
# and the PWM class through the rule hal/README.md documents (pwm-rule.sh,
# run on each uevent as udev would).
cat >/etc/passwd <<'EOF'
root:x:0:0:root:/root:/bin/sh
ews:x:999:999:ews board firmware:/var/lib/ews:/usr/sbin/nologin
EOF
cat >/etc/group <<'EOF'
root:x:0:
gpio:x:997:ews
i2c:x:998:ews
ews:x:999:
EOF
mkdir -p /var/lib/ews/cgi-bin
chown 999:999 /var/lib/ews
chgrp gpio /dev/gpiochip*
chmod 0660 /dev/gpiochip*
uevent /bin/pwm-rule.sh >/dev/null 2>&1 &

A=kernel
for m in /lib/modules/*.ko; do
	if out=$(insmod "$m" 2>&1); then pass "insmod-$(basename "$m" .ko)"; else fail "insmod-$(basename "$m" .ko)" "$out"; fi
done
check pwmchip "$(ls /sys/class/pwm 2>&1)" pwmchip0
# the rule runs on the chip's uevent, on its own time (chgrp, then chmod).
# The listener started just above may not have bound its netlink socket
# when insmod sent the chip's "add" (CI under load lost it that way), so
# replay the event each second, as udev's coldplug (udevadm trigger) does
# at boot: the rule is idempotent. Wait for both (20 s).
i=0
while [ $i -lt 200 ] && [ "$(stat -L -c '%G %A' /sys/class/pwm/pwmchip0/export 2>&1)" != "gpio --w--w----" ]; do
	[ $((i % 10)) -eq 0 ] && echo add >/sys/class/pwm/pwmchip0/uevent 2>/dev/null
	usleep 100000
	i=$((i + 1))
done
check pwm-rule "$(stat -L -c '%G %A' /sys/class/pwm/pwmchip0/export 2>&1)" "gpio --w--w----"
check gpiochip "$(cat /sys/class/gpio/gpiochip*/label)" pinctrl-bcm2835

cat >/etc/ews.toml <<'EOF'
[node]
name  = "hil"
http  = "127.0.0.1:8080"
board = "host"

[http]
auth = "none"

[[device]]
name    = "relay1"
driver  = "gpio-out"
pin     = "GPIO17"
on_stop = "off"

[[device]]
name       = "lamp"
driver     = "gpio-out"
pin        = "GPIO27"
active_low = true
on_stop    = "off"

[[device]]
name   = "button"
driver = "gpio-in"
pin    = "GPIO22"
pull   = "up"

[[device]]
name   = "door"
driver = "gpio-in"
pin    = "GPIO23"
pull   = "down"

[[device]]
name      = "fan"
driver    = "pwm"
pin       = "PWM0"
frequency = "1kHz"
on_stop   = "off"
EOF

# Sensors this kernel has no bus for: no w1 overlay, no i2c_arm.
cat >/etc/ews-sensors.toml <<'EOF'
[node]
name  = "hil"
http  = "127.0.0.1:8080"
board = "host"

[http]
auth = "none"

[[device]]
name    = "probe"
driver  = "ds18b20"
bus     = "w1"
address = "28-0000070e41ac"

[[device]]
name    = "climate"
driver  = "bmxx80"
bus     = "1"
address = "0x76"
EOF

asews() { /bin/guest runas 999 999 997,998 "$@"; }

# run_build BIN: every check on one build.
run_build() {
	bin=$1
	A=$(basename "$(dirname "$bin")")
	fails0=$FAILS
	# each build starts as a freshly flashed board: what the build before
	# it saved (its outputs, restored at start with restore = "last") goes
	rm -f /var/lib/ews/outputs.json /var/lib/ews/revoked.json /var/lib/ews/users.json
	rm -rf /var/lib/ews/history
	check version "$(asews "$bin" version 2>&1)" "linux/"

	out=$(asews "$bin" config check /etc/ews.toml 2>&1)
	rc=$?
	check config-check "rc=$rc $out" "rc=0 /etc/ews.toml: ok"
	out=$(asews "$bin" config check /etc/ews-sensors.toml 2>&1)
	rc=$?
	check check-exit "rc=$rc" "rc=0"
	check check-w1 "$out" "dtoverlay=w1-gpio"
	check check-i2c "$out" "no /dev/i2c-1: add dtparam=i2c_arm=on"
	# as a user outside group gpio, the preflight names the group
	out=$(/bin/guest runas 999 999 - "$bin" config check /etc/ews.toml 2>&1)
	check check-group "$out" "run as a member of group gpio"

	t0=$(ms)
	# not through asews: $! must be ews itself (runas execs it)
	/bin/guest runas 999 999 997,998 "$bin" run --config /etc/ews.toml >"/tmp/ews-$A.log" 2>&1 &
	pid=$!
	ready=""
	i=0
	while [ $i -lt 600 ]; do # 60 s
		if get readyz >/dev/null; then
			ready=$(ms)
			break
		fi
		kill -0 $pid 2>/dev/null || break
		usleep 100000
		i=$((i + 1))
	done
	if [ -z "$ready" ]; then
		fail serving "not ready; log: $(tail -5 "/tmp/ews-$A.log" | tr '\n' '|')"
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		return
	fi
	pass serving
	echo "HIL TIME $A start_to_ready_ms=$((ready - t0)) uptime_ready_s=$(cut -d' ' -f1 /proc/uptime)"
	check run-as "$(grep -E '^(Uid|Groups)' "/proc/$pid/status" | tr -s '\t\n' '  ')" "Uid: 999 999 999 999 Groups: 997 998"

	# gpio-out: requested by ews as output, driven by the API
	check out-requested "$(dbg 17)" "|ews@$pid ) out lo"
	post relay1/turn_on >/dev/null
	check out-on "$(dbg 17)" "out hi"
	check out-state "$(get api/devices/relay1)" '"state":"on"'
	post relay1/turn_off >/dev/null
	check out-off "$(dbg 17)" "out lo"

	# active_low: on is a low line
	check lowactive-idle "$(dbg 27)" "out hi"
	post lamp/turn_on >/dev/null
	check lowactive-on "$(dbg 27)" "out lo"
	post lamp/turn_off >/dev/null
	check lowactive-off "$(dbg 27)" "out hi"

	# gpio-in: input with its bias, as the kernel recorded the request
	check in-pull-up "$(/bin/guest lineinfo GPIO22 2>&1)" "dir=in bias=pull-up"
	check in-pull-down "$(/bin/guest lineinfo GPIO23 2>&1)" "dir=in bias=pull-down"
	check in-consumer "$(dbg 22)" "|ews@$pid ) in"
	check in-read "$(post button/read)" '"name":"button"'

	# pwm: the kernel's PWM class, period and duty_cycle as written
	p=/sys/class/pwm/pwmchip0/pwm0
	check pwm-exported "$(ls $p 2>&1)" "duty_cycle"
	check pwm-period "$(cat $p/period 2>&1)" "1000000"
	post 'fan/set?value=25' >/dev/null
	check pwm-duty "$(cat $p/duty_cycle 2>&1) $(cat $p/enable 2>&1)" "250000 1"
	post 'fan/set?value=100' >/dev/null
	check pwm-full "$(cat $p/duty_cycle 2>&1)" "1000000"
	post fan/turn_off >/dev/null
	check pwm-off "$(cat $p/duty_cycle 2>&1)" "0"
	post 'fan/set?value=40' >/dev/null

	# on_stop on SIGTERM: relay1 on -> off (lo); lamp on (lo) -> off (hi)
	post relay1/turn_on >/dev/null
	post lamp/turn_on >/dev/null
	check stop-before "$(dbg 17)" "|ews@$pid ) out hi"
	check stop-before-lowactive "$(dbg 27)" "|ews@$pid ) out lo"
	kill -TERM $pid
	i=0
	while [ $i -lt 300 ] && kill -0 $pid 2>/dev/null; do # 30 s
		usleep 100000
		i=$((i + 1))
	done
	if kill -0 $pid 2>/dev/null; then
		fail sigterm-exit "still running 30 s after SIGTERM"
		kill -9 $pid
	else
		pass sigterm-exit
	fi
	wait $pid 2>/dev/null
	case "$(dbg 17)$(dbg 27)" in
	*"|"*) fail released "$(dbg 17) $(dbg 27)" ;;
	*) pass released ;;
	esac
	# This kernel's pinctrl-bcm2835 turns a released line into an input
	# (mainline before persist_gpio_outputs); qemu's level register keeps
	# the level last driven, which is what ews wrote at Close.
	# the line info first: it does not request the line, as sysfs does
	i17=$(/bin/guest lineinfo GPIO17 2>&1)
	s17=$(released 17)
	s27=$(released 27)
	echo "HIL NOTE $A: after exit GPIO17 is '$s17', GPIO27 is '$s27' (direction, last level); line info: $i17"
	check stop-off "$s17" " lo"
	check stop-off-lowactive "$s27" " hi"
	if [ -e $p ]; then fail pwm-unexported "$p still there"; else pass pwm-unexported; fi
	if [ $FAILS -ne "$fails0" ]; then sed "s/^/HIL LOG $A: /" "/tmp/ews-$A.log"; fi
}

for b in /ews/arm64/ews /ews/armv7/ews /ews/armv6/ews; do
	[ -x "$b" ] && run_build "$b"
done
A=end
echo "HIL TIME end uptime_s=$(cut -d' ' -f1 /proc/uptime)"
echo "HIL END"
# keep init alive until the host stops qemu
while :; do sleep 3600; done
