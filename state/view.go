package state

import "time"

// View is the table as one board sees it: the exact shape of GET /api/cluster.
type View struct {
	Epoch   uint64         `json:"epoch"`
	Master  string         `json:"master"` // "" while no master is known (a board listens tmax at start)
	Version uint64         `json:"version"`
	Self    string         `json:"self"`
	Nodes   []Board        `json:"nodes"`
	Queue   map[string]int `json:"queue"` // class -> depth in the master's queue
	// Completed counts the requests the master dispatched per class since it
	// became master (the web UI's requests/s chart).
	Completed map[string]uint64 `json:"completed,omitempty"`
	// PeersMismatch names the boards whose messages this board refuses
	// because their cluster.peers differ from its own (order included).
	PeersMismatch []string `json:"peers_mismatch,omitempty"`
	// Policy is sched.policy on this board; Limits the policy's load
	// limits where it has some (integrated, and proximity's integrated
	// load: cpu, mem, disk as shares, rt in ms, cpu_overload), for the
	// web UI to mark on the boards' figures.
	Policy string             `json:"policy,omitempty"`
	Limits map[string]float64 `json:"limits,omitempty"`
}

// Node returns the named row.
func (v View) Node(name string) (Board, bool) {
	for _, n := range v.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Board{}, false
}

// View returns the table as this board sees it at now: the master's rows
// (rebuilt fresh when this board is master), addresses from the peer list
// and the boards' reports. Queue and Completed come from the master's
// table (nil on the master itself: the Cluster fills them live).
func (e *Election) View(now time.Time) View {
	t, at := e.table, e.tableAt
	if e.IsMaster() {
		t.Rows, at = e.rows(now), now // fresh; the version moves at the next tick
	}
	v := View{Epoch: e.epoch, Master: e.master, Version: t.Version, Self: e.self.Name, Nodes: make([]Board, 0, len(e.peers))}
	rows := map[string]Row{}
	for _, r := range t.Rows {
		rows[r.Name] = r
	}
	since := now.Sub(at).Milliseconds()
	masterCreds := e.masterCreds()
	for i, p := range e.peers {
		n := Board{Name: p.Name, Rank: i, Addr: p.Addr, Runstate: Down, LastSeenMs: -1}
		var raw Load
		if b := &e.boards[i]; b.hasReport {
			n.HTTP, raw = b.report.HTTP, b.report.FullLoad()
			n.AuthMismatch = credsDiffer(masterCreds, b.report.Creds)
			n.Simulated = b.report.Simulated
		}
		if r, ok := rows[p.Name]; ok {
			n.Linknum, n.Capacity, n.Weight = int(r.Linknum), int(r.Capacity), int(r.Weight)
			n.Runstate, n.Load = r.Runstate, r.Wire().Load()
			addRaw(&n.Load, raw) // report-only figures: rows stay within invariant 8
			if r.AgeMs != neverHeardAge {
				n.LastSeenMs = int64(r.AgeMs) + since
			}
			if e.Relay && !e.IsMaster() && r.Runstate != Down && n.LastSeenMs >= 0 {
				// a relayed row's age is as of its last change; the master
				// marks a board silent for tthreshold down (relay.go)
				n.LastSeenMs = min(n.LastSeenMs, e.t.TThreshold.Milliseconds())
			}
			if h := e.boards[i].heard; r.Runstate != Down && !h.IsZero() {
				// between full tables (digests carry no ages) a follower's
				// own hearing of a live board is the fresher figure
				n.LastSeenMs = min(n.LastSeenMs, max(now.Sub(h).Milliseconds(), 0))
			}
		}
		v.Nodes = append(v.Nodes, n)
	}
	v.PeersMismatch = e.Mismatched(now)
	if !e.IsMaster() && len(t.Stats) > 0 {
		v.Queue, v.Completed = t.Stats.Maps()
	}
	return v
}

// masterCreds is the credentials fingerprint of the master's last report;
// 0 when unknown.
func (e *Election) masterCreds() uint64 {
	if r, ok := e.byName[e.master]; ok && e.boards[r].hasReport {
		return e.boards[r].report.Creds
	}
	return 0
}

// credsDiffer: both fingerprints known and different.
func credsDiffer(master, board uint64) bool { return master != 0 && board != 0 && board != master }

// mismatches is a bit per board (rank < 64) whose credentials differ from
// the master's: a change of it is worth publishing.
func (e *Election) mismatches() uint64 {
	mc := e.masterCreds()
	var out uint64
	for r := range min(len(e.boards), 64) {
		if b := &e.boards[r]; b.hasReport && credsDiffer(mc, b.report.Creds) {
			out |= 1 << r
		}
	}
	return out
}
