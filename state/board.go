package state

import "time"

// Board is one board's row: a row of GET /api/cluster's nodes[] and the
// master dispatcher's input, the same type for both. In a View it is the
// master's table; from Cluster.Boards it is the board's own last report.
// Either way Linknum is the board's own in-flight count (invariant 3).
type Board struct {
	Name     string   `json:"name"`
	Rank     int      `json:"rank"`
	Addr     string   `json:"addr"` // gossip host:port from cluster.peers
	HTTP     string   `json:"http"` // from the board's own report; "" until heard
	Linknum  int      `json:"linknum"`
	Capacity int      `json:"capacity"`
	Weight   int      `json:"weight"`
	Runstate Runstate `json:"runstate"` // "joining" | "running" | "overloaded" | "down" in JSON
	Load     Load     `json:"load"`
	// LastSeenMs is how long ago the master last heard the board, as of now;
	// -1 when it never has.
	LastSeenMs int64 `json:"last_seen_ms"`
	// AuthMismatch is set (in a View) when the board's reported credentials
	// fingerprint differs from the master's: it refuses the requests the
	// master forwards with 401. Omitted when false.
	AuthMismatch bool `json:"auth_mismatch,omitempty"`
	// Simulated: the board runs on the simulated board (its report says
	// so); its devices drive no hardware.
	Simulated bool `json:"simulated,omitempty"`
	// LoadUnknown lists the load figures this board could not read
	// (["cpu_mhz"], …): they show as 0. Only the board's own row has it, in
	// its own /api/cluster (the reports do not carry it). Omitted when
	// every figure was read.
	LoadUnknown LoadFigures `json:"load_unknown,omitempty"`
}

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
