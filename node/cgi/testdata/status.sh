#!/bin/sh
# Sets its own status.
printf 'Status: 201 Created\r\nContent-Type: application/json\r\n\r\n{"made":true}\n'
