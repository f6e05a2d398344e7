// Package pin says where a request must run (the board a device is wired to, one board per Idempotency-Key for any-board devices, the master for the users store) and which devices' reads may share one answer.
package pin

import (
	"net/http"
	"strings"

	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// New sends a device request to the board the device is wired to (pins:
// device -> board, as the configuration store has it now). A request for
// a node = "any" device that carries an Idempotency-Key is pinned to one
// board chosen by hashing the key over the peers, so a retry (through any
// master, after a takeover too) reaches the board that holds the first
// result: the action runs at most once (invariant 5). A request for the
// users store goes to the master (master), else to self.
func New(self string, peers []state.Peer, pins func() map[string]string, master func() (string, string, bool)) func(r *http.Request) string {
	byDevice := pinByDevice(pins)
	names := make([]string, len(peers))
	for i, p := range peers {
		names[i] = p.Name
	}
	return func(r *http.Request) string {
		if strings.HasPrefix(r.URL.Path, "/api/users") { // the users store is written by the master
			if m, _, ok := master(); ok && m != "" {
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

// Running reports whether the table (boards) has the board running; a
// history request for a device of a board that is not is answered
// elsewhere from the mirror (history.Pin).
func Running(boards func() []state.Board) func(name string) bool {
	return func(name string) bool {
		for _, b := range boards() {
			if b.Name == name {
				return b.Runstate == state.Running
			}
		}
		return false
	}
}
