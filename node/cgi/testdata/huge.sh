#!/bin/sh
# Prints far more than max_output.
printf 'Content-Type: text/plain\r\n\r\n'
yes 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
