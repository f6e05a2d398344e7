package dispatch

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ews-firmware/ews/node/httpx"
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

// setRetryAfter sets Retry-After in whole seconds, rounded up, at least 1.
func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	secs := int((d + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
}

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
