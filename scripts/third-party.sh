#!/usr/bin/env bash
# Rebuilds third_party/ from the pinned upstream modules and the patches beside them.
# Each copy is upstream minus its tests, generators and benchmarks, plus <name>.patch.
# Why the copies exist: docs/NOTES.md, "Packaging and binary size".
set -euo pipefail
cd "$(dirname "$0")/.."

copy() { # module version dest drop...
	local mod=$1 ver=$2 dest=$3; shift 3
	local src
	src=$(go mod download -json "$mod@$ver" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	rm -rf "$dest"
	cp -r "$src" "$dest"
	chmod -R u+w "$dest"
	find "$dest" -name '*_test.go' -delete
	local d
	# shellcheck disable=SC2086 # the glob in a name such as codec/*.tmpl must expand here
	for d in "$@"; do (cd "$dest" && rm -rf $d); done
	if [[ -f $dest.patch ]]; then patch -s -p1 -d "$dest" <"$dest.patch"; fi
}

copy github.com/hashicorp/memberlist v0.7.0 third_party/memberlist \
	test Makefile tag.sh todo.md CONTRIBUTING.md SECURITY.md .copywrite.hcl .github .gitignore .golangci.yml go.sum
copy github.com/hashicorp/go-msgpack/v2 v2.1.5 third_party/go-msgpack go.sum \
	codec/bench codec/codecgen codec/codecgen.go codec/gen.go codec/gen.generated.go \
	codec/gen-internal.go codec/internal codec/test.py codec/build.sh 'codec/*.tmpl' .github .gitignore .go-version .golangci.yml
