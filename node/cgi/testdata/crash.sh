#!/bin/sh
# Dies half way through its answer.
printf 'Content-Type: text/plain\r\n\r\npartial'
echo "sensor bus gone" >&2
exit 3
