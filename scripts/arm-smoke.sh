#!/usr/bin/env bash
# ARM smoke: builds the board binaries and runs `ews version` and
# `ews config check` on each under qemu-user-static, checking GOARCH/GOARM.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh qemu-user-static:qemu-arm-static
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ldflags="-s -w -X github.com/ews-firmware/ews/internal/buildinfo.Version=smoke"
GOOS=linux GOARCH=arm GOARM=6 CGO_ENABLED=0 go build -trimpath -tags nethttpomithttp2 -ldflags "$ldflags" -o "$out/ews-armv6" ./cmd/ews
GOOS=linux GOARCH=arm GOARM=7 CGO_ENABLED=0 go build -trimpath -tags nethttpomithttp2 -ldflags "$ldflags" -o "$out/ews-armv7" ./cmd/ews
GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -trimpath -tags nethttpomithttp2 -ldflags "$ldflags" -o "$out/ews-arm64" ./cmd/ews

check() { # binary qemu expected-arch-text
	local bin=$1 qemu=$2 want=$3 v
	v=$("$qemu" "$bin" version)
	case "$v" in
	*"$want"*) ;;
	*) echo "arm-smoke: $(basename "$bin"): version says '$v', want '$want'" >&2; exit 1 ;;
	esac
	"$qemu" "$bin" config init >"$out/ews.toml"
	"$qemu" "$bin" config check "$out/ews.toml" >/dev/null
	echo "arm-smoke: $(basename "$bin") ok: $v"
}
check "$out/ews-armv6" qemu-arm-static "linux/arm GOARM=6"
check "$out/ews-armv7" qemu-arm-static "linux/arm GOARM=7"
check "$out/ews-arm64" qemu-aarch64-static "linux/arm64"
