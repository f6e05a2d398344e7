package node

import (
	"context"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/node/durable"
)

// openConfStore builds the configuration store on the durable state
// (docs/NOTES.md "Configuration store"); the log's watcher is set before
// the log runs. runDurable seeds it.
func (n *Node) openConfStore() error {
	st, err := confstore.New(confstore.Options{
		State: n.acc.durable.state,
		Check: bootconf.CheckStore(n.boot.StoreOwn),
		Path:  n.boot.StatePath("config.json"), // a board alone's log is memory only
		// every version, the seed included (another board's sections may
		// differ from this one's): applied live, compared with what runs
		OnChange: func(_, cur confstore.Version) {
			n.log.Info("config: new version", "version", cur.Number, "who", cur.Who, "note", cur.Note)
			n.acc.live.offer(cur)
		},
		Logger: n.log,
		Now:    n.boot.Clock.Now,
	})
	n.acc.conf = st
	n.acc.live = newConfigApplier(n)
	n.acc.durable.state.Guard(durable.KindConfig, confstore.Guard)
	if n.acc.durable.raft != nil && n.acc.acct != nil {
		// an admin signed it (docs/DESIGN.md, Trust); the first version is
		// the boards' own boot sections (seedConfig)
		n.acc.durable.state.Authorize(durable.KindConfig, confstore.Authorizer(n.acc.acct.store))
	}
	return err
}

// seedConfig puts this board's cluster-wide sections into the store when
// the log holds none, trying until it is done or ctx ends (the first
// board's commit wins; the others' are no-ops).
func (n *Node) seedConfig(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		err := n.acc.conf.Seed(ctx, n.boot.StoreSeed, n.boot.State.Name)
		if err == nil {
			return
		}
		n.log.Debug("config: seed the durable log: not yet", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// configRoutes mounts /api/config (admin only, audited): served by this
// board from its copy, written through the durable log.
func (n *Node) configRoutes(mux *http.ServeMux) {
	guard := func(h http.Handler) http.Handler { return n.audited(n.acc.auth.Require(h)) }
	n.acc.conf.Register(mux, guard, func(r *http.Request) (string, bool) {
		audit.Seen(r) // called behind the credential check: the audit log names the admin
		p := who(r)
		return p.Name, p.Admin()
	}, n.boot.RestartNeeded)
	mux.Handle("GET /api/config/status", guard(http.HandlerFunc(n.acc.live.serveStatus)))
	mux.Handle("GET /api/config/drivers", guard(http.HandlerFunc(serveDrivers))) // the Settings page's device forms
}
