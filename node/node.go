// Package node is one board's daemon: the HTTP front door, lifecycle, metrics and wiring of devices, cluster and scheduler.
package node

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/node/boardpage"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/clientrtt"
	"github.com/ews-firmware/ews/node/listen"
	"github.com/ews-firmware/ews/node/liveconf"
	"github.com/ews-firmware/ews/node/logring"
	"github.com/ews-firmware/ews/node/sdnotify"
	"github.com/ews-firmware/ews/node/supervise"
)

// Node is one board's daemon. Create it with New, then Run it. It holds
// what it owns itself (config, logger, lifecycle, the process's exit) and
// the board's components in four sides, each with one role, built once by
// New (system.go).
type Node struct {
	boot *bootconf.Boot // every package's options, from the boot config (node/bootconf)
	// live is the cluster-wide part this board runs now: boot's, then each
	// version of the configuration store it applied (node/liveconf)
	live    atomic.Pointer[liveconf.Config]
	log     *slog.Logger
	set     settings  // what the Options chose
	life    lifecycle // runs the components, then closes what they hold
	reg     *promx.Registry
	sec     bootconf.TLS // TLS material and session secret from the bundle (node/bootconf)
	clu     clusterSide  // the cluster, what it hears of this board, mastership
	dev     deviceSide   // this board's devices and what serves, mirrors and records them
	web     webSide      // the HTTP surface, the front door and the listeners
	acc     accessSide   // credentials, users, audit; who is a board
	started time.Time
	exit    exitRequest         // why Run returns (restart.go)
	kept    *boardpage.Problems // kept stores it could not read at start (node/boardpage)
}

// settings are what the Options set before New builds the board.
type settings struct {
	timeouts listen.Timeouts
	exe      string                  // the running binary; "" when unknown
	logs     *logring.Ring           // recent log lines; nil without WithLogRing
	routes   map[string]http.Handler // extra work routes (tests only)
}

// Option changes how New builds a Node.
type Option func(*settings)

// WithLogRing serves ring's lines (the node's logger must tee into it) on
// the board page's authenticated log stream, GET /events?scope=log.
func WithLogRing(ring *logring.Ring) Option { return func(s *settings) { s.logs = ring } }

// WithExecutable names the running binary that a firmware upload replaces
// (boardpage.Executable() in `ews run`; without it uploads are refused).
func WithExecutable(path string) Option { return func(s *settings) { s.exe = path } }

// New builds a node from a validated config. It opens nothing yet that
// another process could notice and starts no goroutine; Run listens and
// starts the components. The config is read here only, by the mapping
// onto every package's options (node/bootconf); a problem any package
// finds in it is config.Errors, with file, line and key.
func New(cfg *config.Config, log *slog.Logger, opts ...Option) (*Node, error) {
	if log == nil {
		log = slog.Default()
	}
	b, err := bootconf.Map(cfg)
	if err != nil {
		return nil, err
	}
	kept := &boardpage.Problems{}
	b = bootconf.StoreWins(cfg, b, log, func(store, path string, err error) { kept.Report(log, store, path, err) }) // the configuration store's sections, once it holds them (node/bootconf)
	n := &Node{log: log, set: settings{timeouts: listen.DefaultTimeouts()}, kept: kept,
		started: time.Now(), exit: exitRequest{stop: make(chan struct{})}}
	for _, o := range opts {
		o(&n.set)
	}
	if err := n.build(b); err != nil {
		n.life.close()
		return nil, err
	}
	return n, nil
}

// Addr is the address the HTTP server listens on, nil before Run listens.
func (n *Node) Addr() net.Addr {
	a, _ := n.web.addr.Load().(net.Addr)
	return a
}

// Ready reports whether the node serves requests (/readyz).
func (n *Node) Ready() bool { return n.web.ready.Load() }

