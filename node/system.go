package node

import (
	"net/http"
	"sync/atomic"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/automation"
	"github.com/ews-firmware/ews/node/boardpage"
	"github.com/ews-firmware/ews/node/boardrevoke"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/cgi"
	"github.com/ews-firmware/ews/node/clusterview"
	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/node/devapi"
	"github.com/ews-firmware/ews/node/devsync"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/events"
	"github.com/ews-firmware/ews/node/firmware"
	"github.com/ews-firmware/ews/node/guard"
	"github.com/ews-firmware/ews/node/health"
	"github.com/ews-firmware/ews/node/history"
	"github.com/ews-firmware/ews/node/liveconf"
	"github.com/ews-firmware/ews/node/peers"
	"github.com/ews-firmware/ews/node/report"
	"github.com/ews-firmware/ews/node/restore"
	"github.com/ews-firmware/ews/node/rollout"
	"github.com/ews-firmware/ews/node/rotate"
	"github.com/ews-firmware/ews/node/supervise"
	"github.com/ews-firmware/ews/node/users"
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
	local   *report.Local          // what the cluster hears of this board (node/report)
	health  *health.Checker        // [[health.process]] and [[health.check]]
	load    report.LoadSource      // /proc (procload), or what [sim] implies on a simulated board
	sim     *procload.Sim          // nil on real hardware
	cluster *state.Cluster         // membership, table, election
	vip     *vip.Holder            // the cluster's virtual IP while master; nil without cluster.vip
	master  *master                // the dispatcher while this board is master
	auto    *automation.Automation // MQTT and [[rule]]s while master; nil without them (node/automation)
	view    *clusterview.View      // the table as this board serves it; the master's probes (node/clusterview)
	rollout *rollout.Module        // POST/GET /api/cluster/upgrade (node/rollout)
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
	page     *boardpage.Page // GET /api/board
	metrics  *guard.Metrics  // its requests
	front    *dispatch.Front // queue, dispatch and forwarding of work
	hub      *events.Hub     // /events: cluster table and every device
	localHub *events.Hub     // /events?scope=local: this board's devices, for the mirrors
	logHub   *events.Hub     // /events?scope=log
	ready    atomic.Bool     // serving requests (/readyz)
	addr     atomic.Value    // net.Addr once listening (the HTTPS one when TLS is on)
}

// accessSide is who may do what on this board: credentials, users and
// their audit log, and how boards are told apart from clients.
type accessSide struct {
	auth    *auth.Auth       // credentials for control
	revoked *auth.Kept       // its logouts, kept in a file
	acct    *access.Accounts // users store and audit log (node/access)
	durable *durable.Board   // the cluster's durable state: the raft log (node/durable)
	creds   atomic.Uint64    // fingerprint of this board's credentials, for its reports

	boards *boardrevoke.Module // revoked boards, refused, and their routes (node/boardrevoke)
	live   *liveconf.Module    // the cluster's configuration store, its versions applied while the board runs (node/liveconf)

	marker   *dispatch.Marker // the front's marks; also signs this board's peer streams
	peers    *peers.Peers     // who is a board (node/peers)
	rotate   *rotate.Module   // the cluster's secrets rolling, and its routes (node/rotate)
	rotation *rotation        // its roller, run beside the log (modules.go); nil alone
}

