package node

// The board page's Log panel (docs/NOTES.md "Web UI"): the recent lines
// of this board's log as one answer, so the panel is filled the moment it
// opens, before (or without) the log stream.

import (
	"net/http"
	"strconv"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/logring"
)

// boardLogLines is how many lines GET /api/board/log answers unless
// ?n= asks fewer or more (at most the ring's size).
const boardLogLines = 200

// boardLogRoutes serves GET /api/board/log (admin only, as the stream):
// {"lines": [...]}, the last lines of the log ring, oldest first; none
// on a board run without a ring (tests).
func (n *Node) boardLogRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/board/log", n.acc.auth.Require(adminOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := boardLogLines
		if v, err := strconv.Atoi(r.URL.Query().Get("n")); err == nil && v > 0 {
			limit = min(v, logring.DefaultSize)
		}
		lines := []logring.Line{}
		if n.set.logs != nil {
			lines = n.set.logs.Lines()
		}
		if len(lines) > limit {
			lines = lines[len(lines)-limit:]
		}
		w.Header().Set("Cache-Control", "no-store")
		httpx.JSON(w, http.StatusOK, map[string]any{"lines": lines})
	}))))
}