// Run listens on node.http (with TLS on: http.https, and node.http only
// redirects) and serves until ctx is done; then it says it is no longer
// ready and stops the components in reverse order of start: the cluster
// first (mastership handed over, so peers take over while this board
// drains), then the HTTP servers (in-flight requests get
// http.shutdown_timeout), then the rest. It returns nil, or the error a
// component failed with. A listen failure is returned at once.
func (n *Node) Run(ctx context.Context) error {
	defer n.life.close()
	o := listen.Options{Handler: n.web.handler, Timeouts: n.set.timeouts, Grace: n.boot.ShutdownTimeout, HTTP: n.boot.State.HTTP,
		HTTPS: n.boot.HTTPS, Redirect: n.boot.Redirect, TLS: n.sec.Server, Peers: n.boot.State.Peers, MaxConnsPerClient: n.boot.MaxConnsPerClient,
		OnDrain: []func(){n.web.hub.Close, n.web.localHub.Close, n.web.logHub.Close}, Logger: n.log}
	// 003's scheme 3: a board of a cluster measures its clients' round
	// trips on its listener and publishes its nearest networks (not in the
	// lite build)
	clientRTT := clientrtt.Supported && !n.boot.State.Standalone()
	if clientRTT {
		o.ClientMeter = n.clu.cluster.ClientMeter()
	}
	srv, err := listen.Open(ctx, o) // node/listen
	if err != nil {
		return err
	}
	primary, redirect := srv.Primary, srv.Redirect
	addr := primary.Addr()
	n.web.addr.Store(addr)
	// The components, in the order they start; they stop in reverse.
	n.life.start(ctx, "health", n.clu.health)
	if n.clu.vip != nil {
		n.life.start(ctx, "vip", n.clu.vip) // first removes an address left from a crash
	}
	n.dev.outputs.Hold() // actions wait until Restore
	n.life.start(ctx, "history", n.dev.hist.Flush())
	n.life.start(ctx, "history-record", n.dev.hist.Record())
	n.life.start(ctx, "devices", n.dev.devs) // polls the sensors
	if n.dev.mirror != nil {
		n.life.start(ctx, "mirror", n.dev.mirror)
	}
	// the device watch subscribes here, not when its goroutine runs: a
	// change between the two would reach no event stream
	watch := n.dev.devs.WatchFromNow()
	n.life.start(ctx, "events", runFunc(func(ctx context.Context) error { return n.publish(ctx, watch) }))
	// the store's new versions, applied live (node/liveconf)
	n.life.start(ctx, "config", n.acc.live)
	n.life.start(ctx, "audit", n.acc.acct.Audit) // the audit log's writer
	n.life.start(ctx, "probes", n.clu.view)      // the master's probes of the boards' response times
	if clientRTT {
		n.life.start(ctx, "client-rtt", runFunc(func(ctx context.Context) error {
			return clientrtt.Publish(ctx, n.clu.cluster.ClientMeter(), time.Second, n.clu.cluster.SetClientNets)
		}))
	}
	if n.clu.auto != nil {
		n.life.start(ctx, "automation", n.clu.auto)
	}
	n.life.start(ctx, "supervise", n.dev.helpers) // before the servers: helpers outlive the drain
	if redirect != nil {
		n.life.start(ctx, "redirect", redirect) // node.http: /healthz, /readyz, else 308 to HTTPS
	}
	n.life.start(ctx, "http", primary)
	n.life.start(ctx, "durable", n.acc.durable) // the raft log rides the HTTP listener (node/durable)
	// once the log runs: the first admin seeded, the previous build's users
	// imported, the store's first version, the secrets' rolling
	n.life.start(ctx, "users", n.acc.acct)
	n.life.start(ctx, "config-seed", runFunc(func(ctx context.Context) error { n.acc.live.Seed(ctx); return nil }))
	if rt := n.acc.rotation; rt != nil && n.acc.durable.Clustered() {
		n.life.start(ctx, "rotation", runFunc(func(ctx context.Context) error { rt.roller.Run(ctx); return nil })) // (node/rotate)
	}
	// The cluster starts after the HTTP servers so that it stops before
	// them: mastership is handed over before the drain.
	n.life.start(ctx, "cluster", n.clu.cluster)
	select {
	case <-n.clu.cluster.Up():
	case <-n.life.failed():
		return n.life.stop() // the gossip address is taken, say
	}
	if n.dev.outputs.Restore(ctx) { // outputs back to what the cluster remembers, then actions run
		n.life.start(ctx, "outputs-keep", n.dev.outputs) // and this board's own kept
	}
	// Our row and, when we are master, the queue exist before we say we
	// are ready: no 503 for a board that just said it is ready.
	n.clu.cluster.ReportNow()
	n.clu.master.follow(n.clu.cluster.Snapshot())
	n.web.ready.Store(true)
	n.clu.cluster.ReportNow() // running now
	wo := sdnotify.BoardOptions{Addr: addr, Cluster: func() { n.clu.cluster.Snapshot() }, Helpers: n.dev.helpers.Check,
		HelpersEvery: supervise.DefaultCheckEvery} // a stuck WATCH restarts ews within seconds (002)
	if n.sec.On() {
		wo.TLS = n.sec.Client
	}
	wd := sdnotify.Board(n.log, wo) // systemd's, petted while the board answers
	n.life.start(ctx, "watchdog", wd)
	wd.Ready()
	n.log.Info("serving", "name", n.boot.State.Name, n.sec.Scheme(), addr.String(), "config", n.boot.File)
	if a := n.announcer(addr); a != nil {
		n.life.start(ctx, "mdns", a) // announce on the LAN, [node] mdns (node/mdns)
	}
	releaseStartGarbage() // idle RSS (node/memory.go)

	select {
	case <-ctx.Done():
	case <-n.exit.stop:
		n.log.Info("stopping for a " + n.Exit().String())
	case <-n.life.failed():
		n.log.Error("stopping: a component failed")
	}
	n.web.ready.Store(false)
	wd.Stopping()
	err = n.life.stop()
	if err != nil {
		n.log.Error("stopped: a component failed", "err", err)
	} else {
		n.log.Info("stopped")
	}
	return err
}

// releaseStartGarbage collects what starting left behind (the config's parse, certificates, the
// UI's index, each component's setup) and returns the free pages to the OS, once, when the node
// serves: a board idles for hours, the heap may not reach its next GC for as long, and the
// runtime's forced GC comes only every two minutes (docs/notes/lighter-boards.md: idle RSS). In the
// background, so the first requests do not wait for it.
func releaseStartGarbage() { go debug.FreeOSMemory() }
