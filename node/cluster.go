package node

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/health"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// loadSource is what the board reports as its load each heartbeat.
type loadSource interface{ Load() state.Load }

// local is what this board tells the cluster about itself (state.Local):
// its own in-flight count of dispatched work is the truth for its linknum
// (invariant 3).
type local struct {
	ready  func() bool     // the HTTP server serves (Node.Ready)
	health *health.Checker // the runstate once it does
	load   loadSource
	creds  *atomic.Uint64 // fingerprint of this board's credentials (accessSide.creds)
	addr   func() string  // where other boards forward to (Node.httpAddr)
	auto   *autoSlots     // [node] capacity = "auto"; nil: the configured capacity
	over   *overloadWatch // integrated's overload hold on this board's reports; nil: no hold
	// Built after the cluster, which needs local: set once by build, before
	// anything runs.
	work   workCount // the front door
	master *master
}

// workCount is the front door's count of the work this board runs.
type workCount interface {
	InFlight() int
	Completed() uint64
}

var (
	_ state.Local        = (*local)(nil)
	_ state.Queuer       = (*local)(nil)
	_ state.HTTPAddrer   = (*local)(nil)
	_ state.Credentialer = (*local)(nil)
)

// Creds is the fingerprint of this board's credentials (auth.Fingerprint
// under the cluster key), for its reports.
func (l *local) Creds() uint64 { return l.creds.Load() }

// QueueStats is the master's queue, while this board runs it; a
// follower's /api/cluster shows the master's from its tables.
func (l *local) QueueStats() (map[string]int, map[string]uint64, bool) {
	m := l.master
	if m == nil {
		return nil, nil, false
	}
	m.mu.Lock()
	d := m.d
	m.mu.Unlock()
	if d == nil {
		return nil, nil, false
	}
	return d.Depths(), d.Started(), true
}

func (l *local) InFlight() int     { return l.work.InFlight() }
func (l *local) Completed() uint64 { return l.work.Completed() }
func (l *local) HTTPAddr() string  { return l.addr() }

// Load is this board's load for its next report, also judged against the
// overload hold the master will apply to it (overloadWatch).
func (l *local) Load() state.Load {
	ld := l.load.Load()
	if l.over != nil {
		l.over.observe(ld)
	}
	return ld
}

// Runstate is joining until the HTTP server serves, then what health says
// (a name health does not know is down).
func (l *local) Runstate() state.Runstate {
	if !l.ready() {
		return state.Joining
	}
	rs, err := state.ParseRunstate(l.health.Runstate())
	if err != nil {
		return state.Down
	}
	return rs
}

// httpAddr is the address other boards forward to: the listener's real
// port, with a wildcard host replaced by node.advertise or this board's
// gossip host in cluster.peers (the host the others check its reports
// against), else node.gossip's; "" before Run listens.
func (n *Node) httpAddr() string {
	a := n.Addr()
	if a == nil {
		return ""
	}
	gossip := n.boot.State.Gossip
	for _, p := range n.boot.State.Peers {
		if p.Name == n.boot.State.Name {
			gossip = p.Addr
		}
	}
	return state.AdvertiseHTTP(n.boot.State.Advertise, gossip, a.String())
}

func (n *Node) serveCluster(w http.ResponseWriter, r *http.Request) {
	httpx.JSON(w, http.StatusOK, n.view())
}

// view is the cluster table with the boards this master saw refuse
// forwarded credentials lately marked auth_mismatch too (the gossiped
// fingerprints mark the rest), and this board's own row marked with the
// load figures it could not read.
func (n *Node) view() state.View {
	return n.acc.boards.Mark(n.clockOffsets(n.monitored(n.markUnknown(n.clu.refusals.mark(n.clu.cluster.Snapshot(), time.Now()))))) // node/boardrevoke
}

// clockOffsets sets each row's clock_offset_ms: the board's clock against
// this one's, as this board measured it (docs/DESIGN.md, Time).
func (n *Node) clockOffsets(v state.View) state.View {
	offs := n.clu.cluster.ClockOffsets()
	for i := range v.Nodes {
		d, ok := offs[v.Nodes[i].Name]
		if v.Nodes[i].Name == v.Self {
			d, ok = 0, true
		}
		if ok {
			ms := d.Milliseconds()
			v.Nodes[i].ClockOffsetMs = &ms
		}
	}
	return v
}

// monitored adds paper 003's monitoring table to the view: the response
// times this master probed (rt_ms) and the policy with its limits.
func (n *Node) monitored(v state.View) state.View {
	sc := n.live.Load().Sched // the policy now (node/liveconf)
	v.Policy = sc.Policy
	if v.Policy == "integrated" || len(sc.Proximity) > 0 {
		v.Limits = sched.NewIntegrated(sc.Integrated).Limits()
	}
	if v.Master != v.Self {
		return v // only the master probes
	}
	for i := range v.Nodes {
		if d := n.clu.rt.get(v.Nodes[i].Name); d > 0 {
			v.Nodes[i].RTMs = float64(d.Microseconds()) / 1000
		}
	}
	return v
}

// unknowner is a loadSource that says which figures it could not read
// and its last run queue (procload.Sampler).
type unknowner interface {
	Unknown() state.LoadFigures
	RunQueue() float64
}

// markUnknown sets load_unknown and load.run_queue on this board's own
// row: only the board knows them (reports do not carry them, so rows
// stay within 64 bytes).
func (n *Node) markUnknown(v state.View) state.View {
	u, ok := n.clu.load.(unknowner)
	if !ok {
		return v
	}
	f, q := u.Unknown(), u.RunQueue()
	for i := range v.Nodes {
		if v.Nodes[i].Name == v.Self {
			v.Nodes[i].LoadUnknown = f
			v.Nodes[i].Load.RunQueue = q
		}
	}
	return v
}
