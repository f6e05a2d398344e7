#!/usr/bin/env bash
# The project's one test command (`make test`; .ci/run calls it): format,
# vet, every Go test with the race detector, then the ARM smoke under qemu.
# It installs the Debian packages tests need when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then
	echo "test: gofmt would change: $bad" >&2
	exit 1
fi
go vet ./...
go test -race -timeout 20m ./...
bash scripts/arm-smoke.sh
echo "test: all passed"
