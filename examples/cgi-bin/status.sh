#!/bin/sh
# A CGI program for the ews demo: reports the board's devices as a tiny page.
# ews gives every CGI program the device list as JSON in EWS_DEVICES.
printf 'Content-Type: text/plain; charset=utf-8\r\n\r\n'
echo "ews demo board, served by $SERVER_SOFTWARE"
echo "request: $REQUEST_METHOD $SCRIPT_NAME$PATH_INFO"
echo "devices:"
printf '%s\n' "$EWS_DEVICES" | tr '{' '\n' | sed -n 's/.*"name":"\([^"]*\)".*"state":"\([^"]*\)".*/  \1: \2/p'
