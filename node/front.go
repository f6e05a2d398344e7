package node

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// master owns the dispatcher while this board is master: one is created
// when the board takes over and closed (every queued request answered 503)
// when it steps down.
type master struct {
	n     *Node
	front *dispatch.Front
	mu    sync.Mutex
	d     *sched.Dispatcher // nil while not master
}

// newFront builds the front door for work: on the master it queues by
// class and dispatches; elsewhere it passes requests to the master or runs
// the ones the master marked for this board.
func (n *Node) newFront(work http.Handler) (*dispatch.Front, error) {
	key, note, err := dispatch.KeyFromConfig(n.cfg)
	if err != nil {
		return nil, err
	}
	if note != "" {
		n.log.Warn(note)
	}
	marker, err := dispatch.NewMarker(key, dispatch.MarkOptions{})
	if err != nil {
		return nil, err
	}
	return dispatch.NewFront(dispatch.Options{
		Cluster:      frontCluster{n},
		Local:        work,
		Marker:       marker,
		Pin:          n.pin(),
		Mode:         n.cfg.Sched.Mode,
		StickyCookie: n.cfg.Sched.Sticky == sched.StickyCookie,
		RedirectHold: n.cfg.Cluster.Heartbeat.Duration,
		MasterWait:   n.cfg.Cluster.TMax.Duration + n.cfg.Cluster.Heartbeat.Duration,
		ReplayMax:    min(n.cfg.HTTP.MaxBody, dispatch.DefaultReplayMax),
		Transport:    dispatch.NewTransport(dispatch.TransportOptions{ResponseHeaderTimeout: n.cfg.CGI.Timeout.Duration + 5*time.Second}),
		Registerer:   n.reg,
		Logger:       n.log,
	})
}

// pin sends a device request to the board the device is wired to. A
// request for a node = "any" device that carries an Idempotency-Key is
// pinned to one board chosen by hashing the key over the peers, so a retry
// (through any master, after a takeover too) reaches the board that holds
// the first result: the action runs at most once (invariant 5).
func (n *Node) pin() func(r *http.Request) string {
	byDevice := dispatch.PinByDevice(n.cfg.Devices)
	peers, _ := n.cfg.Peers()
	names := make([]string, len(peers))
	for i, p := range peers {
		names[i] = p.Name
	}
	return func(r *http.Request) string {
		b := byDevice(r)
		if (b == "" || b == "any") && r.Method == http.MethodPost && len(names) > 0 && strings.HasPrefix(r.URL.Path, "/api/devices/") {
			if k := r.Header.Get("Idempotency-Key"); k != "" {
				return sched.RendezvousPick(k, names)
			}
		}
		return b
	}
}

// follow keeps the dispatcher in step with the table: created on becoming
// master, fed every change, closed on stepping down. Runs on the cluster's
// goroutine (OnChange), one call at a time.
func (m *master) follow(v state.View) {
	isMaster := v.Master != "" && v.Master == v.Self
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case isMaster && m.d == nil:
		d, err := sched.NewDispatcher(m.n.cfg.Sched.SchedConfig(), sched.Options{Registerer: m.n.reg, Logger: m.n.log})
		if err != nil {
			m.n.log.Error("dispatch: cannot start the queue", "err", err)
			return
		}
		m.d = d
		m.update()
		m.front.SetDispatcher(d)
		m.n.cluster.SetQueue(d.Depths)
		m.n.cluster.SetCompleted(d.Started)
		m.n.log.Info("dispatching as master", "epoch", v.Epoch, "policy", m.n.cfg.Sched.Policy)
	case isMaster:
		m.update()
	case m.d != nil:
		m.front.StepDown()
		m.d = nil
		m.n.cluster.SetQueue(nil) // the new master's stats come in its tables
		m.n.cluster.SetCompleted(nil)
		m.n.log.Info("stopped dispatching: not master", "master", v.Master, "epoch", v.Epoch)
	}
}

// open reports whether the dispatcher runs.
func (m *master) open() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.d != nil
}

// update feeds the dispatcher the boards' own reports (invariant 3).
func (m *master) update() {
	dispatch.Update(m.d, m.n.cluster.Boards(), m.n.rt.get)
}

// gate asks for credentials before a control request enters the queue, so
// unauthenticated requests cannot fill it; the board that runs the request
// checks them again.
func (n *Node) gate(next http.Handler) http.Handler {
	guarded := n.auth.Require(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/cgi-bin/") || (r.Method != http.MethodGet && r.Method != http.MethodHead && strings.HasPrefix(p, "/api/devices/")) {
			guarded.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// frontCluster is the cluster as the front door sees it. When this board has
// just become master and the table change has not reached follow yet, the
// first request opens the queue itself instead of being told 503.
type frontCluster struct{ n *Node }

func (c frontCluster) Self() string                             { return c.n.cluster.Self() }
func (c frontCluster) Epoch() uint64                            { return c.n.cluster.Epoch() }
func (c frontCluster) Master() (name, httpAddr string, ok bool) { return c.n.cluster.Master() }

func (c frontCluster) IsMaster() bool {
	if !c.n.cluster.IsMaster() {
		return false
	}
	if !c.n.master.open() {
		c.n.master.follow(c.n.cluster.Snapshot())
	}
	return true
}
