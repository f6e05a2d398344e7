package state

import "time"

// BoardState is one board as the master's dispatcher needs it: the board's
// own last report, not the table's linknum. InFlight is the truth the
// dispatcher adds its own dispatches to (invariant 3); -1 before any report.
type BoardState struct {
	Name     string
	Rank     int
	HTTP     string // "" before any report
	Capacity int
	Weight   int
	Runstate string // joining is shown as running; down when silent for tthreshold
	Load     Load
	InFlight int // -1: no report yet
}

// Boards returns every configured board in rank order as this board knows
// it from the reports (its own included).
func (e *Election) Boards(now time.Time) []BoardState {
	out := make([]BoardState, len(e.peers))
	for r, p := range e.peers {
		b := &e.boards[r]
		s := BoardState{Name: p.Name, Rank: r, Runstate: Down.String(), InFlight: -1}
		if b.hasReport {
			rep := &b.report
			s.HTTP, s.Capacity, s.Weight, s.Load = rep.HTTP, int(rep.Capacity), int(rep.Weight), rep.Wire().Load()
			s.InFlight = int(rep.InFlight)
			rs := rep.Runstate
			if rs == Joining {
				rs, s.InFlight = Running, 0
			}
			if !e.alive(r, now) {
				rs = Down
			}
			s.Runstate = rs.String()
		}
		out[r] = s
	}
	return out
}

// Boards returns every configured board in rank order from the boards' own
// reports: what the master's dispatcher should be updated with (sched's
// Board.Linknum = InFlight, Running = Runstate == "running").
func (c *Cluster) Boards() []BoardState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.e.Boards(time.Now())
}

// Self is this board's name.
func (c *Cluster) Self() string { return c.self.Name }

// Epoch is the current master's epoch as this board knows it.
func (c *Cluster) Epoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.e.epoch
}
