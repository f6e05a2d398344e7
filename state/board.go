package state

import (
	"time"

	"github.com/ews-firmware/ews/state/row"
)

// Board is one board's row (row.Board): a row of GET /api/cluster's
// nodes[] and the master dispatcher's input. In a View it is the master's
// table; from Cluster.Boards it is the board's own last report.
type Board = row.Board

// board is peer rank r as this board knows it from its reports at now: a
// fresh start (joining) counts as running with nothing in flight; a board
// not heard within tthreshold is down. Linknum is -1 before any report.
func (e *Election) board(r int, now time.Time) Board {
	p, b := e.peers[r], &e.boards[r]
	out := Board{Name: p.Name, Rank: r, Addr: p.Addr, Runstate: Down, Linknum: -1, LastSeenMs: -1}
	if !b.heard.IsZero() {
		out.LastSeenMs = max(now.Sub(b.heard).Milliseconds(), 0)
	}
	if !b.hasReport {
		return out
	}
	rep := &b.report
	out.HTTP, out.Capacity, out.Weight, out.Load = rep.HTTP, int(rep.Capacity), int(rep.Weight), rep.FullLoad()
	out.Linknum, out.Runstate, out.Simulated = int(rep.InFlight), rep.Runstate, rep.Simulated
	if out.Runstate == Joining {
		out.Runstate, out.Linknum = Running, 0
	}
	if !e.alive(r, now) {
		out.Runstate = Down
	}
	return out
}

// Boards returns every configured board in rank order from the boards' own
// reports (its own included): what the master's dispatcher is fed.
func (e *Election) Boards(now time.Time) []Board {
	out := make([]Board, len(e.peers))
	for r := range e.peers {
		out[r] = e.board(r, now)
	}
	return out
}

// Boards returns every configured board in rank order from the boards' own
// reports: what the master's dispatcher should be updated with.
func (c *Cluster) Boards() []Board {
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