// build makes every component in the order they need each other and
// passes each what it needs. It opens no listener and starts no goroutine;
// what it opens (devices, hubs) is closed by n.life. Callbacks between
// components (a logout told on the local stream, a mirrored change on
// /events) are wired here, each in one line.
func (n *Node) build(b *bootconf.Boot) error {
	log := n.log
	n.boot = b
	n.live.Store(b.Live(b.StoreVersion)) // until a version of the store is applied (node/liveconf)
	n.reg = promx.NewRegistry()
	c, d, w, a := &n.clu, &n.dev, &n.web, &n.acc
	w.metrics = guard.NewMetrics(n.reg)
	var err error
	b.Clock.Floor(buildinfo.Time(), "this build's commit", log)
	if n.sec, err = b.OpenTLS(log); err != nil {
		return err
	}

	// what this board tells the cluster, and the cluster
	c.health = health.New(b.Health, log)
	c.local = &report.Local{Ready: n.Ready, Health: c.health, Fingerprint: &a.creds, Addr: report.HTTPAddr(b.State, n.Addr)}
	if b.CapacityAuto {
		c.local.Auto = report.NewAutoSlots(b.State.Capacity)
	}
	if b.Sched.Policy == "integrated" { // the policy that holds an overloaded board
		c.local.Over = report.NewOverloadWatch(b.Sched.Integrated, nil)
	}
	sampler := procload.New()
	sampler.Logger = log // one warning per figure it cannot read
	c.load = sampler
	if b.Sim != nil {
		c.sim = procload.NewSim(*b.Sim, c.local.InFlight, c.local.Completed)
		c.load = c.sim
	}
	c.local.Figures = c.load
	sc := b.State
	sc.Identity = n.sec.Identity                      // signed gossip (invariant 11)
	sc.SealedFile = n.boot.StatePath("sealed-boards") // a board that sealed once must seal from then on
	if c.cluster, err = state.New(sc, log, n.reg, c.local); err != nil {
		return err
	}
	if c.vip, err = vip.Open(b.VIP, vip.Options{Registerer: n.reg, Logger: log}); err != nil {
		return err
	}
	if c.vip != nil {
		n.life.onClose(c.vip.Close)
	}

	// Two hubs: /events is everything this board knows (cluster table,
	// every device); /events?scope=local only this board's own devices,
	// which the other boards mirror. A third streams the log.
	w.hub = events.New(events.Options{Logger: log, MaxClients: b.SSEClients, MaxPerClient: b.SSEPerClient})
	w.localHub = events.New(events.Options{Logger: log, MaxClients: peers.Streams(len(b.State.Peers))}) // boards only (node/peers)
	w.logHub = boardpage.Logs(n.set.logs, n.life.onClose)
	n.life.onClose(w.hub.Close)
	n.life.onClose(w.localHub.Close)

	// This board's devices. A pin that does not exist or is taken, or a
	// bus that cannot open, fails here with the device, pin and line.
	var failed map[string]string // the store's devices that did not open here
	if d.devs, failed, err = b.OpenDevices(hal.Options{Registerer: n.reg, Logger: log}); err != nil {
		return err
	}
	devs := d.devs
	n.life.onClose(func() {
		if err := devs.Close(); err != nil {
			log.Warn("devices: close", "err", err)
		}
	})
	d.hist = n.openHistory() // their readings and changes, kept (node/history)
	// the marks of requests between boards, and who is a board (node/peers)
	key, note, err := bootconf.MarkKey(b)
	if err != nil {
		return err
	}
	if note != "" {
		log.Warn(note)
	}
	if a.marker, err = dispatch.NewMarker(key, dispatch.MarkOptions{Now: b.Clock.Now}); err != nil { // cluster time (docs/DESIGN.md, Time)
		return err
	}
	a.peers = peers.New(peers.Options{Self: b.State.Name, Peers: b.State.Peers, TLS: n.sec.On(), Marker: a.marker, Logger: log,
		Revoked: func(board string) bool { return a.boards != nil && a.boards.Revoked(board) }, Boards: c.cluster.Boards})
	// the cluster's durable log (node/durable), then users, roles, audit log (node/access)
	var voters []string // every board of cluster.peers; none alone
	for _, p := range b.State.Peers {
		voters = append(voters, p.Name)
	}
	if a.durable, err = durable.OpenBoard(durable.BoardOptions{Self: b.State.Name, Peers: voters, StateDir: b.StateDirPath(), TMax: b.State.TMax,
		Resolve: a.peers.HTTP, Sign: a.peers.Sign, TLS: n.sec.Client, Revoked: func(board string) bool { return a.boards != nil && a.boards.Revoked(board) },
		BoardOnly: a.peers.Only, Read: n.readAuth, Logger: log}); err != nil {
		return err
	}
	seed, seedKey, seedToken := b.AdminSeed()
	if a.acct, err = access.OpenAccounts(access.AccountsOptions{Users: users.Options{
		Secret: b.UsersSecret(),
		Path:   b.StatePath("users.json"), // kept beside the log: what a rollback to the previous build reads
		State:  a.durable.State(),         // every write committed by a majority of the voters
		// each version this board takes goes out on its local stream,
		// which boards of the previous build mirror (devsync) during a
		// rolling upgrade; the stream's snapshot gives a board that
		// (re)connects the current version
		OnChange: func(sealed string) { w.localHub.Publish("users", sealed) },
		OnRevoke: func(name string) { log.Info("users: credentials ended", "user", name) },
		Devices: func() (out []string) {
			for _, d := range n.live.Load().HAL.Devices {
				out = append(out, d.Name)
			}
			return out
		},
		Logger: log,
	}, Signed: a.durable.Clustered(), Seed: seed, SeedKey: seedKey, SeedToken: seedToken,
		Audit:      audit.Options{Path: b.StatePath("audit.log"), Board: b.State.Name, Registerer: n.reg, Logger: log, Now: b.Clock.Now},
		Unreadable: func(err error) { n.kept.Report(log, "users", b.StatePath("users.json"), err) }}); err != nil {
		return err
	}
	// revoked boards (node/boardrevoke): refused in TLS handshakes either way,
	// gossip, connections opened before; POST/GET /api/cluster/revoke
	a.boards = boardrevoke.Open(boardrevoke.Options{State: a.durable.State(), Logger: log, Peers: voters, Verify: n.sec.Verify,
		Server: n.sec.Server, Client: n.sec.Client, Gossip: c.cluster, Admin: n.adminAudited, Read: n.readAuth,
		Who: func(r *http.Request) string { return who(r).Name }, BoardAddr: a.peers.HTTP})
	c.view = clusterview.New(clusterview.Options{Cluster: c.cluster, Standalone: b.State.Standalone(), Load: c.load, Revoked: a.boards,
		Sched: func() sched.Config { return n.live.Load().Sched }, Creds: &a.creds, TLS: n.sec.Client, Scheme: n.sec.Scheme()})
	var signers confstore.Signers // who may write a version: an admin of the users store (none alone)
	if a.durable.Clustered() && a.acct != nil {
		signers = a.acct.Store
	}
	if a.live, err = liveconf.New(liveconf.Options{Board: b.State.Name, Version: b.StoreVersion, Seed: b.StoreSeed,
		Path: b.StatePath("config.json"), Now: b.Clock.Now, Check: bootconf.CheckStore(b.StoreOwn), Map: b.MapVersion, // a board alone keeps the store in memory
		RestartNeeded: b.RestartNeeded, Defaults: bootconf.SectionDefaults(), Live: &n.live, State: a.durable.State(), Signers: signers, Devices: devs,
		Reconfigure: func() { c.master.reconfigure() }, Automation: func(ac automation.Config) error { return c.auto.Reconfigure(ac) },
		Applied: func() { w.localHub.Publish("devices", devs.Local()); w.hub.Publish("devices", n.deviceList()) },
		Publish: func(st liveconf.Status) { w.localHub.Publish("config", st) },
		Guard:   func(h http.Handler) http.Handler { return n.audited(a.auth.Require(h)) },
		Who:     func(r *http.Request) (string, bool) { p := who(r); return p.Name, p.Admin() }, Logger: log}, failed); err != nil {
		return err
	}
	// Credentials; a logout here is told to the other boards on the local
	// stream they mirror, so the cookie is refused cluster-wide.
	var fromBoard func(*http.Request) bool // a board alone's token stays its admin (nothing to steal beyond that board)
	if b.BoardMode() {
		fromBoard = peers.SentByBoard
	}
	if a.auth, err = auth.New(b.Auth, auth.Options{Logger: log, SessionSecret: n.sec.Session, Now: b.Clock.Now, // cookies expire in cluster time (docs/DESIGN.md, Time)
		OnRevoke: func(rv auth.Revocation) { w.localHub.Publish("revoke", rv); a.revoked.Save(a.auth.Revoked()) },
		OnFail:   func(f auth.Failure) { w.localHub.Publish("authfail", f) },                                                 // counted cluster-wide (feeds.go)
		Users:    access.AuthUsers(a.acct.Store, a.acct.Seed, a.acct.SeedKey), SessionInfo: access.SessionInfo(a.acct.Store), // named users and their sessions
		FromBoard: fromBoard, Own: inProcess, BoardToken: b.BoardCred, // a card is no admin (node/bootconf BoardCredential)
	}); err != nil {
		return b.Cite(b.AuthKey, err)
	}
	a.revoked = auth.Keep(b.RevocationsPath(), a.auth, log) // logouts kept across restarts
	a.creds.Store(a.auth.Fingerprint(b.StoreKey))           // the store's secret: the same on every board through a rotation
	if b.Auth.Mode == "none" {
		log.Warn("http auth is none: anyone who reaches this board can control its devices")
	}
	// The device API; a key taken here is told to the other boards the
	// same way, so it is known cluster-wide (at most once per cluster).
	d.api = devapi.New(devs, a.auth, devapi.Options{ReadAuth: b.ReadAuth, Logger: log, List: n.deviceList, Registerer: n.reg, Principal: access.KeyOwner,
		OnClaim: func(cl devapi.Claim) { w.localHub.Publish("idempotency", cl) }})
	if d.cgi, err = cgi.New(b.CGI, cgi.Options{Devices: func() any { return n.deviceList() }, Logger: log, Node: b.State.Name, User: a.auth.User}); err != nil {
		return b.Cite("cgi.user", err)
	}
	w.hub.Snapshot("cluster", func() any { return c.view.Now() })
	w.hub.Snapshot("devices", func() any { return n.deviceList() })
	w.localHub.Snapshot("outputs", func() any { return d.outputs.Remembered() }) // before "devices" (node/devsync/memory.go)
	w.localHub.Snapshot("devices", func() any { return devs.Local() })
	w.localHub.Snapshot("revoked", func() any { return a.auth.Revoked() })
	w.localHub.Snapshot("users", func() any { return a.acct.Store.Sealed() }) // the users store, sealed
	w.localHub.Snapshot("config", func() any { return a.live.Own() })         // what this board made of the store's version
	if !b.State.Standalone() {
		// Other boards' devices, live from their /events?scope=local; their
		// changes go out on our /events (never on localHub: no echo).
		peerHTTP := func() (out []devsync.Peer) { // every board's HTTP address as the table knows it
			for _, b := range c.cluster.Boards() {
				out = append(out, devsync.Peer{Name: b.Name, HTTP: b.HTTP})
			}
			return out
		}
		d.mirror = devsync.New(b.State.Name, peerHTTP, devsync.Options{TLS: n.sec.Client, Logger: log, Sign: a.peers.Sign,
			OnChange: func(s hal.Snapshot) { w.hub.Publish("device", s); c.auto.Observe(s) },
			OnEvent:  n.remoteEvent})
	}
	d.outputs = n.openOutputs()

	d.upload = firmware.NewUpload(firmware.UploadOptions{Name: b.State.Name, Exe: n.set.exe, Verify: n.sec.Verify, ReadyWithin: ReadyWithin,
		Logger: log, Busy: func() bool { return n.Exit() != ExitStop }, Exit: func() bool { return n.requestExit(ExitUpgrade) },
		Admin: n.adminAudited}) // POST /api/board/firmware, and a rollout's last step (node/firmware)
	w.page = boardpage.New(boardpage.Options{Name: b.State.Name, Gossip: b.State.Gossip, Started: n.started, Exe: n.set.exe, Addr: n.Addr,
		Advertise: c.local.HTTPAddr, Load: c.load.Load, Runstate: c.local.Runstate, Master: func() string { return c.cluster.Snapshot().Master },
		Devices: devs.Local, Restart: restartMode, History: d.hist.Status, Problems: n.kept, CA: n.sec.CA.Fingerprint(),
		Allowed: a.auth.Allowed, Read: n.readAuth}) // GET /api/board (node/boardpage)
	n.openRollout() // the rolling upgrade this board may be asked to run (node/rollout)

	// The front door: work enters the master's queue.
	if w.front, err = n.newFront(); err != nil {
		return err
	}
	n.life.onClose(w.front.Close)
	n.openRotation() // the secrets of marks, board credential, sessions: a rotation's (node/rotate)
	c.master = &master{front: w.front, vip: vip.NewFollower(c.vip), log: log, policy: b.Sched.Policy, boards: c.cluster.Boards,
		newDispatcher: func() (*sched.Dispatcher, error) {
			return sched.NewDispatcher(n.live.Load().Sched, sched.Options{Registerer: n.reg, Logger: log, RT: c.view.RT, Distance: clusterview.Distance(b.State.Name, c.cluster),
				ClientRTT: c.cluster.ClientRTT, Proxy: b.Mode != dispatch.ModeRedirect})
		}}
	c.local.Work, c.local.Queue = w.front, c.master
	mux := http.NewServeMux()
	n.routes(mux)
	w.handler = guard.Wrap(mux, guard.Options{MaxBody: b.MaxBody, MaxFirmware: MaxFirmwareBytes, Metrics: w.metrics, Refuse: a.boards.Refuse,
		Firmware: func(r *http.Request) bool {
			return r.Method == http.MethodPost && (r.URL.Path == firmware.Path || r.URL.Path == "/api/cluster/upgrade")
		},
		Sign: access.PersonSigner(a.acct.Store, a.acct.Seed, a.auth), // a write of the users or the configuration carries its person's signature
		// the automation's own request (actorDoor, in process), or one a
		// board forwards with a dispatch mark may carry HeaderActor
		Vouched: func(r *http.Request) bool {
			return inProcess(r) || r.Header.Get(dispatch.HeaderMark) != "" && a.peers.From(r)
		}})

	// What runs while this board is master (its door is the handler
	// above), and the helper programs.
	if c.auto, err = automation.New(automation.Options{Config: b.Automation(), Logger: log, Door: n.actorDoor(), Devices: n.deviceList, // rules act as admin (rule:N), MQTT as [mqtt] user
		Boards: func() []state.Board { return c.cluster.Snapshot().Nodes }, TLS: n.sec.Client}); err != nil {
		return err
	}
	c.auto.OnTurnBack(access.TurnBack(a.acct.Audit)) // refused turn-backs in the audit log
	c.master.auto = c.auto
	d.helpers = supervise.New(b.Helpers, log)
	return nil
}
