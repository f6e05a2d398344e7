#!/usr/bin/env bash
# make verify: the long form of the proofs (docs/NOTES.md "Linearizability and the simulator").
# The election's simulator over EWS_SIM_SEEDS seeds (default 10,000), then the history checker:
# EWS_VERIFY_DURATION (default 5m) of nemesis against EWS_VERIFY_BOARDS (default 5) real boards
# (in network namespaces as root, so the nemesis partitions them),
# each store's history checked with porcupine. Prints the VERIFY lines; exits non-zero on any
# violation or non-linearizable history. Failing histories: $EWS_VERIFY_OUT (default /tmp).
set -u
cd "$(dirname "$0")/.." || exit 1
rc=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

EWS_SIM_SEEDS=${EWS_SIM_SEEDS:-10000} go test ./state/sim -run 'TestSim$' -count=1 -v -timeout 60m >"$log" 2>&1 || rc=1
grep -E '^VERIFY|seeds in|replay:' "$log"
[ "$rc" = 0 ] || tail -n 200 "$log"

# Partitions need network namespaces: root (the test says so and runs on
# loopback without them).
[ "$(id -u)" = 0 ] || echo "verify: not root: the history checker's partitions are skipped (the boards run on loopback)"
erc=0
EWS_VERIFY=1 go test ./e2e -run 'TestLinearizable$' -count=1 -v -timeout 60m >"$log" 2>&1 || erc=1
grep -E '^VERIFY|plan:|model [a-z]+:|operations \(|the page|partitions skipped|network namespaces|revocations:' "$log"
if [ "$erc" != 0 ]; then
	keep="${EWS_VERIFY_OUT:-/tmp}/ews-verify-$(date -u +%Y%m%dT%H%M%S).log"
	cp "$log" "$keep" && echo "verify: the history checker's whole log: $keep"
	tail -n 200 "$log"
	rc=1
fi
exit "$rc"
