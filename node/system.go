package node

import (
	"net/http"
	"sync/atomic"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/automation"
	"github.com/ews-firmware/ews/node/boardrevoke"
	"github.com/ews-firmware/ews/node/cgi"
	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/node/devapi"
	"github.com/ews-firmware/ews/node/devsync"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/events"
	"github.com/ews-firmware/ews/node/firmware"
	"github.com/ews-firmware/ews/node/health"
	"github.com/ews-firmware/ews/node/history"
	"github.com/ews-firmware/ews/node/restore"
	"github.com/ews-firmware/ews/node/rollout"
	"github.com/ews-firmware/ews/node/rotate"
	"github.com/ews-firmware/ews/node/supervise"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/procload"
	"github.com/ews-firmware/ews/vip"
)

// The board's components, as typed fields grouped by role, each set once
// by build before anything runs and read where needed (the shape of
// tailscale's tsd.System). What depends on what reads top to bottom in
// build; what runs, and in which order, in Node.Run.

// clusterSide is the board as a member of the cluster: what the cluster
// hears of it, the cluster, and what the board does while master.
type clusterSide struct {
	local    *local                 // what the cluster hears of this board
	health   *health.Checker        // [[health.process]] and [[health.check]]
	load     loadSource             // /proc (procload), or what [sim] implies on a simulated board
	sim      *procload.Sim          // nil on real hardware
	cluster  *state.Cluster         // membership, table, election
	vip      *vip.Holder            // the cluster's virtual IP while master; nil without cluster.vip
	master   *master                // the dispatcher while this board is master
	auto     *automation.Automation // MQTT and [[rule]]s while master; nil without them (node/automation)
	rt       probes                 // boards' response times, probed by the master
	refusals refusals               // boards that refused forwarded credentials lately
	rollout  *rollout.Module        // POST/GET /api/cluster/upgrade (node/rollout)
}

// deviceSide is this board's devices and what serves, mirrors and records
// them, with the programs the board runs beside them.
type deviceSide struct {
	devs    *hal.Devices          // this board's devices
	api     *devapi.API           // /api/devices
	mirror  *devsync.Mirror       // other boards' devices, live; nil standalone
	hist    *history.Module       // this board's device history (node/history)
	cgi     *cgi.Handler          // /cgi-bin
	helpers *supervise.Supervisor // [[supervise]] programs
	outputs *restore.Module       // the outputs the cluster remembers, restored at start (node/restore)
	upload  *firmware.Upload      // this board's own firmware upgrade (node/firmware)
}

// webSide is the board's HTTP surface: the handler, the front door that
// queues and dispatches work, the event streams and the listeners' state.
type webSide struct {
	handler  http.Handler    // the whole HTTP surface
	metrics  *metrics        // its requests
	front    *dispatch.Front // queue, dispatch and forwarding of work
	hub      *events.Hub     // /events: cluster table and every device
	localHub *events.Hub     // /events?scope=local: this board's devices, for the mirrors
	logHub   *events.Hub     // /events?scope=log
	ready    atomic.Bool     // serving requests (/readyz)
	addr     atomic.Value    // net.Addr once listening (the HTTPS one when TLS is on)
	plain    atomic.Value    // net.Addr of the redirect-only node.http listener (TLS on)
}

// accessSide is who may do what on this board: credentials, users and
// their audit log, and how boards are told apart from clients.
type accessSide struct {
	auth    *auth.Auth    // credentials for control
	revoked *auth.Kept    // its logouts, kept in a file
	acct    *accounts     // users store and audit log (accounts.go)
	durable durableState  // the cluster's durable state: the raft log (durablestate.go)
	creds   atomic.Uint64 // fingerprint of this board's credentials, for its reports

	boards *boardrevoke.Module // revoked boards, refused, and their routes (node/boardrevoke)
	conf   *confstore.Store    // the cluster's configuration store (configstore.go)
	live   *configApplier      // applies its versions while the board runs (liveconfig.go)

	// who is a board (boardstream.go, boardaddrs.go)
	marker       *dispatch.Marker // the front's marks; also signs this board's peer streams
	rotate       *rotate.Module   // the cluster's secrets rolling, and its routes (node/rotate)
	rotation     *rotation        // its roller, run beside the log (modules.go); nil alone
	boardIPs     boardAddrs       // where boards connect from
	legacyWarned atomic.Bool      // an unmarked stream from a peer's address was logged (boardstream.go)
}

