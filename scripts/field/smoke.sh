#!/usr/bin/env bash
# Smoke of the field test's card builder (scripts/test.sh runs it only when
# `make field` has cached the board OS): one card made from the cache with
# scripts/flash.sh, then its two partitions read back without mounting
# (mtools, debugfs): the boot config on the FAT, ews, the unit, the
# sysusers/tmpfiles files and the board's bundle (0600) on the ext4 root.
# The host's own build stands in for the arm64 one: this checks where
# flash.sh puts things, not the arch (make field boots the real one).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=$PATH:/usr/local/go/bin:/usr/sbin:/sbin
CACHE=${EWS_FIELD_CACHE:-/var/cache/ews-field}
[ -e "$CACHE/.ok" ] || {
	echo "field-smoke: SKIP: no board OS cached in $CACHE (make field)"
	exit 0
}
tmp=$(mktemp -d /var/tmp/ews-field-smoke.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/dist"
CGO_ENABLED=0 go build -o "$tmp/dist/ews-linux-amd64" ./cmd/ews
cp "$tmp/dist/ews-linux-amd64" "$tmp/dist/ews-linux-arm64"
"$tmp/dist/ews-linux-amd64" cluster init --peers "ews1=10.77.0.11:7946,ews2=10.77.0.12:7946" --out "$tmp/admin.bundle" >/dev/null
bash scripts/field/image.sh --cache "$CACHE" --dist "$tmp/dist" --bundle "$tmp/admin.bundle" --name ews2 \
	--addr 10.77.0.12 --peers "ews1=10.77.0.11:7946,ews2=10.77.0.12:7946" --lean --out "$tmp/card.img" >/dev/null
img=$tmp/card.img
fail() {
	echo "field-smoke: FAIL: $*" >&2
	exit 1
}
boot=$(MTOOLS_SKIP_CHECK=1 mtype -i "$img@@1M" ::ews.toml) || fail "no ews.toml on the boot partition"
grep -q '^name   = "ews2"' <<<"$boot" || fail "boot config without name ews2"
grep -q 'bundle_file = "/etc/ews/cluster.bundle"' <<<"$boot" || fail "boot config without bundle_file"
off=$(sfdisk -d "$img" | sed -n 's/.*start= *\([0-9]*\),.*type=83.*/\1/p')
[ -n "$off" ] || fail "no Linux partition in the card's MBR"
root="$img?offset=$((off * 512))"
stat() { debugfs -R "stat $1" "$root" 2>/dev/null | sed -n 's/.*Type: \([a-z]*\) *Mode: *\([0-7]*\).*/\1 \2/p'; }
want() { # want PATH "TYPE MODE"
	[ "$(stat "$1")" = "$2" ] || fail "$1: '$(stat "$1")', want '$2'"
}
want /usr/bin/ews "regular 0755"
want /etc/systemd/system/ews.service "regular 0644"
want /etc/systemd/system/multi-user.target.wants/ews.service "symlink 0777"
want /etc/sysusers.d/ews.conf "regular 0644"
want /etc/tmpfiles.d/ews.conf "regular 0644"
want /etc/ews "directory 0700"
want /etc/ews/cluster.bundle "regular 0600"
# Read whole first: grep -q stops early, and under pipefail the writer's SIGPIPE would fail the check.
bundle=$(debugfs -R "cat /etc/ews/cluster.bundle" "$root" 2>/dev/null)
grep -q "^kind = 'board'" <<<"$bundle" || fail "the card's bundle is not a board bundle"
if grep -qE '^(ca_key|sign_key)' <<<"$bundle"; then fail "the card holds the CA or signing key"; fi
cmp -s <(debugfs -R "cat /usr/bin/ews" "$root" 2>/dev/null) "$tmp/dist/ews-linux-arm64" || fail "/usr/bin/ews is not the build"
echo "field-smoke: card built from $CACHE with flash.sh; boot config, ews, unit, users, bundle in place"
