package node

import (
	"net/http"
	"strings"

	"github.com/ews-firmware/ews/sched"
)

// pin sends a device request to the board the device is wired to. A
// request for a node = "any" device that carries an Idempotency-Key is
// pinned to one board chosen by hashing the key over the peers, so a retry
// (through any master, after a takeover too) reaches the board that holds
// the first result: the action runs at most once (invariant 5).
func (n *Node) pin() func(r *http.Request) string {
	byDevice := pinByDevice(func() map[string]string { return n.live.Load().Pins }) // the devices now (node/liveconf)
	peers := n.boot.State.Peers
	names := make([]string, len(peers))
	for i, p := range peers {
		names[i] = p.Name
	}
	self := n.boot.State.Name
	return func(r *http.Request) string {
		if strings.HasPrefix(r.URL.Path, "/api/users") { // the users store is written by the master
			if m, _, ok := n.clu.cluster.Master(); ok && m != "" {
				return m // a follower's fast entry pins here too: never this board unless it is the master
			}
			return self
		}
		b := byDevice(r)
		if (b == "" || b == "any") && r.Method == http.MethodPost && len(names) > 0 && strings.HasPrefix(r.URL.Path, "/api/devices/") {
			if k := r.Header.Get("Idempotency-Key"); k != "" {
				return sched.RendezvousPick(k, names)
			}
		}
		return b
	}
}

// pinByDevice sends /api/devices/{name} and /api/devices/{name}/{action}
// to the board the device is wired to (its `node`; "any" runs anywhere).
// Other paths and unknown devices are not pinned (an unknown device gets
// its 404 from whichever board runs it).
func pinByDevice(nodes func() map[string]string) func(*http.Request) string {
	return func(r *http.Request) string {
		rest, ok := strings.CutPrefix(r.URL.Path, "/api/devices/")
		if !ok {
			return ""
		}
		name, _, _ := strings.Cut(rest, "/")
		return nodes()[name]
	}
}
