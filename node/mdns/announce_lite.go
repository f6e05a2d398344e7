//go:build lite

package mdns

import (
	"context"
	"log/slog"
	"net"
)

// The board is not announced in the lite build (docs/NOTES.md "The lite
// build"): `ews discover` does not list it, `ews status --url` reaches it.
// AnnounceOptions are the full build's (announce.go).

// AnnounceOptions are the full build's.
type AnnounceOptions struct {
	Name  string
	TLS   bool
	Peers []string
	Addr  net.Addr
	Role  func(set func(role string)) (cancel func())
	Log   *slog.Logger
}

// Announcer announces nothing.
type Announcer struct{}

// Announce says so and is nil.
func Announce(o AnnounceOptions) *Announcer {
	if o.Log != nil {
		o.Log.Info("mdns: not announcing: mDNS is not in the lite build")
	}
	return nil
}

// Run does nothing.
func (*Announcer) Run(context.Context) error { return nil }
