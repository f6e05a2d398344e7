package httpx

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestErrorShapes(t *testing.T) {
	tests := []struct {
		name       string
		write      func(http.ResponseWriter)
		status     int
		msg, retry string
	}{
		{"error", func(w http.ResponseWriter) { Error(w, 404, "no route %q", "/x") }, 404, `no route "/x"`, ""},
		{"unavailable rounds up", func(w http.ResponseWriter) { Unavailable(w, 1500*time.Millisecond, "busy") }, 503, "busy", "2"},
		{"unavailable at least 1s", func(w http.ResponseWriter) { Unavailable(w, 0, "busy") }, 503, "busy", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tt.write(rec)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d", rec.Code, tt.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("content type %q", ct)
			}
			var body ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Error != tt.msg {
				t.Fatalf("error %q, want %q", body.Error, tt.msg)
			}
			if got := rec.Header().Get("Retry-After"); got != tt.retry {
				t.Fatalf("Retry-After %q, want %q", got, tt.retry)
			}
		})
	}
}
