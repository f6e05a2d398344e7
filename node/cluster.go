package node

import (
	"net/http"

	"github.com/ews-firmware/ews/node/httpx"
)

// ClusterView is the JSON shape of GET /api/cluster (DESIGN.md).
type ClusterView struct {
	Epoch   uint64         `json:"epoch"`
	Master  string         `json:"master"`
	Version uint64         `json:"version"`
	Self    string         `json:"self"`
	Nodes   []NodeView     `json:"nodes"`
	Queue   map[string]int `json:"queue"`
}

// NodeView is one board's row of the table.
type NodeView struct {
	Name       string   `json:"name"`
	Rank       int      `json:"rank"`
	Addr       string   `json:"addr"`
	HTTP       string   `json:"http"`
	Linknum    int      `json:"linknum"`
	Capacity   int      `json:"capacity"`
	Weight     int      `json:"weight"`
	Runstate   string   `json:"runstate"`
	Load       LoadView `json:"load"`
	LastSeenMs int64    `json:"last_seen_ms"`
}

// LoadView is a board's reported load, each a share of 0..1.
type LoadView struct {
	CPU  float64 `json:"cpu"`
	Mem  float64 `json:"mem"`
	Net  float64 `json:"net"`
	Disk float64 `json:"disk"`
}

// standaloneView is the one-row table of a board with no peers: it is its
// own master and runs everything itself.
func (n *Node) standaloneView() ClusterView {
	addr := ""
	if a := n.Addr(); a != nil {
		addr = a.String()
	}
	queue := map[string]int{}
	for _, c := range n.cfg.Sched.Classes {
		queue[c.Name] = 0
	}
	return ClusterView{
		Epoch: 1, Master: n.cfg.Node.Name, Version: 1, Self: n.cfg.Node.Name,
		Nodes: []NodeView{{
			Name: n.cfg.Node.Name, Rank: 0, Addr: n.cfg.Node.Gossip, HTTP: addr,
			Linknum: int(n.inFlight.Load()), Capacity: n.cfg.Node.Capacity, Weight: n.cfg.Node.Weight,
			Runstate: "running", LastSeenMs: 0,
		}},
		Queue: queue,
	}
}

func (n *Node) serveCluster(w http.ResponseWriter, r *http.Request) {
	httpx.JSON(w, http.StatusOK, n.standaloneView())
}
