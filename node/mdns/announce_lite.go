//go:build lite

package mdns

import (
	"context"
)

// The board is not announced in the lite build (docs/NOTES.md "The lite
// build"): `ews discover` does not list it, `ews status --url` reaches it.
// AnnounceOptions are the full build's (announce.go).

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
