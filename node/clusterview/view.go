// Package clusterview is the cluster table as this board serves it (GET /api/cluster, /events): marked with refusals, clock offsets, probed response times and unknown load figures.
package clusterview

import (
	"crypto/tls"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// Cluster is what the view reads of the cluster (state.Cluster).
type Cluster interface {
	Snapshot() state.View
	ClockOffsets() map[string]time.Duration
	IsMaster() bool
	Boards() []state.Board
}

// Marker marks what another module knows of the boards (node/boardrevoke's
// revoked boards).
type Marker interface{ Mark(state.View) state.View }

// Options are what the view needs of the board.
type Options struct {
	Cluster    Cluster
	Standalone bool                // no peers: nothing to probe
	Sched      func() sched.Config // the policy now (node/liveconf)
	Load       any                 // this board's load source; one that says which figures it could not read marks them
	Revoked    Marker
	Creds      *atomic.Uint64 // this board's credentials' fingerprint; 0: none to compare
	TLS        *tls.Config    // the probes' client; nil: plain HTTP
	Scheme     string         // of the probes' URLs
}

// View is the cluster table as this board serves it, and the master's
// probes of the boards' response times. Run probes.
type View struct {
	o        Options
	rt       probes
	refusals refusals
}

// New makes the view; nothing runs until Run.
func New(o Options) *View { return &View{o: o} }

// Now is the cluster table with the boards this master saw refuse
// forwarded credentials lately marked auth_mismatch too (the gossiped
// fingerprints mark the rest), and this board's own row marked with the
// load figures it could not read.
func (v *View) Now() state.View {
	return v.o.Revoked.Mark(v.clockOffsets(v.monitored(v.markUnknown(v.Refusals(v.o.Cluster.Snapshot())))))
}

// Refusals is t with the boards that refused credentials lately marked.
func (v *View) Refusals(t state.View) state.View { return v.refusals.mark(t, time.Now()) }

// Refused is the front door's Options.OnAuthRefused: board refused
// credentials this master accepted.
func (v *View) Refused(board string) { v.refusals.seen(board, time.Now()) }

// RT is the response time the master probed of board (sched.Options.RT).
func (v *View) RT(board string) time.Duration { return v.rt.get(board) }

// Routes mounts GET /api/cluster.
func (v *View) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/cluster", func(w http.ResponseWriter, r *http.Request) { httpx.JSON(w, http.StatusOK, v.Now()) })
}

// CredsDiffer reports whether board's credentials really differ from this
// board's (dispatch.Options.CredsDiffer): the gossiped fingerprints say so,
// or this board has none to compare (no cluster key), so a 401 after this
// board accepted the credentials is the only evidence (docs/NOTES.md
// "A board's 401").
func (v *View) CredsDiffer(board string) bool {
	if v.o.Creds.Load() == 0 {
		return true
	}
	for _, b := range v.o.Cluster.Snapshot().Nodes {
		if b.Name == board {
			return b.AuthMismatch
		}
	}
	return false
}

// clockOffsets sets each row's clock_offset_ms: the board's clock against
// this one's, as this board measured it (docs/DESIGN.md, Time).
func (v *View) clockOffsets(t state.View) state.View {
	offs := v.o.Cluster.ClockOffsets()
	for i := range t.Nodes {
		d, ok := offs[t.Nodes[i].Name]
		if t.Nodes[i].Name == t.Self {
			d, ok = 0, true
		}
		if ok {
			ms := d.Milliseconds()
			t.Nodes[i].ClockOffsetMs = &ms
		}
	}
	return t
}

// monitored adds paper 003's monitoring table to the view: the response
// times this master probed (rt_ms) and the policy with its limits.
func (v *View) monitored(t state.View) state.View {
	sc := v.o.Sched()
	t.Policy = sc.Policy
	if t.Policy == "integrated" || len(sc.Proximity) > 0 {
		t.Limits = sched.NewIntegrated(sc.Integrated).Limits()
	}
	if t.Master != t.Self {
		return t // only the master probes
	}
	for i := range t.Nodes {
		if d := v.rt.get(t.Nodes[i].Name); d > 0 {
			t.Nodes[i].RTMs = float64(d.Microseconds()) / 1000
		}
	}
	return t
}

// unknowner is a load source that says which figures it could not read
// and its last run queue (procload.Sampler).
type unknowner interface {
	Unknown() state.LoadFigures
	RunQueue() float64
}

// markUnknown sets load_unknown and load.run_queue on this board's own
// row: only the board knows them (reports do not carry them, so rows
// stay within 64 bytes).
func (v *View) markUnknown(t state.View) state.View {
	u, ok := v.o.Load.(unknowner)
	if !ok {
		return t
	}
	f, q := u.Unknown(), u.RunQueue()
	for i := range t.Nodes {
		if t.Nodes[i].Name == t.Self {
			t.Nodes[i].LoadUnknown = f
			t.Nodes[i].Load.RunQueue = q
		}
	}
	return t
}
