#!/bin/sh
# The HIL guest's stand-in for udev: busybox `uevent` runs it on each kernel
# uevent, with udev's environment (SUBSYSTEM, DEVPATH), and for the PWM
# class it does what the rule in hal/README.md ("On a Pi") does:
#   SUBSYSTEM=="pwm*", PROGRAM="/bin/sh -c 'chgrp -R gpio /sys%p && chmod -R g=u /sys%p'"
# so the test shows that this rule lets group gpio drive a channel ews
# exports. The chip's own directory, not /sys/class/pwm: that holds only
# symlinks, which chgrp -R does not follow. Exporting a channel is a
# "change" event of the chip, so the new pwmN directory is covered too.
case "$SUBSYSTEM" in
pwm*) chgrp -R gpio "/sys$DEVPATH" && chmod -R g=u "/sys$DEVPATH" ;;
esac
