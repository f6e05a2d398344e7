package node

import (
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/cgi"
	"github.com/ews-firmware/ews/node/devapi"
	"github.com/ews-firmware/ews/node/devsync"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/events"
	"github.com/ews-firmware/ews/node/health"
	"github.com/ews-firmware/ews/node/history"
	"github.com/ews-firmware/ews/node/supervise"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/procload"
	"github.com/ews-firmware/ews/vip"
)

// system is the board's components as typed fields, each set once by
// build before anything runs and read where needed (the shape of
// tailscale's tsd.System). What depends on what reads top to bottom in
// build; what runs, and in which order, in Node.Run.
type system struct {
	boot    *boot // every package's options, from the boot config (configmap.go)
	reg     *promx.Registry
	metrics *metrics
	sec     security // TLS material and session secret from the bundle

	local   *local          // what the cluster hears of this board
	health  *health.Checker // [[health.process]] and [[health.check]]
	load    loadSource      // /proc (procload), or what [sim] implies on a simulated board
	sim     *simLoad        // nil on real hardware
	cluster *state.Cluster  // membership, table, election
	vip     *vip.Manager    // the cluster's virtual IP while master; nil without cluster.vip

	devs     *hal.Devices    // this board's devices
	auth     *auth.Auth      // credentials for control
	revoked  *revocations    // its logouts, kept in a file
	api      *devapi.API     // /api/devices
	cgi      *cgi.Handler    // /cgi-bin
	hub      *events.Hub     // /events: cluster table and every device
	localHub *events.Hub     // /events?scope=local: this board's devices, for the mirrors
	logHub   *events.Hub     // /events?scope=log
	mirror   *devsync.Mirror // other boards' devices, live; nil standalone
	hist     *history.Store  // this board's device history (devicehistory.go)

	front   *dispatch.Front       // queue, dispatch and forwarding of work
	master  *master               // the dispatcher while this board is master
	auto    *automation           // MQTT and [[rule]]s while master; nil without them
	helpers *supervise.Supervisor // [[supervise]] programs

	// issue 23: who is a board (boardstream.go, boardaddrs.go)
	marker      *dispatch.Marker // the front's marks; also signs this board's peer streams
	boardIPs    boardAddrs       // where boards connect from
	legacyPeers sync.Map         // boards of an older version let onto the peer stream, logged once each

	rt       probes        // boards' response times, probed by the master
	refusals refusals      // boards that refused forwarded credentials lately
	creds    atomic.Uint64 // fingerprint of this board's credentials, for its reports
	rollout  rolloutState  // POST /api/cluster/upgrade
	acct     *accounts     // issue 24: users store and audit log (accounts.go)
}

