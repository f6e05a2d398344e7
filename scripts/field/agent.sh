#!/bin/bash
# The field test's guest agent (scripts/field.sh puts it on each board's
# card; not part of ews): runs the host's commands from a virtio serial port,
# so the test drives a board with no ssh and no login. One request a line,
# "ID COMMAND"; one answer a line, "EWSAGENT ID RC BASE64(OUTPUT)". Each
# command gets 120 s (timeout).
port=/dev/virtio-ports/ews.agent
while [ ! -e "$port" ]; do sleep 0.2; done
exec 3<>"$port"
while IFS= read -r -u 3 line; do
	id=${line%% *}
	cmd=${line#* }
	out=$(timeout 120 bash -c "$cmd" 2>&1 </dev/null)
	rc=$?
	printf 'EWSAGENT %s %s %s\n' "$id" "$rc" "$(printf '%s' "$out" | base64 -w0)" >&3
done
