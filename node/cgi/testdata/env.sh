#!/bin/sh
# Answers with its whole environment, for the credential tests.
printf 'Content-Type: text/plain\r\n\r\n'
env
