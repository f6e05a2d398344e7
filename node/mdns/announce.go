//go:build !lite

package mdns

import (
	"context"
	"log/slog"
	"net/netip"
)

// Options maps o onto what the responder announces: the board's name, the
// port it serves on, the cluster, and the address it is bound to.
func (o AnnounceOptions) Options() Options {
	r := Options{Name: o.Name, TLS: o.TLS, Cluster: o.Name, Log: o.Log}
	if o.Addr != nil {
		if ap, err := netip.ParseAddrPort(o.Addr.String()); err == nil {
			r.Port, r.Bind = int(ap.Port()), ap.Addr().Unmap()
		}
	}
	if len(o.Peers) > 0 {
		r.Cluster = o.Peers[0]
	}
	return r
}

// Announcer announces this board on the LAN while the board runs (a
// lifecycle component started after the listener, stopped first), its TXT
// role following the cluster's master. A failure to announce is logged,
// never fatal: the board serves anyway.
type Announcer struct {
	r *Responder
	o AnnounceOptions
}

// Announce is the board's announcer; nil when the responder cannot be
// built (logged).
func Announce(o AnnounceOptions) *Announcer {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	r, err := New(o.Options())
	if err != nil {
		o.Log.Warn("mdns: not announcing", "err", err)
		return nil
	}
	return &Announcer{r: r, o: o}
}

// Run announces until ctx ends and returns nil.
func (a *Announcer) Run(ctx context.Context) error {
	if a.o.Role != nil {
		defer a.o.Role(a.r.SetRole)()
	}
	if err := a.r.Run(ctx); err != nil {
		a.o.Log.Warn("mdns: not announcing", "err", err)
	}
	return nil // never fatal: the board serves without it
}
