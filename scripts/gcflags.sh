#!/usr/bin/env bash
# The compiler flags of the shipped builds (docs/NOTES.md "Packaging and
# binary size", inlining): prints -gcflags arguments for `go build`.
#   scripts/gcflags.sh full|lite
# full: no inlining (-l) in the packages a board runs rarely (start, config,
# the admin's commands, the durable log and its store, drivers, backups,
# certificate parsing, formatting, logging, JSON...), inlining kept on the
# request and gossip path: the standard library's runtime, net, net/http and
# crypto, the state, queue and dispatch packages and the metrics. A package
# not named here gets -l, so a new one costs no inlined copies until it is
# put on the path. lite: no inlining anywhere (docs/NOTES.md "The lite
# build").
set -euo pipefail
m=github.com/ews-firmware/ews
case "${1:-}" in
lite)
	echo "-gcflags=all=-l"
	exit 0
	;;
full) ;;
*)
	echo "usage: scripts/gcflags.sh full|lite" >&2
	exit 2
	;;
esac
# inlining kept: the request and gossip path (the standard library, the
# state, queue and dispatch packages, the metrics they update, the gossip and
# its codec). node itself is wiring and handlers around them: -l.
hot=(std "$m/state/..." "$m/sched/..." "$m/node/dispatch/..." "$m/internal/httpx"
	"$m/internal/promx" github.com/VictoriaMetrics/metrics github.com/hashicorp/memberlist
	"github.com/hashicorp/go-msgpack/...")
# ...but not in the standard library's cold parts: certificate and ASN.1
# parsing, the handshake's byte strings and its signature and key-exchange
# layers (once per connection or gossip introduction; records, ciphers, MACs
# and the curves' field arithmetic stay inlined), DNS messages, formatting, logging, the API's JSON
# (answers of a few hundred bytes; the forward copies bodies), archives,
# regexps, templates, the command line, Unicode and IDNA tables
cold_std=("crypto/x509/..." encoding/asn1 encoding/pem math/big fmt log/slog encoding/json
	"archive/..." "compress/..."
	"regexp/..." "text/..." flag os/user os/exec "mime/..." encoding/csv unicode "go/..." log
	embed "html/..." "vendor/golang.org/x/text/..." vendor/golang.org/x/net/idna
	"vendor/golang.org/x/net/dns/..." "vendor/golang.org/x/crypto/cryptobyte/..." net/mail
	crypto/rsa crypto/ecdsa crypto/elliptic crypto/ed25519 crypto/hpke crypto/internal/fips140/rsa
	crypto/internal/fips140/ecdsa crypto/internal/fips140/ed25519 crypto/internal/fips140/bigmod
	crypto/internal/fips140/mlkem)
flags=(-gcflags=all=-l)
for p in "${hot[@]}"; do flags+=("-gcflags=$p="); done
for p in "${cold_std[@]}"; do flags+=("-gcflags=$p=-l"); done
echo "${flags[@]}"
