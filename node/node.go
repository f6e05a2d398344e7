// Package node is one board's daemon: the HTTP front door, lifecycle, metrics and wiring of devices, cluster and scheduler.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/cgi"
	"github.com/ews-firmware/ews/node/devapi"
	"github.com/ews-firmware/ews/node/devsync"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/events"
	"github.com/ews-firmware/ews/node/health"
	"github.com/ews-firmware/ews/node/logring"
	"github.com/ews-firmware/ews/node/sdnotify"
	"github.com/ews-firmware/ews/node/supervise"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/procload"
	"github.com/ews-firmware/ews/vip"
)

// Timeouts bound what one client may hold of the server.
type Timeouts struct {
	ReadHeader time.Duration // slowloris guard
	Read       time.Duration // whole request, body included
	Write      time.Duration // whole response (SSE streams lift it themselves)
	Idle       time.Duration // keep-alive connections
	MaxHeader  int           // bytes; larger headers get 431
}

// DefaultTimeouts are the server limits used by `ews run`.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		ReadHeader: 5 * time.Second,
		Read:       30 * time.Second,
		Write:      60 * time.Second,
		Idle:       120 * time.Second,
		MaxHeader:  16 << 10,
	}
}

// Node is one board's daemon. Create it with New, then Run it.
type Node struct {
	cfg      *config.Config
	log      *slog.Logger
	timeouts Timeouts
	reg      *promx.Registry
	metrics  *metrics
	handler  http.Handler

	ready    atomic.Bool
	addr     atomic.Value // net.Addr once listening (the HTTPS one when TLS is on)
	plain    atomic.Value // net.Addr of the redirect-only node.http listener (TLS on)
	sec      security     // TLS material and session secret from the bundle
	inFlight atomic.Int64 // HTTP requests being answered, of every kind

	local   *local          // what the cluster hears of this board
	health  *health.Checker // [[health.process]] and [[health.check]]
	load    loadSource      // /proc (procload), or what [sim] implies on a simulated board
	sim     *simLoad        // nil on real hardware
	cluster *state.Cluster  // membership, table, election
	wg      sync.WaitGroup  // background loops owned by Run

	devs     *hal.Devices    // this board's devices
	auth     *auth.Auth      // credentials for control
	api      *devapi.API     // /api/devices
	cgi      *cgi.Handler    // /cgi-bin
	hub      *events.Hub     // /events: cluster table and every device
	localHub *events.Hub     // /events?scope=local: this board's devices, for the mirrors
	mirror   *devsync.Mirror // other boards' devices, live; nil standalone
	front    *dispatch.Front // queue, dispatch and forwarding of work
	master   *master         // the dispatcher while this board is master
	auto     *automation     // MQTT and [[rule]]s while master; nil without them
	vip      *vip.Manager    // the cluster's virtual IP while master; nil without cluster.vip
	rt       probes          // boards' response times, probed by the master
	creds    atomic.Uint64   // fingerprint of this board's credentials, for its reports
	refusals refusals        // boards that refused forwarded credentials lately
	acct     *accounts       // issue 24: users store and audit log (accounts.go)

	closeOnce sync.Once
	closers   []func() // run in reverse order at shutdown

	extraRoutes map[string]http.Handler // tests only

	// board page, restart and firmware (board.go, restart.go, firmware.go)
	started   time.Time
	exe       string        // the running binary; "" when unknown
	exeSum    exeSum        // its SHA-256, hashed once
	exit      atomic.Int32  // Exit: why Run returns
	stopReq   chan struct{} // closed by requestExit
	upgradeMu sync.Mutex    // one upload at a time
	logs      *logring.Ring // recent log lines; nil without WithLogRing
	logHub    *events.Hub   // /events?scope=log
	rollout   rolloutState  // POST /api/cluster/upgrade
}

// Option changes how New builds a Node.
type Option func(*Node)

// WithLogRing serves ring's lines (the node's logger must tee into it) on
// the board page's authenticated log stream, GET /events?scope=log.
func WithLogRing(ring *logring.Ring) Option { return func(n *Node) { n.logs = ring } }

// WithExecutable names the running binary that a firmware upload replaces
// (Executable() in `ews run`; without it uploads are refused).
func WithExecutable(path string) Option { return func(n *Node) { n.exe = path } }

