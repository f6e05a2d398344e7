// Package mdns announces a board over multicast DNS and DNS-SD (RFC 6762, RFC 6763) and finds the boards on the LAN.
package mdns

import (
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
)

// The service types a board announces, without the ".local." domain.
const (
	ServiceHTTP  = "_ews._tcp"       // a board serving plain HTTP
	ServiceHTTPS = "_ews-https._tcp" // a board serving HTTPS (TLS on)
)

// Port is the mDNS port (RFC 6762 §3).
const Port = 5353

// groupV4 is the IPv4 mDNS group.
var groupV4 = netip.MustParseAddr("224.0.0.251")

// TTLs of RFC 6762 §10: records that name a host (SRV, A, AAAA) live
// 120 s in caches, the others (PTR, TXT) 75 min; a legacy unicast
// querier (one not on port 5353) gets at most 10 s (§6.7).
const (
	hostTTL   = 120
	otherTTL  = 4500
	legacyTTL = 10
)

// Options says what a Responder announces. Name and Port are required.
type Options struct {
	Name    string // the board's name: the instance name and <Name>.local
	Port    int    // the TCP port of the board's HTTP (or, with TLS, HTTPS) listener
	TLS     bool   // announce _ews-https._tcp instead of _ews._tcp
	Cluster string // TXT cluster= (no version=: docs/NOTES.md "Discovery (mDNS)")
	Role    string // TXT role= at start ("master" or "follower"); SetRole changes it

	// Bind is the address the board's listener is bound to. Unset or a
	// wildcard: every multicast interface and all its addresses; a specific
	// address: only the interface that holds it, and only that address (a
	// board bound to loopback is reachable from no other host: nothing is
	// announced).
	Bind netip.Addr

	// ListenPort replaces 5353 (tests only: two responders in one test).
	ListenPort int
	Log        *slog.Logger // nil: slog.Default()
}

func (o *Options) check() error {
	if o.Name == "" {
		return fmt.Errorf("mdns: no board name")
	}
	if o.Port <= 0 || o.Port > 65535 {
		return fmt.Errorf("mdns: port %d out of range", o.Port)
	}
	if o.ListenPort == 0 {
		o.ListenPort = Port
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return nil
}

// label turns a board name into one DNS label: board names may hold dots
// and underscores, which a host label may not (and which dnsmessage
// would read as label separators).
func label(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '_' {
			return '-'
		}
		return r
	}, name)
}

// serviceName is the DNS-SD service name of a type: "_ews._tcp.local.".
func serviceName(typ string) string { return typ + ".local." }