// build makes every component in the order they need each other and
// passes each what it needs. It opens no listener and starts no goroutine;
// what it opens (devices, hubs) is closed by n.life. Callbacks between
// components (a logout told on the local stream, a mirrored change on
// /events) are wired here, each in one line.
func (n *Node) build(b *boot) error {
	log := n.log
	s := &system{boot: b, reg: promx.NewRegistry()}
	n.system = s
	s.metrics = newMetrics(s.reg)
	var err error
	if s.sec, err = openSecurity(b, log); err != nil {
		return err
	}

	// what this board tells the cluster, and the cluster
	s.local = &local{n: n}
	s.health = health.New(b.health, log)
	sampler := procload.New()
	sampler.Logger = log // one warning per figure it cannot read
	s.load = sampler
	if b.sim != nil {
		s.sim = newSimLoad(*b.sim, s.local.InFlight, s.local.Completed)
		s.load = s.sim
	}
	sc := b.state
	sc.Identity = s.sec.identity // signed gossip (invariant 11)
	if s.cluster, err = state.New(sc, log, s.reg, s.local); err != nil {
		return err
	}
	if s.vip, err = openVIP(b.vip, s.reg, log); err != nil {
		return err
	}
	if s.vip != nil {
		n.life.onClose(s.vip.Close)
	}

	// Two hubs: /events is everything this board knows (cluster table,
	// every device); /events?scope=local only this board's own devices,
	// which the other boards mirror. A third streams the log.
	s.hub = events.New(events.Options{Logger: log, MaxClients: b.sseClients, MaxPerClient: ssePerClient(b.ssePerClient)})
	s.localHub = events.New(events.Options{Logger: log, MaxClients: peerStreams(len(b.state.Peers))}) // boards only (boardstream.go)
	s.logHub = openLogs(n.set.logs, &n.life)
	n.life.onClose(s.hub.Close)
	n.life.onClose(s.localHub.Close)

	// This board's devices. A pin that does not exist or is taken, or a
	// bus that cannot open, fails here with the device, pin and line.
	if s.devs, err = hal.New(b.hal, hal.Options{Registerer: s.reg, Logger: log, Poll: b.poll}); err != nil {
		return b.citeDevices(err)
	}
	devs := s.devs
	n.life.onClose(func() {
		if err := devs.Close(); err != nil {
			log.Warn("devices: close", "err", err)
		}
	})
	s.hist = n.openHistory() // their readings and changes, kept (devicehistory.go)
	// issue 24: users, roles, audit log (accounts.go)
	if err := n.openAccounts(); err != nil {
		return err
	}
	// Credentials; a logout here is told to the other boards on the local
	// stream they mirror, so the cookie is refused cluster-wide.
	if s.auth, err = auth.New(b.auth, auth.Options{Logger: log, SessionSecret: s.sec.session,
		OnRevoke: func(rv auth.Revocation) { s.localHub.Publish("revoke", rv); s.revoked.save(s.auth.Revoked()) },
		OnFail:   func(f auth.Failure) { s.localHub.Publish("authfail", f) }, // counted cluster-wide (devices.go)
		Users:    authUsers{s.acct.store}, SessionInfo: s.acct.sessionInfo,   // issue 24
	}); err != nil {
		return b.cite(b.authKey, err)
	}
	s.revoked = n.openRevocations(s.auth) // logouts kept across restarts (revocations.go)
	s.creds.Store(s.auth.Fingerprint(sc.Key))
	if b.auth.Mode == "none" {
		log.Warn("http auth is none: anyone who reaches this board can control its devices")
	}
	// The device API; a key taken here is told to the other boards the
	// same way, so it is known cluster-wide (at most once per cluster).
	s.api = devapi.New(devs, s.auth, devapi.Options{ReadAuth: b.readAuth, Logger: log, List: n.deviceList, Registerer: s.reg,
		OnClaim: func(c devapi.Claim) { s.localHub.Publish("idempotency", c) }})
	if s.cgi, err = cgi.New(b.cgi, cgi.Options{Devices: func() any { return n.deviceList() }, Logger: log, Node: b.state.Name, User: s.auth.User}); err != nil {
		return b.cite("cgi.user", err)
	}
	s.hub.Snapshot("cluster", func() any { return n.view() })
	s.hub.Snapshot("devices", func() any { return n.deviceList() })
	s.localHub.Snapshot("outputs", n.rememberedOutputs) // before "devices" (node/devsync/memory.go)
	s.localHub.Snapshot("devices", func() any { return devs.Local() })
	s.localHub.Snapshot("revoked", func() any { return s.auth.Revoked() })
	s.localHub.Snapshot("users", func() any { return s.acct.store.Sealed() }) // issue 24: the users store, sealed
	if !b.state.Standalone() {
		// Other boards' devices, live from their /events?scope=local; their
		// changes go out on our /events (never on localHub: no echo).
		s.mirror = devsync.New(b.state.Name, n.peerHTTP, devsync.Options{TLS: s.sec.client, Logger: log, Sign: n.signPeer,
			OnChange: func(d hal.Snapshot) { s.hub.Publish("device", d); s.auto.observe(d) },
			OnEvent:  n.remoteEvent})
	}

	if n.set.exe != "" {
		s.rollout.load(n.set.exe + ".rollout.json")
	}
	n.life.onClose(s.rollout.stop)

	// The front door: work enters the master's queue.
	if s.front, err = n.newFront(n.work()); err != nil {
		return err
	}
	n.life.onClose(s.front.Close)
	s.master = &master{n: n, front: s.front, vip: vipFollower{m: s.vip, up: -1}}
	mux := http.NewServeMux()
	n.routes(mux)
	n.handler = n.wrap(mux)

	// What runs while this board is master (its door is the handler
	// above), and the helper programs.
	if s.auto, err = newAutomation(b, log, n.actorDoor(), n.deviceList, s.cluster, s.sec.client); err != nil { // issue 24: rules as admin (rule:N), MQTT as [mqtt] user
		return err
	}
	s.helpers = supervise.New(b.helpers, log)
	return nil
}
