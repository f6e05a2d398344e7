package node

import (
	"net/http"
	"sync/atomic"

	"github.com/ews-firmware/ews/node/httpx"
	"github.com/ews-firmware/ews/state"
)

// local is what this board tells the cluster about itself (state.Local):
// its own in-flight count is the truth for its linknum (invariant 3).
type local struct {
	n         *Node
	inFlight  atomic.Int64  // dispatched requests running here
	completed atomic.Uint64 // dispatched requests finished here
}

var (
	_ state.Local      = (*local)(nil)
	_ state.HTTPAddrer = (*local)(nil)
)

func (l *local) InFlight() int     { return int(l.inFlight.Load()) }
func (l *local) Completed() uint64 { return l.completed.Load() }
func (l *local) Load() state.Load  { return l.n.load.Load() }

// Runstate is joining until the HTTP server serves, then what health says.
func (l *local) Runstate() string {
	if !l.n.Ready() {
		return state.Joining.String()
	}
	return l.n.health.Runstate()
}

// HTTPAddr is the address other boards forward to: the listener's real
// port, with a wildcard host replaced by node.advertise or the gossip host.
func (l *local) HTTPAddr() string {
	a := l.n.Addr()
	if a == nil {
		return ""
	}
	return state.AdvertiseHTTP(l.n.cfg, l.n.cfg.Node.Gossip, a.String())
}

// work wraps a handler that runs dispatched work on this board, counting it
// in the board's own in-flight report.
func (l *local) work(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.inFlight.Add(1)
		defer func() {
			l.inFlight.Add(-1)
			l.completed.Add(1)
		}()
		next.ServeHTTP(w, r)
	})
}

func (n *Node) serveCluster(w http.ResponseWriter, r *http.Request) {
	httpx.JSON(w, http.StatusOK, n.cluster.Snapshot())
}
