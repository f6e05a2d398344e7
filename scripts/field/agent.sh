#!/bin/bash
# The field test's guest agent (scripts/field.sh puts it on each board's
# card; not part of ews): runs the host's commands from a virtio serial port,
# so the test drives a board with no ssh and no login. One request a line,
# "ID COMMAND"; one answer a line, "EWSAGENT ID RC BASE64(OUTPUT)". Each
# command gets 120 s (timeout).
# A read on the port returns end-of-file while no host end is connected
# (the driver connects only after the board serves, and reconnects after a
# timeout), so the agent reopens the port instead of exiting: exiting made
# systemd restart it every second until its start limit stopped it for
# good, and a rebooted board's agent never answered.
port=/dev/virtio-ports/ews.agent
while :; do
	while [ ! -e "$port" ]; do sleep 0.2; done
	exec 3<>"$port"
	while IFS= read -r -u 3 line; do
		id=${line%% *}
		cmd=${line#* }
		out=$(timeout 120 bash -c "$cmd" 2>&1 </dev/null)
		rc=$?
		printf 'EWSAGENT %s %s %s\n' "$id" "$rc" "$(printf '%s' "$out" | base64 -w0)" >&3
	done
	exec 3<&-
	sleep 0.5
done