// New builds a node from a validated config. It opens nothing yet that
// another process could notice; Run listens.
func New(cfg *config.Config, log *slog.Logger, opts ...Option) (*Node, error) {
	if log == nil {
		log = slog.Default()
	}
	n := &Node{cfg: cfg, log: log, timeouts: DefaultTimeouts(), reg: promx.NewRegistry(),
		started: time.Now(), stopReq: make(chan struct{})}
	for _, o := range opts {
		o(n)
	}
	n.metrics = newMetrics(n.reg, n)
	n.local = &local{n: n}
	n.health = health.New(cfg.Health, log)
	n.load = procload.New()
	if cfg.Sim != nil {
		n.sim = newSimLoad(*cfg.Sim, func() int { return n.local.InFlight() }, func() uint64 { return n.local.Completed() })
		n.load = n.sim
	}
	if err := n.openSecurity(); err != nil {
		return nil, err
	}
	sc, err := cfg.State()
	if err != nil {
		return nil, err
	}
	cl, err := state.New(sc, log, n.reg, n.local)
	if err != nil {
		return nil, err
	}
	n.cluster = cl
	if err := n.openVIP(); err != nil {
		return nil, err
	}
	if err := n.openDevices(); err != nil {
		n.close()
		return nil, err
	}
	n.openLogs()
	if n.exe != "" {
		n.rollout.load(n.exe + ".rollout.json")
	}
	n.onClose(func() {
		n.rollout.mu.Lock()
		if n.rollout.cancel != nil {
			n.rollout.cancel()
		}
		n.rollout.mu.Unlock()
		n.rollout.wg.Wait()
	})
	n.creds.Store(n.auth.Fingerprint(sc.Key))
	if cfg.HTTP.Auth == "none" {
		log.Warn("http auth is none: anyone who reaches this board can control its devices")
	}
	mux := http.NewServeMux()
	if err := n.routes(mux); err != nil {
		n.close()
		return nil, err
	}
	n.handler = n.wrap(mux)
	if n.auto, err = n.newAutomation(); err != nil {
		n.close()
		return nil, err
	}
	n.onClose(n.auto.wait)
	return n, nil
}

// Handler is the node's whole HTTP surface (tests drive it with httptest).
func (n *Node) Handler() http.Handler { return n.handler }

// Registry is the node's Prometheus registry.
func (n *Node) Registry() *promx.Registry { return n.reg }

// Addr is the address the HTTP server listens on, nil before Run listens.
func (n *Node) Addr() net.Addr {
	a, _ := n.addr.Load().(net.Addr)
	return a
}

// PlainAddr is the address of the redirect-only plain HTTP listener
// (node.http when TLS is on and http.http_redirect); nil otherwise.
func (n *Node) PlainAddr() net.Addr {
	a, _ := n.plain.Load().(net.Addr)
	return a
}

// Ready reports whether the node serves requests (/readyz).
func (n *Node) Ready() bool { return n.ready.Load() }

