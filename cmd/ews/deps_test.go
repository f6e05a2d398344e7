package main

import (
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestShippedDepsTrimmed (with the shipped binary's build tags, Makefile TAGS) keeps out of the board binary the packages trimmed away for its
// size (docs/NOTES.md, Packaging and binary size): each line names what brought the package in.
func TestShippedDepsTrimmed(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "nethttpomithttp2", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	linked := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		linked[p] = true
	}
	if !linked["github.com/hashicorp/memberlist"] {
		t.Fatalf("go list printed no memberlist; the check below would prove nothing:\n%s", out)
	}
	for pkg, why := range map[string]string{
		"github.com/miekg/dns":             "memberlist's TCP DNS lookup (third_party/memberlist.patch)",
		"net/rpc":                          "go-msgpack's RPC codec (third_party/go-msgpack.patch)",
		"text/template":                    "go-msgpack's generator, net/rpc's debug page",
		"go/format":                        "go-msgpack's generator",
		"google.golang.org/protobuf/proto": "client_golang (internal/promx replaced it)",
		"github.com/prometheus/client_golang/prometheus": "client_golang (internal/promx replaced it)",
		"debug/elf":                          "the firmware check (firmware reads the ELF header itself)",
		"github.com/hashicorp/go-sockaddr":   "memberlist's address guess and public-address warning (third_party/memberlist.patch, state/privateip.go)",
		"github.com/hashicorp/go-metrics":    "memberlist's metrics, which went to a blackhole sink (third_party/memberlist.patch)",
		"github.com/sean-/seed":              "memberlist's math/rand seeding, a no-op since Go 1.24 (third_party/memberlist.patch)",
		"github.com/gorilla/websocket":       "paho's websocket transport, which ews's own dialer never used (third_party/paho.mqtt.golang.patch)",
		"golang.org/x/net/proxy":             "paho's SOCKS proxy from the environment (third_party/paho.mqtt.golang.patch)",
		"github.com/jsimonetti/rtnetlink/v2": "the virtual IP's three netlink requests (vip/netlink_linux.go writes them)",
		"github.com/mdlayher/netlink":        "rtnetlink's netlink sockets (vip/netlink_linux.go)",
		"github.com/vmihailenco/msgpack/v5":  "state's messages (state/wire.go writes the same bytes by hand; the tests keep the library as the reference)",
		"go.yaml.in/yaml/v3":                 "docs/openapi.yaml (internal/openapi embeds it as JSON; its test converts it)",
		"github.com/pb33f/libopenapi":        "the OpenAPI document's check (internal/openapi's tests only)",
	} {
		if linked[pkg] {
			t.Errorf("the board binary links %s again: %s", pkg, why)
		}
	}
}

// TestThirdPartyPinned fails when go.mod moves memberlist, go-msgpack or paho to a version other than
// the one their trimmed copies in third_party/ were made from: rerun scripts/third-party.sh.
func TestThirdPartyPinned(t *testing.T) {
	gomod := testutil.ReadFile(t, "../../go.mod")
	script := testutil.ReadFile(t, "../../scripts/third-party.sh")
	for _, mod := range []string{"github.com/hashicorp/memberlist", "github.com/hashicorp/go-msgpack/v2", "github.com/eclipse/paho.mqtt.golang"} {
		q := regexp.QuoteMeta(mod)
		req := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + q + ` (v\S+)`).FindStringSubmatch(gomod)
		cp := regexp.MustCompile(`(?m)^copy ` + q + ` (v\S+) `).FindStringSubmatch(script)
		rep := regexp.MustCompile(`(?m)^replace ` + q + ` => \./third_party/`).MatchString(gomod)
		switch {
		case req == nil || cp == nil:
			t.Errorf("%s: go.mod requires %v, scripts/third-party.sh copies %v", mod, req, cp)
		case req[1] != cp[1]:
			t.Errorf("%s: go.mod requires %s but third_party/ was made from %s: rerun scripts/third-party.sh", mod, req[1], cp[1])
		case !rep:
			t.Errorf("%s: go.mod has no replace onto third_party/", mod)
		}
	}
}
