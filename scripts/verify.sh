#!/usr/bin/env bash
# make verify: the long form of the proofs (docs/NOTES.md "Linearizability and the simulator").
# The election's simulator over EWS_SIM_SEEDS seeds (default 10,000), then the history checker:
# EWS_VERIFY_DURATION (default 5m) of nemesis against EWS_VERIFY_BOARDS (default 5) real boards,
# each store's history checked with porcupine. Prints the VERIFY lines; exits non-zero on any
# violation or non-linearizable history. Failing histories: $EWS_VERIFY_OUT (default /tmp).
set -u
cd "$(dirname "$0")/.."
rc=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

EWS_SIM_SEEDS=${EWS_SIM_SEEDS:-10000} go test ./state/sim -run 'TestSim$' -count=1 -v -timeout 60m >"$log" 2>&1 || rc=1
grep -E '^VERIFY|seeds in|replay:' "$log"
[ "$rc" = 0 ] || tail -n 200 "$log"

erc=0
EWS_VERIFY=1 go test ./e2e -run 'TestLinearizable$' -count=1 -v -timeout 60m >"$log" 2>&1 || erc=1
grep -E '^VERIFY|plan:|model [a-z]+:|operations \(|the page' "$log"
[ "$erc" = 0 ] || { tail -n 200 "$log"; rc=1; }
exit "$rc"
