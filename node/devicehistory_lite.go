//go:build lite

package node

import (
	"context"
	"net/http"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/history"
)

// Device history is left out of the lite build (docs/NOTES.md "The lite
// build"): nothing is recorded, the board page shows no history, and GET
// /api/devices/{name}/history answers 501 with the reason.

func (n *Node) openHistory() *history.Store { return nil }

func (n *Node) historyRunners() (flush, record runner) {
	idle := runFunc(func(context.Context) error { return nil })
	return idle, idle
}

func (n *Node) historyRoutes(work *http.ServeMux) {
	work.HandleFunc(history.Path, func(w http.ResponseWriter, _ *http.Request) {
		httpx.Error(w, http.StatusNotImplemented, "device history is not in the lite build of ews")
	})
}

func (n *Node) historyStatus() *history.Status { return nil }
