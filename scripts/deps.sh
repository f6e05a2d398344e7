#!/usr/bin/env bash
# Installs the Debian packages the tests need, only those missing.
# Usage: scripts/deps.sh package[:command] ...   (command defaults to package)
set -euo pipefail
missing=()
for spec in "$@"; do
	pkg=${spec%%:*}
	cmd=${spec#*:}
	command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: need ${missing[*]}; run as root or install them: apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
