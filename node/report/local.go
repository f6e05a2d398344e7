// Package report is what this board tells the cluster about itself each heartbeat: its load, runstate, capacity, credentials and the master's queue.
package report

import (
	"net"
	"sync/atomic"

	"github.com/ews-firmware/ews/state"
)

// LoadSource is what the board reports as its load each heartbeat.
type LoadSource interface{ Load() state.Load }

// Local is what this board tells the cluster about itself (state.Local):
// its own in-flight count of dispatched work is the truth for its linknum
// (invariant 3). Its fields are set once by the board's build, before
// anything runs.
type Local struct {
	Ready       func() bool    // the HTTP server serves
	Health      Runstater      // the runstate once it does (node/health)
	Figures     LoadSource     // the load of each report
	Fingerprint *atomic.Uint64 // of this board's credentials
	Addr        func() string  // where other boards forward to
	Auto        *AutoSlots     // [node] capacity = "auto"; nil: the configured capacity
	Over        *OverloadWatch // integrated's overload hold on this board's reports; nil: no hold
	// Built after the cluster, which needs Local.
	Work  WorkCount // the front door
	Queue Queuer    // the master's queue; nil: none
}

// Runstater is the board's health checks (node/health).
type Runstater interface{ Runstate() string }

// WorkCount is the front door's count of the work this board runs.
type WorkCount interface {
	InFlight() int
	Completed() uint64
}

// Queuer is the master's queue while this board runs it: its depths and
// started counts per class, false while not master.
type Queuer interface {
	QueueStats() (map[string]int, map[string]uint64, bool)
}

var (
	_ state.Local        = (*Local)(nil)
	_ state.Queuer       = (*Local)(nil)
	_ state.HTTPAddrer   = (*Local)(nil)
	_ state.Credentialer = (*Local)(nil)
	_ state.Capacitor    = (*Local)(nil)
)

// Creds is the fingerprint of this board's credentials (auth.Fingerprint
// under the cluster key), for its reports.
func (l *Local) Creds() uint64 { return l.Fingerprint.Load() }

// QueueStats is the master's queue, while this board runs it; a
// follower's /api/cluster shows the master's from its tables.
func (l *Local) QueueStats() (map[string]int, map[string]uint64, bool) {
	if l.Queue == nil {
		return nil, nil, false
	}
	return l.Queue.QueueStats()
}

func (l *Local) InFlight() int     { return l.Work.InFlight() }
func (l *Local) Completed() uint64 { return l.Work.Completed() }
func (l *Local) HTTPAddr() string  { return l.Addr() }

// Load is this board's load for its next report, also judged against the
// overload hold the master will apply to it (OverloadWatch).
func (l *Local) Load() state.Load {
	ld := l.Figures.Load()
	if l.Over != nil {
		l.Over.observe(ld)
	}
	return ld
}

// Runstate is joining until the HTTP server serves, then what health says
// (a name health does not know is down).
func (l *Local) Runstate() state.Runstate {
	if !l.Ready() {
		return state.Joining
	}
	rs, err := state.ParseRunstate(l.Health.Runstate())
	if err != nil {
		return state.Down
	}
	return rs
}

// Capacity is the slots to report now (state.Capacitor); 0 without auto
// keeps the configured capacity.
func (l *Local) Capacity() int {
	if l.Auto == nil || l.Work == nil {
		return 0
	}
	return l.Auto.est.Observe(l.Auto.now(), l.Work.Completed(), l.Work.InFlight())
}

// HTTPAddr is the address other boards forward to: the listener's real
// port, with a wildcard host replaced by node.advertise or this board's
// gossip host in cluster.peers (the host the others check its reports
// against), else node.gossip's; "" before Run listens.
func HTTPAddr(st state.Config, addr func() net.Addr) func() string {
	gossip := st.Gossip
	for _, p := range st.Peers {
		if p.Name == st.Name {
			gossip = p.Addr
		}
	}
	return func() string {
		a := addr()
		if a == nil {
			return ""
		}
		return state.AdvertiseHTTP(st.Advertise, gossip, a.String())
	}
}
