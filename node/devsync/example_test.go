package devsync_test

import (
	"context"
	"net/http"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/devsync"
	"github.com/ews-firmware/ews/node/events"
)

// How a node wires the mirror: its own devices on a local-only stream for
// the other boards, every board's devices, live, on the UI's stream.
func Example() {
	var (
		ctx   context.Context // the node's lifetime
		devs  *hal.Devices    // this board's devices
		peers func() []devsync.Peer
		mux   = http.NewServeMux()
	)
	hub := events.New(events.Options{})   // GET /events: what the UI reads
	local := events.New(events.Options{}) // GET /events?scope=local: what the other boards read
	m := devsync.New(devs.Self(), peers, devsync.Options{
		OnChange: func(s hal.Snapshot) { hub.Publish("device", s) },
	})
	hub.Snapshot("devices", func() any { return m.Merge(devs.List()) })
	local.Snapshot("devices", func() any { return devs.Local() })
	go devs.Watch(ctx, func(s hal.Snapshot) { hub.Publish("device", s); local.Publish("device", s) })
	go m.Run(ctx)
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("scope") == "local" {
			local.ServeHTTP(w, r)
			return
		}
		hub.ServeHTTP(w, r)
	})
}
