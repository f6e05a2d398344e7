package logring

import (
	"net/http"
	"strconv"

	"github.com/ews-firmware/ews/internal/httpx"
)

// The board page's Log panel (docs/NOTES.md "Web UI"): the recent lines
// of this board's log as one answer, so the panel is filled the moment it
// opens, before (or without) the log stream.

// Path is where the board serves its recent lines (admin only, as the
// log stream).
const Path = "/api/board/log"

// PageLines is how many lines GET Path answers unless ?n= asks fewer or
// more (at most DefaultSize).
const PageLines = 200

// Handler serves GET Path: {"lines": [...]}, the last lines of r, oldest
// first; none for a nil r (a board run without a ring: tests).
func Handler(r *Ring) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		limit := PageLines
		if v, err := strconv.Atoi(req.URL.Query().Get("n")); err == nil && v > 0 {
			limit = min(v, DefaultSize)
		}
		lines := []Line{}
		if r != nil {
			lines = r.Lines()
		}
		if len(lines) > limit {
			lines = lines[len(lines)-limit:]
		}
		w.Header().Set("Cache-Control", "no-store")
		httpx.JSON(w, http.StatusOK, map[string]any{"lines": lines})
	})
}