// Run listens on node.http (with TLS on: http.https, and node.http only
// redirects) and serves until ctx is done, then stops accepting, lets
// in-flight requests finish within http.shutdown_timeout and returns nil.
// A listen failure is returned at once.
func (n *Node) Run(ctx context.Context) error {
	defer n.close()
	ln, redir, err := n.listen()
	if err != nil {
		return err
	}
	n.addr.Store(ln.Addr())
	if redir != nil {
		defer redir.stop()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); n.wg.Wait() }()
	n.wg.Add(1)
	go func() { defer n.wg.Done(); n.health.Run(ctx) }()
	n.runVIP(ctx)
	if err := n.cluster.Start(ctx); err != nil {
		ln.Close()
		return err
	}
	if redir != nil {
		redir.start()
	}
	n.publishLoops(ctx)
	// issue 24: the audit log's writer
	n.runAccounts(ctx)
	if !n.cfg.Standalone() && (n.cfg.Sched.Policy == "integrated" || len(n.cfg.Sched.Proximity) > 0) { // integrated load has an rt term
		n.wg.Add(1)
		go func() { defer n.wg.Done(); n.probeLoop(ctx) }()
	}
	srv := &http.Server{
		Handler:           n.handler,
		ReadHeaderTimeout: n.timeouts.ReadHeader,
		ReadTimeout:       n.timeouts.Read,
		WriteTimeout:      n.timeouts.Write,
		IdleTimeout:       n.timeouts.Idle,
		ConnState:         httpx.SlowHeadConnState, // 408 to a client whose header crawls in
		MaxHeaderBytes:    n.timeouts.MaxHeader,
		ErrorLog:          slog.NewLogLogger(n.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	srv.RegisterOnShutdown(n.hub.Close)
	srv.RegisterOnShutdown(n.localHub.Close)
	srv.RegisterOnShutdown(n.logHub.Close)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// Our row and, when we are master, the queue exist before we say we
	// are ready: no 503 for a board that just said it is ready.
	n.cluster.ReportNow()
	n.master.follow(n.cluster.Snapshot())
	n.ready.Store(true)
	n.cluster.ReportNow() // running now
	wd := n.watchdog(ln.Addr())
	n.wg.Add(2)
	go func() { defer n.wg.Done(); wd.Run(ctx) }()
	go func() { defer n.wg.Done(); supervise.New(n.cfg.Supervise, n.log).Run(ctx) }()
	wd.Ready()
	n.log.Info("serving", "name", n.cfg.Node.Name, n.sec.scheme(), ln.Addr().String(), "config", n.cfg.Path)
	n.runMDNS(ctx, ln.Addr()) // issue 28: announce on the LAN, [node] mdns (node/mdns.go)

	select {
	case err := <-errc:
		n.ready.Store(false)
		n.cluster.Shutdown()
		return fmt.Errorf("node: serve: %w", err)
	case <-ctx.Done():
	case <-n.stopReq:
		n.log.Info("stopping for a " + n.Exit().String())
	}
	n.ready.Store(false)
	wd.Stopping()
	// Hand mastership over first, so peers take over while we drain.
	n.cluster.Shutdown()
	n.log.Info("stopping: no new connections, waiting for in-flight requests", "timeout", n.cfg.HTTP.ShutdownTimeout.Duration)
	// scancel, not cancel: the deferred stop of the loops above must keep
	// the loops' own cancel (Run may return without ctx being cancelled).
	sctx, scancel := context.WithTimeout(context.Background(), n.cfg.HTTP.ShutdownTimeout.Duration)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		n.log.Warn("in-flight requests cut at shutdown timeout", "err", err)
		_ = srv.Close()
	}
	<-errc
	n.log.Info("stopped")
	return nil
}

// Listen opens a TCP listener and turns "address in use" into an error that
// names the port and says what to do.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("node: listen %s: address in use: another process (another ews?) holds this port; stop it or change node.http", addr)
		}
		return nil, fmt.Errorf("node: listen %s: %w", addr, err)
	}
	return ln, nil
}

// onClose registers f to run at shutdown, in reverse order of registration.
func (n *Node) onClose(f func()) { n.closers = append(n.closers, f) }

func (n *Node) close() {
	n.closeOnce.Do(func() {
		for i := len(n.closers) - 1; i >= 0; i-- {
			n.closers[i]()
		}
	})
}

// watchdog pets systemd's watchdog (WatchdogSec) only while the HTTP server
// answers /healthz on loopback and the cluster's state can be read: a hung
// main loop gets ews restarted. Without systemd it does nothing.
func (n *Node) watchdog(addr net.Addr) *sdnotify.Watchdog {
	url, client := sdnotify.LoopbackURL(addr, "/healthz"), &http.Client{Timeout: 2 * time.Second}
	if n.sec.on() {
		url = "https" + strings.TrimPrefix(url, "http")
		client.Transport = &http.Transport{TLSClientConfig: n.sec.client}
	}
	return sdnotify.NewWatchdog(n.log, []sdnotify.Probe{
		sdnotify.HTTPProbe("http", url, client),
		{Name: "cluster", Check: func(ctx context.Context) error {
			done := make(chan struct{})
			go func() { n.cluster.Snapshot(); close(done) }()
			select {
			case <-done:
				return nil
			case <-ctx.Done():
				return errors.New("cluster state locked")
			}
		}},
	})
}
