#!/bin/sh
# Forgets the CGI headers.
echo just text
