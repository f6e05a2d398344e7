// Package httpx holds the HTTP pieces every server and handler of ews shares: JSON bodies and errors, the client address in the context, the listener that answers a slow header 408, and the server that drains.
package httpx

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ErrorBody is the shape of every error answer: {"error": "..."}.
type ErrorBody struct {
	Error string `json:"error"`
}

// JSON writes v as a JSON body with status.
func JSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorBody{Error: "httpx: encode response: " + err.Error()})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// Error writes {"error": msg} with status.
func Error(w http.ResponseWriter, status int, format string, args ...any) {
	JSON(w, status, ErrorBody{Error: fmt.Sprintf(format, args...)})
}

// Unavailable writes a 503 with Retry-After (see SetRetryAfter).
func Unavailable(w http.ResponseWriter, retry time.Duration, format string, args ...any) {
	SetRetryAfter(w, retry)
	Error(w, http.StatusServiceUnavailable, format, args...)
}

// SetRetryAfter sets Retry-After to retry in whole seconds, rounded up, at least 1.
func SetRetryAfter(w http.ResponseWriter, retry time.Duration) {
	secs := int((retry + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
}
