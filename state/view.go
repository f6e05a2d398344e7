package state

import (
	"time"
)

// View is the table as one board sees it: the exact shape of GET /api/cluster.
type View struct {
	Epoch   uint64         `json:"epoch"`
	Master  string         `json:"master"` // "" while no master is known (a board listens tmax at start)
	Version uint64         `json:"version"`
	Self    string         `json:"self"`
	Nodes   []NodeView     `json:"nodes"`
	Queue   map[string]int `json:"queue"` // class -> depth; filled on the master by the node's callback
	// Completed counts the requests the master dispatched per class since it
	// became master (the web UI's requests/s chart); set by the node.
	Completed map[string]uint64 `json:"completed,omitempty"`
}

// NodeView is one board's row.
type NodeView struct {
	Name     string `json:"name"`
	Rank     int    `json:"rank"`
	Addr     string `json:"addr"` // gossip host:port from cluster.peers
	HTTP     string `json:"http"` // from the board's own report; "" until heard
	Linknum  int    `json:"linknum"`
	Capacity int    `json:"capacity"`
	Weight   int    `json:"weight"`
	Runstate string `json:"runstate"` // joining | running | overloaded | down
	Load     Load   `json:"load"`
	// LastSeenMs is how long ago the master last heard the board, as of now;
	// -1 when it never has.
	LastSeenMs int64 `json:"last_seen_ms"`
}

// Node returns the named row.
func (v View) Node(name string) (NodeView, bool) {
	for _, n := range v.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return NodeView{}, false
}

// View returns the table as this board sees it at now: the master's rows
// (rebuilt fresh when this board is master), addresses from the peer list
// and the boards' reports.
func (e *Election) View(now time.Time) View {
	t, at := e.table, e.tableAt
	if e.IsMaster() {
		t.Rows, at = e.rows(now), now // fresh; the version moves at the next tick
	}
	v := View{Epoch: e.epoch, Master: e.master, Version: t.Version, Self: e.self.Name, Nodes: make([]NodeView, 0, len(e.peers))}
	rows := map[string]Row{}
	for _, r := range t.Rows {
		rows[r.Name] = r
	}
	since := now.Sub(at).Milliseconds()
	for i, p := range e.peers {
		n := NodeView{Name: p.Name, Rank: i, Addr: p.Addr, Runstate: Down.String(), LastSeenMs: -1}
		if b := &e.boards[i]; b.hasReport {
			n.HTTP = b.report.HTTP
		}
		if r, ok := rows[p.Name]; ok {
			n.Linknum, n.Capacity, n.Weight = int(r.Linknum), int(r.Capacity), int(r.Weight)
			n.Runstate, n.Load = r.Runstate.String(), r.Wire().Load()
			if r.AgeMs != neverHeardAge {
				n.LastSeenMs = int64(r.AgeMs) + since
			}
		}
		v.Nodes = append(v.Nodes, n)
	}
	return v
}
