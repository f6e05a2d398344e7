package node

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/cgi"
	"github.com/ews-firmware/ews/node/devapi"
	"github.com/ews-firmware/ews/node/devsync"
	"github.com/ews-firmware/ews/node/events"
	"github.com/ews-firmware/ews/state"
)

// openDevices opens this board's devices, credentials and event hubs. A pin
// that does not exist or is taken, or a bus that cannot open, fails here
// with the device, pin and line.
func (n *Node) openDevices() error {
	devs, err := hal.New(n.cfg.HAL(), hal.Options{Registerer: n.reg, Logger: n.log, Poll: 5 * time.Second})
	if err != nil {
		return n.cfg.DeviceErrors(err)
	}
	n.devs = devs
	n.onClose(func() {
		if err := devs.Close(); err != nil {
			n.log.Warn("devices: close", "err", err)
		}
	})
	if err := n.openAccounts(); err != nil { // issue 24
		return err
	}
	authn, err := auth.New(n.cfg.HTTP, auth.Options{Logger: n.log, SessionSecret: n.sec.session,
		Users: authUsers{n.acct.store}, SessionInfo: n.acct.sessionInfo, // issue 24
		// a logout here is told to the other boards on the local stream
		// they mirror, so the cookie is refused cluster-wide
		OnRevoke: func(rv auth.Revocation) { n.localHub.Publish("revoke", rv) },
	})
	if err != nil {
		key := "http.users"
		if n.cfg.HTTP.Auth == "token" {
			key = "http.token_file"
			if n.cfg.HTTP.Token != "" {
				key = "http.token"
			}
		}
		return config.Errors{n.cfg.Errorf(key, "%v", err)}
	}
	n.auth = authn
	n.api = devapi.New(n.cfg, devs, authn, devapi.Options{Logger: n.log, List: n.deviceList, Registerer: n.reg,
		// a key taken here is told to the other boards on the local stream
		// they mirror, so it is known cluster-wide (at most once per cluster)
		OnClaim: func(c devapi.Claim) { n.localHub.Publish("idempotency", c) },
	})
	n.cgi = cgi.New(n.cfg.CGI, cgi.Options{Devices: func() any { return n.deviceList() }, Logger: n.log, Node: n.cfg.Node.Name, User: authn.User})

	// Two hubs: /events is everything this board knows (cluster table,
	// every device); /events?scope=local only this board's own devices,
	// which the other boards mirror.
	n.hub = events.New(events.Options{Logger: n.log, MaxClients: n.cfg.HTTP.SSEClients})
	n.localHub = events.New(events.Options{Logger: n.log})
	n.hub.Snapshot("cluster", func() any { return n.view() })
	n.hub.Snapshot("devices", func() any { return n.deviceList() })
	n.localHub.Snapshot("devices", func() any { return devs.Local() })
	n.localHub.Snapshot("revoked", func() any { return n.auth.Revoked() })
	n.localHub.Snapshot("users", func() any { return n.acct.store.Sealed() }) // issue 24: the users store, sealed
	n.onClose(n.hub.Close)
	n.onClose(n.localHub.Close)
	if !n.cfg.Standalone() {
		// Other boards' devices, live from their /events?scope=local; their
		// changes go out on our /events (never on localHub: no echo).
		n.mirror = devsync.New(n.cfg.Node.Name, n.peerHTTP, devsync.Options{
			TLS:      n.sec.client,
			Logger:   n.log,
			OnChange: func(s hal.Snapshot) { n.hub.Publish("device", s); n.auto.observe(s) },
			OnEvent:  n.remoteEvent,
		})
	}
	return nil
}

// peerHTTP is every board's HTTP address as the table knows it.
func (n *Node) peerHTTP() []devsync.Peer {
	boards := n.cluster.Boards()
	out := make([]devsync.Peer, 0, len(boards))
	for _, b := range boards {
		out = append(out, devsync.Peer{Name: b.Name, HTTP: b.HTTP})
	}
	return out
}

// deviceList is every device of the cluster with the freshest state this
// board has: its own live, the others' as mirrored.
func (n *Node) deviceList() []hal.Snapshot {
	list := n.devs.List()
	if n.mirror != nil {
		return n.mirror.Merge(list)
	}
	return list
}

// publishLoops feeds the hubs until ctx ends: device changes of this board,
// and the cluster table with takeovers.
func (n *Node) publishLoops(ctx context.Context) {
	if n.mirror != nil {
		n.wg.Add(1)
		go func() { defer n.wg.Done(); n.mirror.Run(ctx) }()
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.devs.Watch(ctx, func(s hal.Snapshot) {
			n.hub.Publish("device", s)
			n.localHub.Publish("device", s)
			n.auto.observe(s)
		})
	}()
	var prev string
	var prevEpoch uint64
	tables := events.NewCoalescer(n.hub, "cluster", viewKey, events.CoalesceOptions{})
	cancel := n.cluster.OnChange(func(v state.View) {
		n.master.follow(v)
		n.auto.poke()
		tables.Offer(n.refusals.mark(v, time.Now()))
		if v.Master != "" && (v.Master != prev || v.Epoch != prevEpoch) {
			if prev != "" {
				n.hub.Publish("takeover", map[string]any{"epoch": v.Epoch, "master": v.Master, "previous": prev})
				n.log.Info("new master", "master", v.Master, "epoch", v.Epoch, "previous", prev)
			}
			prev, prevEpoch = v.Master, v.Epoch
		}
	})
	context.AfterFunc(ctx, func() { cancel(); tables.Close() })
}

// remoteEvent takes the other events of a board's local stream: its
// Idempotency-Key claims and its logouts.
func (n *Node) remoteEvent(board, event string, data []byte) {
	switch event {
	case "revoke", "revoked":
		n.remoteRevoke(board, event, data)
		return
	case "users": // issue 24
		n.remoteUsers(board, data)
		return
	case "idempotency":
	default:
		return
	}
	var c devapi.Claim
	if err := json.Unmarshal(data, &c); err != nil {
		n.log.Warn("devsync: bad idempotency claim", "board", board, "err", err)
		return
	}
	c.Board = board
	n.api.Remember(c)
}

// remoteRevoke takes a logout ("revoke") or, on connect, every logout
// ("revoked") a board holds.
func (n *Node) remoteRevoke(board, event string, data []byte) {
	var list []auth.Revocation
	var err error
	if event == "revoke" {
		var rv auth.Revocation
		err = json.Unmarshal(data, &rv)
		list = append(list, rv)
	} else {
		err = json.Unmarshal(data, &list)
	}
	if err != nil {
		n.log.Warn("devsync: bad session revocation", "board", board, "err", err)
		return
	}
	for _, rv := range list {
		n.auth.Revoke(rv)
	}
}
