#!/usr/bin/env bash
# The project's test commands.
#   scripts/test.sh        (`make test`; .ci/run calls it) the full run: format,
#                          vet, every Go test with the race detector, fuzz,
#                          browser tests, the ARM smoke under qemu and the
#                          hardware-in-the-loop test under qemu-system. It
#                          installs the Debian packages tests need when missing.
#   scripts/test.sh check  (`make check`) the fast lane for a change to one
#                          package: format, vet, the unit tests of every package
#                          (all but ./e2e; no browser, no qemu), shuffled.
# Every step runs even when one before it failed, and the log ends with what
# broke: the failing steps, each failing test and the last lines of its
# output (cmd/testsummary reads `go test -json`; go test's own ok/FAIL lines
# are printed as they come).
# shellcheck disable=SC2317 # gojson and gofmt_check run through step "$@"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PATH=$PATH:/usr/local/go/bin
mode=${1:-full}
case $mode in
full | check) ;;
*)
	echo "usage: scripts/test.sh [check]" >&2
	exit 2
	;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=()
t0=$SECONDS

# step NAME COMMAND...: runs a step, its output also kept for the summary.
step() {
	local name=$1 start=$SECONDS
	shift
	echo "test: == $name"
	if "$@" 2>&1 | tee "$tmp/$name.log"; then
		echo "test: $name ok ($((SECONDS - start)) s)"
	else
		echo "test: $name FAILED ($((SECONDS - start)) s)"
		failed+=("$name")
	fi
}

# bgstep NAME COMMAND...: a step that runs beside the next ones (it waits
# on qemu, they on the network); its log is printed whole by join, never
# interleaved with theirs.
declare -A bg=()
bgstep() {
	local name=$1
	shift
	echo "test: == $name (in the background; its log follows when it ends)"
	(
		start=$SECONDS
		if "$@" >"$tmp/$name.log" 2>&1; then
			echo "test: $name ok ($((SECONDS - start)) s)" >>"$tmp/$name.log"
		else
			echo "test: $name FAILED ($((SECONDS - start)) s)" >>"$tmp/$name.log"
			exit 1
		fi
	) &
	bg[$name]=$!
}

join() {
	local name=$1
	if wait "${bg[$name]}"; then :; else failed+=("$name"); fi
	echo "test: == $name (ran in the background)"
	cat "$tmp/$name.log"
}

# gotest NAME ARGS...: `go test -json ARGS` shown as plain go test output;
# the JSON is kept for the summary (EWS_TEST_JSON=DIR keeps a copy, for
# `go run ./cmd/testsummary -slowest 20 DIR/*.json`).
gotest() {
	local name=$1
	shift
	step "$name" gojson "$tmp/$name.json" "$@"
	if [ -n "${EWS_TEST_JSON:-}" ]; then
		mkdir -p "$EWS_TEST_JSON" && cp "$tmp/$name.json" "$EWS_TEST_JSON/"
	fi
}

gojson() {
	local out=$1
	shift
	go test -json "$@" 2>&1 | tee "$out" | "$tmp/testsummary" -plain
}

gofmt_check() {
	local bad
	bad=$({ git ls-files -z '*.go' 2>/dev/null || find . -name '*.go' -print0; } | xargs -0 gofmt -l)
	if [ -n "$bad" ]; then
		echo "test: gofmt would change: $bad"
		return 1
	fi
}

# -trimpath on every go command that compiles the module (vet, the tests,
# fuzz): without it the build cache keys each of the module's packages by
# its directory, so a clean clone at a new path compiled all of them again,
# with -race, and vetted them again, on a warm machine (issue 49 part 4).
# The e2e tests' ews binaries were built with it already. The go test
# steps after vet pass -vet=off: go vet ./... checked the same packages and
# their tests (with more analyzers than go test's own vet), all but the
# browser-tagged files, so the browser step keeps go test's vet.
step gofmt gofmt_check
step vet go vet -trimpath ./...
go build -o "$tmp/testsummary" ./cmd/testsummary || failed+=(testsummary-build)
unit=$(go list ./... | grep -v '/e2e$')

if [ "$mode" = check ]; then
	# Without -race: with it the unit tests take ~3x as long, past the lane's
	# 2 minutes on 2 cores; `make test` runs them with it.
	echo "test: check runs the unit tests without -race (make test runs them with it)"
	# shellcheck disable=SC2086 # $unit is a list of packages
	gotest unit -trimpath -vet=off -shuffle=on -timeout 10m $unit
