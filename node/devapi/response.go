package devapi

import (
	"encoding/json"
	"net/http"
	"strconv"
)

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(errorResponse{Error: "devapi: encode: " + err.Error()})
	}
	return append(b, '\n')
}

// writeRaw writes an encoded JSON answer; replayed marks an idempotent replay.
func writeRaw(w http.ResponseWriter, status int, body []byte, replayed bool) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	if replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