// build makes every component in the order they need each other and
// passes each what it needs. It opens no listener and starts no goroutine;
// what it opens (devices, hubs) is closed by n.life. Callbacks between
// components (a logout told on the local stream, a mirrored change on
// /events) are wired here, each in one line.
func (n *Node) build(b *boot) error {
	log := n.log
	n.boot = b
	n.live.Store(liveOf(b, b.storeVersion)) // until a version of the store is applied (liveconfig.go)
	n.reg = promx.NewRegistry()
	c, d, w, a := &n.clu, &n.dev, &n.web, &n.acc
	w.metrics = newMetrics(n.reg)
	var err error
	b.clock.Floor(buildinfo.Time(), "this build's commit", log)
	if n.sec, err = openSecurity(b, log); err != nil {
		return err
	}

	// what this board tells the cluster, and the cluster
	c.health = health.New(b.health, log)
	c.local = &local{ready: n.Ready, health: c.health, creds: &a.creds, addr: n.httpAddr}
	if b.capacityAuto {
		c.local.auto = newAutoSlots(b.state.Capacity)
	}
	if b.sched.Policy == "integrated" { // the policy that holds an overloaded board
		c.local.over = newOverloadWatch(b.sched.Integrated, nil)
	}
	sampler := procload.New()
	sampler.Logger = log // one warning per figure it cannot read
	c.load = sampler
	if b.sim != nil {
		c.sim = procload.NewSim(*b.sim, c.local.InFlight, c.local.Completed)
		c.load = c.sim
	}
	c.local.load = c.load
	sc := b.state
	sc.Identity = n.sec.identity                 // signed gossip (invariant 11)
	sc.SealedFile = n.statePath("sealed-boards") // a board that sealed once must seal from then on
	if c.cluster, err = state.New(sc, log, n.reg, c.local); err != nil {
		return err
	}
	if c.vip, err = vip.Open(b.vip, vip.Options{Registerer: n.reg, Logger: log}); err != nil {
		return err
	}
	if c.vip != nil {
		n.life.onClose(c.vip.Close)
	}

	// Two hubs: /events is everything this board knows (cluster table,
	// every device); /events?scope=local only this board's own devices,
	// which the other boards mirror. A third streams the log.
	w.hub = events.New(events.Options{Logger: log, MaxClients: b.sseClients, MaxPerClient: ssePerClient(b.ssePerClient)})
	w.localHub = events.New(events.Options{Logger: log, MaxClients: peerStreams(len(b.state.Peers))}) // boards only (boardstream.go)
	w.logHub = openLogs(n.set.logs, &n.life)
	n.life.onClose(w.hub.Close)
	n.life.onClose(w.localHub.Close)

	// This board's devices. A pin that does not exist or is taken, or a
	// bus that cannot open, fails here with the device, pin and line.
	var failed map[string]string // the store's devices that did not open here
	if d.devs, failed, err = n.openDevices(); err != nil {
		return err
	}
	devs := d.devs
	n.life.onClose(func() {
		if err := devs.Close(); err != nil {
			log.Warn("devices: close", "err", err)
		}
	})
	d.hist = n.openHistory() // their readings and changes, kept (node/history)
	// users, roles, audit log (accounts.go)
	if err := n.openAccounts(); err != nil {
		return err
	}
	n.openRevokedBoards() // revoked boards refused: TLS, gossip; their routes (node/boardrevoke)
	if err := n.openConfStore(); err != nil {
		return err
	}
	a.live.own.Failed = failed
	// Credentials; a logout here is told to the other boards on the local
	// stream they mirror, so the cookie is refused cluster-wide.
	if a.auth, err = auth.New(b.auth, auth.Options{Logger: log, SessionSecret: n.sec.session, Now: b.clock.Now, // cookies expire in cluster time (docs/DESIGN.md, Time)
		OnRevoke: func(rv auth.Revocation) { w.localHub.Publish("revoke", rv); a.revoked.Save(a.auth.Revoked()) },
		OnFail:   func(f auth.Failure) { w.localHub.Publish("authfail", f) },                                                 // counted cluster-wide (devices.go)
		Users:    access.AuthUsers(a.acct.store, a.acct.seed, a.acct.seedKey), SessionInfo: access.SessionInfo(a.acct.store), // named users and their sessions
		FromBoard: n.fromBoardIf(), Own: inProcess, BoardToken: b.boardCred, // a card is no admin (boardcred.go)
	}); err != nil {
		return b.cite(b.authKey, err)
	}
	a.revoked = auth.Keep(b.revocationsPath(), a.auth, log) // logouts kept across restarts
	a.creds.Store(a.auth.Fingerprint(b.storeKey))           // the store's secret: the same on every board through a rotation
	if b.auth.Mode == "none" {
		log.Warn("http auth is none: anyone who reaches this board can control its devices")
	}
	// The device API; a key taken here is told to the other boards the
	// same way, so it is known cluster-wide (at most once per cluster).
	d.api = devapi.New(devs, a.auth, devapi.Options{ReadAuth: b.readAuth, Logger: log, List: n.deviceList, Registerer: n.reg, Principal: access.KeyOwner,
		OnClaim: func(cl devapi.Claim) { w.localHub.Publish("idempotency", cl) }})
	if d.cgi, err = cgi.New(b.cgi, cgi.Options{Devices: func() any { return n.deviceList() }, Logger: log, Node: b.state.Name, User: a.auth.User}); err != nil {
		return b.cite("cgi.user", err)
	}
	w.hub.Snapshot("cluster", func() any { return n.view() })
	w.hub.Snapshot("devices", func() any { return n.deviceList() })
	w.localHub.Snapshot("outputs", func() any { return d.outputs.Remembered() }) // before "devices" (node/devsync/memory.go)
	w.localHub.Snapshot("devices", func() any { return devs.Local() })
	w.localHub.Snapshot("revoked", func() any { return a.auth.Revoked() })
	w.localHub.Snapshot("users", func() any { return a.acct.store.Sealed() }) // the users store, sealed
	w.localHub.Snapshot("config", func() any { return a.live.ownStatus() })   // what this board made of the store's version
	if !b.state.Standalone() {
		// Other boards' devices, live from their /events?scope=local; their
		// changes go out on our /events (never on localHub: no echo).
		d.mirror = devsync.New(b.state.Name, n.peerHTTP, devsync.Options{TLS: n.sec.client, Logger: log, Sign: n.signPeer,
			OnChange: func(s hal.Snapshot) { w.hub.Publish("device", s); c.auto.Observe(s) },
			OnEvent:  n.remoteEvent})
	}
	d.outputs = n.openOutputs()

	d.upload = n.openUpload() // POST /api/board/firmware (node/firmware)
	n.openRollout()           // the rolling upgrade this board may be asked to run (node/rollout)

	// The front door: work enters the master's queue.
	if w.front, err = n.newFront(n.work()); err != nil {
		return err
	}
	n.life.onClose(w.front.Close)
	n.openRotation() // the secrets of marks, board credential, sessions: a rotation's (node/rotate)
	c.master = &master{front: w.front, vip: vip.NewFollower(c.vip), log: log, policy: b.sched.Policy, boards: c.cluster.Boards,
		newDispatcher: func() (*sched.Dispatcher, error) {
			return sched.NewDispatcher(n.live.Load().sched, sched.Options{Registerer: n.reg, Logger: log, RT: c.rt.get, Distance: distance(b.state.Name, c.cluster),
				ClientRTT: c.cluster.ClientRTT, Proxy: b.mode != dispatch.ModeRedirect})
		}}
	c.local.work, c.local.master = w.front, c.master
	mux := http.NewServeMux()
	n.routes(mux)
	w.handler = n.wrap(mux)

	// What runs while this board is master (its door is the handler
	// above), and the helper programs.
	if c.auto, err = automation.New(automation.Options{Config: b.automation(), Logger: log, Door: n.actorDoor(), Devices: n.deviceList, // rules act as admin (rule:N), MQTT as [mqtt] user
		Boards: func() []state.Board { return c.cluster.Snapshot().Nodes }, TLS: n.sec.client}); err != nil {
		return err
	}
	c.auto.OnTurnBack(n.reportTurnBack) // refused turn-backs in the audit log
	c.master.auto = c.auto
	d.helpers = supervise.New(b.helpers, log)
	return nil
}
