package report

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// OverloadWatch is the integrated policy's overload hold (cpu over
// limits.cpu_overload for overload) judged by this board on the figures it
// reports, each as it goes out: the master holds the board from new
// requests on the same figures while the other boards have room for what
// it runs (sched.Integrated's room test; this board sees only itself and
// holds as the paper writes it), and the board's front door sends its
// redirect-mode clients back to the master while held, so they move away
// too (docs/NOTES.md, Dispatch: redirect once, then direct).
type OverloadWatch struct {
	now  func() time.Time
	mu   sync.Mutex
	rule *sched.Integrated
	b    sched.Board // this board, as the rule sees it
	held atomic.Bool
}

// NewOverloadWatch judges with the integrated policy's lm; now nil: the
// wall clock.
func NewOverloadWatch(lm sched.LoadModel, now func() time.Time) *OverloadWatch {
	if now == nil {
		now = time.Now
	}
	return &OverloadWatch{now: now, rule: sched.NewIntegrated(lm)}
}

// observe judges one report's load as the master will: the figures it
// reads off the wire (per mille), so both sides cross the limit together.
func (w *OverloadWatch) observe(l state.Load) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Load = l.Wire().Load()
	w.held.Store(w.rule.Observe(&w.b, w.now()))
}

// Held says whether the last report put this board in the overload hold.
func (w *OverloadWatch) Held() bool { return w.held.Load() }

// Overloaded is the front door's Options.Overloaded: nil (never) unless
// the policy holds overloaded boards.
func (l *Local) Overloaded() func() bool {
	if l.Over != nil {
		return l.Over.Held
	}
	return nil
}
