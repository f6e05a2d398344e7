#!/usr/bin/env bash
# Rebuilds third_party/ from the pinned upstream modules and the patches beside them.
# Each copy is upstream minus its tests, generators and benchmarks, plus <name>.patch.
# Why the copies exist: docs/NOTES.md, "Packaging and binary size".
# Usage: scripts/third-party.sh [DIR]: the copies go to DIR (default third_party/, the committed
# ones); e2e's TestThirdPartyRegenerates builds them into a temp dir and diffs.
set -euo pipefail
out=${1:-}
if [[ -n $out ]]; then out=$(realpath -m "$out"); fi
cd "$(dirname "$0")/.."
out=${out:-third_party}
mkdir -p "$out"

copy() { # module version name drop...
	local mod=$1 ver=$2 dest=$out/$3 patch=third_party/$3.patch; shift 3
	local src
	src=$(go mod download -json "$mod@$ver" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	rm -rf "$dest"
	cp -r "$src" "$dest"
	chmod -R u+w "$dest"
	find "$dest" -name '*_test.go' -delete
	local d
	# shellcheck disable=SC2086 # the glob in a name such as codec/*.tmpl must expand here
	for d in "$@"; do (cd "$dest" && rm -rf $d); done
	if [[ -f $patch ]]; then patch -s -p1 -d "$dest" <"$patch"; fi
	gofmt -w "$dest" # upstream is not always gofmt-clean (paho's backoff.go); ours must be
}

copy github.com/hashicorp/memberlist v0.7.0 memberlist \
	test Makefile tag.sh todo.md CONTRIBUTING.md SECURITY.md .copywrite.hcl .github .gitignore .golangci.yml go.sum
copy github.com/hashicorp/go-msgpack/v2 v2.1.5 go-msgpack go.sum \
	codec/bench codec/codecgen codec/codecgen.go codec/gen.go codec/gen.generated.go \
	codec/gen-internal.go codec/internal codec/test.py codec/build.sh 'codec/*.tmpl' .github .gitignore .go-version .golangci.yml
copy github.com/eclipse/paho.mqtt.golang v1.5.1 paho.mqtt.golang \
	cmd fvt go.sum CODE_OF_CONDUCT.md CONTRIBUTING.md SECURITY.md
