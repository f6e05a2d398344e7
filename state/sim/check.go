package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/ews-firmware/ews/state"
)

// Violation is a broken invariant of docs/DESIGN.md ("Cluster invariants"):
// its number (0: the simulator itself failed) and what was seen.
type Violation struct {
	At        time.Duration // virtual time since the run began
	Invariant int
	What      string
}

func (v Violation) String() string {
	return fmt.Sprintf("t=%v invariant %d: %s", v.At, v.Invariant, v.What)
}

func (w *world) violate(inv int, format string, args ...any) {
	if w.fail != nil {
		return
	}
	w.fail = &Violation{At: w.at(), Invariant: inv, What: fmt.Sprintf(format, args...)}
	w.trace.event(w.at(), "VIOLATION %s", w.fail)
}

// checkRule holds a board to invariant 2's rule after each of its
// events: the master it follows changes only to a higher epoch or, at
// the same epoch, to a lower rank, unless the master it followed fell
// silent for tmax (then it follows the board that takes over, whatever
// its epoch).
func (w *world) checkRule(r int) {
	b := w.boards[r]
	m, ep := b.e.Master()
	if m == b.master && ep == b.epoch {
		return
	}
	silent := false
	if o := w.rankOf(b.master); o >= 0 && o != r {
		silent = w.now.Sub(w.master[r][o]) >= w.cfg.Timing.TMax
	}
	switch {
	case silent:
	case ep < b.epoch:
		w.violate(2, "%s went from %s@%d back to %s@%d", name(r), b.master, b.epoch, m, ep)
	case ep == b.epoch && b.master != "" && m != "" && w.rankOf(m) > w.rankOf(b.master):
		w.violate(2, "%s went from %s@%d to %s@%d: same epoch, higher rank", name(r), b.master, b.epoch, m, ep)
	}
	b.master, b.epoch = m, ep
}

// checkPlaced holds a placement of master r on board to to invariants 3
// and 4: the board was heard within tthreshold (by what r really took,
// not by what its table says) and r has fewer than its capacity running
// there.
func (w *world) checkPlaced(r, to int, rows []state.Board) {
	if to < 0 {
		w.violate(0, "%s placed a request on a board it does not know", name(r))
		return
	}
	if to != r {
		if h := w.heard[r][to]; h.IsZero() || w.now.Sub(h) > w.cfg.Timing.TThreshold {
			w.violate(3, "%s placed a request on %s, last heard %v ago (tthreshold %v); its row says %v",
				name(r), name(to), w.now.Sub(h), w.cfg.Timing.TThreshold, rows[to].Runstate)
			return
		}
	}
	if n, c := w.open(w.boards[r].d, to)+1, w.boards[to].capacity; n > c {
		w.violate(4, "%s has %d requests running on %s, whose capacity is %d", name(r), n, name(to), c)
	}
}

// checkStep runs the checks of every step: in each master's view a board
// not heard within tthreshold is down and a live board's linknum is not
// negative (invariant 3); in a calm network, two masters that hear each
// other settle within a heartbeat and two ticks (invariant 2).
func (w *world) checkStep() {
	th := w.cfg.Timing.TThreshold
	for _, b := range w.boards {
		if b.e != nil && b.inFlight > b.capacity {
			w.overfull++
		}
	}
	var masters []int
	for r, b := range w.boards {
		if b.e == nil || !b.e.IsMaster() {
			continue
		}
		masters = append(masters, r)
		for o, row := range b.e.Boards(w.now) {
			if o == r || row.Runstate == state.Down {
				continue
			}
			if h := w.heard[r][o]; h.IsZero() || w.now.Sub(h) > th {
				w.violate(3, "master %s shows %s %v, last heard %v ago (tthreshold %v)", name(r), name(o), row.Runstate, w.now.Sub(h), th)
				return
			}
			if row.Linknum < 0 {
				w.violate(3, "master %s shows %s with linknum %d", name(r), name(o), row.Linknum)
				return
			}
		}
		if b.d != nil {
			for _, sb := range b.d.Boards() {
				if sb.Linknum < 0 {
					w.violate(3, "master %s's dispatcher counts %d requests on %s", name(r), sb.Linknum, sb.Name)
					return
				}
			}
		}
	}
	w.checkDual(masters)
}

