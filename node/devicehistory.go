//go:build !lite

package node

// Device history (docs/DESIGN.md "Board services"): the wiring of node/history into the board.
// Hooks elsewhere: the field deviceSide.hist and n.openHistory() (system.go),
// the "history" components (node.go), n.historyRoutes(work) (routes.go),
// the Pin wrapper (frontdoor.go) and BoardInfo.History (board.go).

import (
	"net/http"
	"path/filepath"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/history"
)

// historyOptions maps [history] and node.state_dir onto the store's
// options. The history goes to a file under state_dir when the config file
// names one (created if missing), or, naming none, on real hardware when
// the default /var/lib/ews exists (the package creates it). Otherwise (a
// simulated board, a dev machine, tests) it is kept in memory: `ews demo`
// and tests never write /var/lib/ews.
func (n *Node) historyOptions() history.Options {
	o := n.boot.history
	o.Registerer, o.Logger, o.Now = n.reg, n.log, n.boot.clock.Now
	if dir := n.stateDir(); dir != "" {
		o.Dir = filepath.Join(dir, "history")
	}
	return o
}

// openHistory opens the store; one that cannot open its file (a read-only
// or missing state_dir) is logged and kept in memory: the board serves on.
func (n *Node) openHistory() *history.Store {
	o := n.historyOptions()
	st, err := history.Open(o)
	if o.Dir == "" {
		n.log.Info("history: kept in memory only (set node.state_dir to keep it across restarts)")
	}
	if err != nil {
		n.log.Error("history: kept in memory only", "err", err)
		o.Dir = ""
		st, _ = history.Open(o)
	}
	n.life.onClose(func() {
		if err := st.Close(); err != nil {
			n.log.Warn("history: close", "err", err)
		}
	})
	return st
}

// historyRunners are the store's flush loop and the recorder that follows
// this board's devices; they start before the devices and stop after them.
func (n *Node) historyRunners() (flush, record runner) {
	return n.dev.hist, history.NewRecorder(n.dev.devs, n.dev.hist)
}

// historyRoutes mounts GET /api/devices/{name}/history on the work mux
// (queued and pinned to the device's board like the rest of the device API).
func (n *Node) historyRoutes(work *http.ServeMux) {
	h := history.NewHandler(history.HandlerOptions{
		Store:      n.dev.hist,
		Lookup:     n.lookupDevice,
		Local:      n.dev.devs.IsLocal,
		RetryAfter: n.boot.state.TMax + n.boot.state.Heartbeat,
		Span:       n.boot.history.Full,
	})
	var wrap func(http.Handler) http.Handler
	if n.boot.readAuth {
		wrap = n.acc.auth.Require
	}
	h.Register(work, wrap)
}

// lookupDevice is the freshest state this board knows of a device.
func (n *Node) lookupDevice(name string) (hal.Snapshot, bool) {
	for _, s := range n.deviceList() {
		if s.Name == name {
			return s, true
		}
	}
	return hal.Snapshot{}, false
}

// historyStatus is the store's state for the board page.
func (n *Node) historyStatus() *history.Status {
	if n.dev.hist == nil {
		return nil
	}
	st := n.dev.hist.Status()
	return &st
}
