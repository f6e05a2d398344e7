package dispatch

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// errorBody is {"error": ...} with the class and reason of a shed request
// or the board that failed, when there is one.
type errorBody struct {
	Error  string `json:"error"`
	Class  string `json:"class,omitempty"`
	Reason string `json:"reason,omitempty"`
	Board  string `json:"board,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpx.JSON(w, status, v) }

func unavailable(w http.ResponseWriter, retry time.Duration, format string, args ...any) {
	httpx.Unavailable(w, retry, format, args...)
}

// badGateway answers 502 naming the board that failed.
func badGateway(w http.ResponseWriter, board string, err error) {
	writeJSON(w, http.StatusBadGateway, errorBody{
		Error: fmt.Sprintf("dispatch: board %s failed: %v", board, err),
		Board: board,
	})
}

// answerFailure answers a request whose attempt at target failed with err
// and that is not sent again (v from tryAgain or giveUp; not sendAgain or
// answerShed), and counts the outcome.
func (f *Front) answerFailure(w http.ResponseWriter, v verdict, target string, err error) {
	if v == answerCanceled {
		f.m.forwarded.WithLabelValues(target, OutcomeCanceled).Inc()
		badGateway(w, target, err)
		return
	}
	f.m.forwarded.WithLabelValues(target, OutcomeError).Inc()
	switch v {
	case answerNotRun:
		unavailable(w, f.cfg.retry, "dispatch: board %s unreachable; the request did not run, send it again", target)
	case answerKeyed:
		unavailable(w, f.cfg.retry, "dispatch: board %s failed during the request; send it again with the same Idempotency-Key", target)
	default:
		badGateway(w, target, err)
	}
}
