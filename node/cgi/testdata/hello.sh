#!/bin/sh
# Answers with what a CGI program sees: method, path info, query and devices.
printf 'Content-Type: text/plain\r\nX-Fixture: hello\r\n\r\n'
echo "method=$REQUEST_METHOD"
echo "script=$SCRIPT_NAME"
echo "path_info=$PATH_INFO"
echo "query=$QUERY_STRING"
echo "devices=$EWS_DEVICES"