// checkDual: in a calm network two masters that hear each other must
// settle within one heartbeat and two ticks.
func (w *world) checkDual(masters []int) {
	dual := false
	for _, a := range masters {
		for _, b := range masters {
			if a < b && w.net.hear(a, b) {
				dual = true
			}
		}
	}
	if !dual || !w.net.faults.calm() {
		w.dual = 0
		return
	}
	if w.dual++; w.dual > int(w.cfg.Timing.Heartbeat/w.cfg.Timing.Tick)+2 {
		w.violate(2, "two masters that hear each other for %d ticks: %v", w.dual, w.masters())
	}
}

// masters lists "name@epoch" of each live board that believes it is master.
func (w *world) masters() []string {
	var out []string
	for r, b := range w.boards {
		if b.e != nil && b.e.IsMaster() {
			out = append(out, fmt.Sprintf("%s@%d", name(r), b.e.Epoch()))
		}
	}
	return out
}

// sides are the sets of live boards that hear each other (the shape is
// transitive when this is called).
func (w *world) sides() [][]int {
	var out [][]int
	seen := make([]bool, len(w.boards))
	for r, b := range w.boards {
		if b.e == nil || seen[r] {
			continue
		}
		side := []int{r}
		seen[r] = true
		for o := r + 1; o < len(w.boards); o++ {
			if w.boards[o].e != nil && !seen[o] && w.net.hear(r, o) {
				side = append(side, o)
				seen[o] = true
			}
		}
		out = append(out, side)
	}
	return out
}

// checkSettled holds invariant 2's bound: within every set of boards that
// hear each other, one master, which every board of the set follows. A
// preempt claim under way (within a heartbeat and two ticks, the time two
// masters that hear each other take to settle) is waited for: it reports
// false, and is called again the next step.
func (w *world) checkSettled(why string) bool {
	for _, b := range w.boards {
		if b.e != nil && !b.preempted.IsZero() && w.now.Sub(b.preempted) <= w.cfg.Timing.Heartbeat+2*w.cfg.Timing.Tick {
			return false
		}
	}
	for _, side := range w.sides() {
		var ms []int
		for _, r := range side {
			if w.boards[r].e.IsMaster() {
				ms = append(ms, r)
			}
		}
		if len(ms) != 1 {
			w.violate(2, "%s: side %v has masters %v, want one", why, names(side), names(ms))
			return true
		}
		m, ep := name(ms[0]), w.boards[ms[0]].e.Epoch()
		for _, r := range side {
			if got, gep := w.boards[r].e.Master(); got != m || gep != ep {
				w.violate(2, "%s: %s follows %s@%d, but its side %v has master %s@%d", why, name(r), got, gep, names(side), m, ep)
				return true
			}
		}
	}
	return true
}

// checkRunstates: after the heal every board's view shows every board
// running under the one master (runstate converges).
func (w *world) checkRunstates(why string) {
	var want string
	for r, b := range w.boards {
		v := b.e.View(w.now)
		if want == "" {
			want = v.Master
		}
		if v.Master != want {
			w.violate(2, "%s: %s's view has master %q, %s's %q", why, name(r), v.Master, name(0), want)
			return
		}
		for _, n := range v.Nodes {
			if n.Runstate != state.Running {
				w.violate(3, "%s: %s's view shows %s %v", why, name(r), n.Name, n.Runstate)
				return
			}
		}
	}
	if w.preemptWant() != "" && !slices.Contains(w.masters(), w.preemptWant()) {
		w.violate(1, "%s: preempt is on, and the master is %v, not %s", why, w.masters(), w.preemptWant())
	}
}

// preemptWant is, with preempt on and every board up, the master the
// rule names: the first peer ("name@epoch" without the epoch is checked
// by its prefix), else "".
func (w *world) preemptWant() string {
	if !w.cfg.Timing.Preempt {
		return ""
	}
	return fmt.Sprintf("%s@%d", name(0), w.boards[0].e.Epoch())
}
