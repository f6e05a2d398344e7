#!/usr/bin/env bash
# The flake hunter (`make flakes`): runs the Go tests N times with
# -count=1 -shuffle=on -race under two busy loops (`yes >/dev/null` x2, the
# loaded machine flakes show up on), from a clean clone of this checkout's
# HEAD (what is committed, in a temp dir: nothing cached in the tree helps),
# then prints each test that failed, in how many runs, and the shuffle seed
# of each failing run (rerun one: go test -run NAME -shuffle SEED PKG).
# The flags are make test's (scripts/test.sh), so what fails here fails there.
# Usage: scripts/flakes.sh [-n RUNS] [-p PARALLEL] [unit|e2e|all|PACKAGE...]
#   unit (default): every package but ./e2e; e2e: ./e2e alone.
# The runs' `go test -json` files stay in the directory it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
runs=3 par=""
while getopts "n:p:" o; do
	case $o in
	n) runs=$OPTARG ;;
	p) par="-p $OPTARG" ;;
	*)
		echo "usage: scripts/flakes.sh [-n RUNS] [-p PARALLEL] [unit|e2e|all|PACKAGE...]" >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] && set -- unit

out=$(mktemp -d /tmp/ews-flakes.XXXXXX)
clone=$out/clone
busy=()
cleanup() {
	for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$clone"
}
trap cleanup EXIT
sha=$(git rev-parse HEAD)
git clone -q "$(git rev-parse --show-toplevel)" "$clone"
git -C "$clone" checkout -q "$sha"
cd "$clone"
case $1 in
unit) pkgs=$(go list ./... | grep -v '/e2e$') ;;
e2e) pkgs=./e2e/ ;;
all) pkgs=./... ;;
*) pkgs=$* ;;
esac
go build -o "$out/testsummary" ./cmd/testsummary
echo "flakes: $runs runs of $* at $(git rev-parse --short HEAD) under two busy loops; results in $out"
yes >/dev/null &
busy+=($!)
yes >/dev/null &
busy+=($!)
for i in $(seq 1 "$runs"); do
	start=$SECONDS
	# shellcheck disable=SC2086 # $pkgs and $par are lists
	go test -json -trimpath -count=1 -shuffle=on -race -parallel 4 -timeout 30m $par $pkgs >"$out/run-$i.json" 2>&1 || true
	bad=$("$out/testsummary" -flakes "$out/run-$i.json" | sed -n 's/^| \(.*\) | 1\/1 | .*/\1/p' | tr '\n' ';')
	echo "flakes: run $i/$runs: $((SECONDS - start)) s, failed: ${bad:-nothing}"
done
"$out/testsummary" -flakes "$out"/run-*.json
