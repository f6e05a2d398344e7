#!/bin/sh
# Not executable on purpose (mode 0644).
printf 'Content-Type: text/plain\r\n\r\nshould not run\n'
