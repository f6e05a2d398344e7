package node

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// overloadWatch is the integrated policy's overload hold (cpu over
// limits.cpu_overload for overload) judged by this board on the figures it
// reports, each as it goes out: the master holds the board from new
// requests on the same figures while the other boards have room for what
// it runs (sched.Integrated's room test; this board sees only itself and
// holds as the paper writes it), and the board's front door sends its
// redirect-mode clients back to the master while held, so they move away
// too (docs/NOTES.md, Dispatch: redirect once, then direct).
type overloadWatch struct {
	now  func() time.Time
	mu   sync.Mutex
	rule *sched.Integrated
	b    sched.Board // this board, as the rule sees it
	held atomic.Bool
}

func newOverloadWatch(lm sched.LoadModel, now func() time.Time) *overloadWatch {
	if now == nil {
		now = time.Now
	}
	return &overloadWatch{now: now, rule: sched.NewIntegrated(lm)}
}

// observe judges one report's load as the master will: the figures it
// reads off the wire (per mille), so both sides cross the limit together.
func (w *overloadWatch) observe(l state.Load) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Load = l.Wire().Load()
	w.held.Store(w.rule.Observe(&w.b, w.now()))
}

// Held says whether the last report put this board in the overload hold.
func (w *overloadWatch) Held() bool { return w.held.Load() }

// overloaded is the front door's Options.Overloaded: nil (never) unless
// the policy holds overloaded boards.
func (n *Node) overloaded() func() bool {
	if w := n.clu.local.over; w != nil {
		return w.Held
	}
	return nil
}
