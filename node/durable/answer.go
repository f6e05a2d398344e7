package durable

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// Answer writes a write on the log that failed with err: 403 when the
// log's guard or the writer's signature refused it (docs/DESIGN.md,
// Trust); 503, try again in a second, without quorum or leader, past the
// deadline, or for err any of busy (the store's own "try again"s); else
// 500. The stores' handlers decide their own refusals first.
func Answer(w http.ResponseWriter, err error, busy ...error) {
	switch {
	case IsRefused(err):
		httpx.Error(w, http.StatusForbidden, "%v", err)
	case IsNoQuorum(err), errors.Is(err, ErrNoLeader), errors.Is(err, context.DeadlineExceeded),
		slices.ContainsFunc(busy, func(b error) bool { return errors.Is(err, b) }):
		httpx.Unavailable(w, time.Second, "%v", err)
	default:
		httpx.Error(w, http.StatusInternalServerError, "%v", err)
	}
}