else
	# Debian packages the tests use: shellcheck (scripts), iproute2 (partition
	# test), curl (the guides' runnable blocks, e2e TestGuidesRun), chromium
	# (browser tests), libnss3-tools (certutil: the journey
	# test's browser trusts the cluster CA from its NSS database), qemu-user-static (ARM cluster, ARM
	# smoke), haproxy (the bench harness smoke runs it beside ews), mosquitto
	# (the MQTT tests start a real broker), tcpdump (the TLS capture test),
	# qemu-system-arm, cpio and device-tree-compiler (the HIL test boots Pi
	# machines; it fetches Debian's arm64 and armmp kernels and busybox
	# itself, once, into /var/cache/ews-hil), prometheus (its promtool checks
	# the alert rules in packaging/prometheus).
	step deps bash scripts/deps.sh shellcheck iproute2:ip curl chromium libnss3-tools:certutil qemu-user-static:qemu-arm-static haproxy mosquitto:/usr/sbin/mosquitto tcpdump qemu-system-arm:qemu-system-aarch64 cpio device-tree-compiler:fdtput prometheus:promtool
	# The shipped alert rules: promtool's syntax check and their unit tests
	# (packaging/prometheus/ews-alerts.test.yml), a second or two.
	step promtool bash scripts/promtool.sh
	# The ARM smoke and the hardware-in-the-loop test (every ARM build on
	# Debian's kernels on qemu's Pi 3 and Pi 2 machines, ~110 s once the
	# kernels are cached) run beside the Go tests: those mostly wait on
	# boards and the network, and pass under two busy loops (make flakes).
	bgstep arm-smoke bash scripts/arm-smoke.sh
	# The lite armv5 build (make dist's ews-lite-linux-armv5): its size, and
	# three of it as one cluster under qemu's PXA255 toggling a device (~30 s).
	bgstep arm-smoke-lite bash scripts/arm-smoke-lite.sh
	bgstep hil bash scripts/hil.sh
	# internal/debpkg (the .deb builder) starts no goroutine, nor does the
	# nfpm path it takes: its tests run without -race, on the objects vet
	# compiled, instead of compiling nfpm's ~180 packages (go-git, OpenPGP,
	# ...) again with -race for this one package and scripts/pkg, its one
	# user, which has no tests (vet checks it) (issue 49 part 4).
	gotest debpkg -trimpath -vet=off -shuffle=on -timeout 10m ./internal/debpkg/
	# -parallel 4: e2e's parallel tests wait on their boards, not the CPU
	# (no unit test calls t.Parallel). -p 4: four test binaries at once (go
	# test's default is one per core, 2 here), since most of their time is
	# spent waiting on timers, boards and the network, not on the CPU. The
	# longest packages are listed first, e2e then state, so go test builds
	# and starts them first: e2e alone is ~3/4 of the step's wall time, and
	# listed in import-path order it started after the cmd/ packages.
	# shellcheck disable=SC2046 # a list of packages
	gotest race -trimpath -vet=off -race -shuffle=on -p 4 -parallel 4 -timeout 20m ./e2e/ ./state/ $(go list ./... | grep -v -e '/e2e$' -e '/state$' -e '/internal/debpkg$' -e '/scripts/pkg$')
	# Short fuzz runs of the parsers that read what the network or a damaged
	# card hands them: the gossip decoder, the dispatch mark, mDNS packets and
	# the history file (-fuzz takes one package).
	# Budgets are execution counts (~5 s each here), not durations: a duration
	# races Go 1.26's fuzz coordinator at its deadline and fails with "context
	# deadline exceeded" and no crasher (golang/go#75804, fixed in Go 1.27).
	step fuzz-state go test -trimpath -vet=off -run '^$' -fuzz '^FuzzDecode$' -fuzztime 75000x ./state/
	step fuzz-dispatch go test -trimpath -vet=off -run '^$' -fuzz '^FuzzMark$' -fuzztime 75000x ./node/dispatch/
	step fuzz-mdns go test -trimpath -vet=off -run '^$' -fuzz '^FuzzAnswer$' -fuzztime 50000x ./node/mdns/
	step fuzz-history go test -trimpath -vet=off -run '^$' -fuzz '^FuzzScan$' -fuzztime 20000x ./node/history/
	# Browser tests (headless Chromium) run without -race: the browser, not
	# Go, is what they exercise, and -race triples their time.
	# -count=1: go test would otherwise replay a passing result when the
	# test files are unchanged, but e2e's tests run an ews binary they build
	# themselves, which go test's result cache does not see (with -trimpath a
	# result would carry over from another clone).
	gotest browser -trimpath -count=1 -tags browser -run Browser -timeout 10m ./webui/ ./e2e/ ./internal/testkit/testbrowser/
	# The field test's card builder, once `make field` has cached its board
	# OS (/var/cache/ews-field): one card made with flash.sh, its files read
	# back; it says SKIP without the cache.
	step field-smoke bash scripts/field/smoke.sh
	join arm-smoke
	join arm-smoke-lite
	join hil
fi

echo "test: $mode run took $((SECONDS - t0)) s"
if [ ${#failed[@]} -eq 0 ]; then
	echo "test: all passed"
	exit 0
fi
# The end of the log says what broke: go test's failures, then the tail of
# every other failing step.
echo
echo "test: FAILED: ${failed[*]}"
for name in "${failed[@]}"; do
	if [ -f "$tmp/$name.json" ]; then
		"$tmp/testsummary" "$tmp/$name.json"
	elif [ -f "$tmp/$name.log" ]; then
		echo
		echo "--- step $name, last lines:"
		tail -n 20 "$tmp/$name.log" | sed 's/^/    /'
	fi
done
echo
echo "test: FAILED: ${failed[*]}"
exit 1
