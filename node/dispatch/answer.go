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
