#!/usr/bin/env bash
# The project's one test command (`make test`; .ci/run calls it): format,
# vet, every Go test with the race detector, then the ARM smoke under qemu
# and the hardware-in-the-loop test under qemu-system.
# It installs the Debian packages tests need when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then
	echo "test: gofmt would change: $bad" >&2
	exit 1
fi
# Debian packages the tests use: shellcheck (scripts), iproute2 (partition
# test), chromium (browser tests), qemu-user-static (ARM cluster, ARM smoke),
# haproxy (the bench harness smoke runs it beside ews), mosquitto (the MQTT
# tests start a real broker), tcpdump (the TLS capture test), qemu-system-arm,
# cpio and device-tree-compiler (the HIL test boots Pi machines; it fetches
# Debian's arm64 and armmp kernels and busybox itself, once, into
# /var/cache/ews-hil).
bash scripts/deps.sh shellcheck iproute2:ip chromium qemu-user-static:qemu-arm-static haproxy mosquitto:/usr/sbin/mosquitto tcpdump qemu-system-arm:qemu-system-aarch64 cpio device-tree-compiler:fdtput
go vet ./...
go test -race -timeout 20m ./...
# Short fuzz runs of the parsers that read what the network or a damaged card
# hands them: the gossip decoder, the dispatch mark, mDNS packets and the
# history file (-fuzz takes one package).
# Budgets are execution counts (~5 s each here), not durations: a duration
# races Go 1.26's fuzz coordinator at its deadline and fails with "context
# deadline exceeded" and no crasher (golang/go#75804, fixed in Go 1.27).
go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 75000x ./state/
go test -run '^$' -fuzz '^FuzzMark$' -fuzztime 75000x ./node/dispatch/
go test -run '^$' -fuzz '^FuzzAnswer$' -fuzztime 50000x ./node/mdns/
go test -run '^$' -fuzz '^FuzzScan$' -fuzztime 20000x ./node/history/
# Browser tests (headless Chromium) run without -race: the browser, not Go,
# is what they exercise, and -race triples their time.
go test -tags browser -run Browser -timeout 10m ./webui/ ./e2e/
bash scripts/arm-smoke.sh
# Hardware in the loop: every ARM build on Debian's kernels on qemu's Pi 3
# and Pi 2 machines, side by side (~110 s once the kernels are cached).
bash scripts/hil.sh
# The field test's card builder, once `make field` has cached its board OS
# (/var/cache/ews-field): one card made with flash.sh, its files read back.
[ ! -e "${EWS_FIELD_CACHE:-/var/cache/ews-field}/.ok" ] || bash scripts/field/smoke.sh
echo "test: all passed"
