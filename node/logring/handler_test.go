package logring

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"
)

// GET Path answers the last lines, oldest first: PageLines unless ?n=
// asks another count (a bad one is the default), none without a ring.
func TestHandler(t *testing.T) {
	r := New(0)
	for i := range 300 {
		r.Add(time.Unix(int64(i), 0), "INFO", fmt.Sprintf("line %d", i))
	}
	tests := []struct {
		ring  *Ring
		query string
		n     int
		first string
	}{
		{r, "", PageLines, "line 100"},
		{r, "?n=5", 5, "line 295"},
		{r, "?n=nope", PageLines, "line 100"},
		{r, "?n=9999", 300, "line 0"},
		{nil, "", 0, ""},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		Handler(tt.ring).ServeHTTP(w, httptest.NewRequest("GET", Path+tt.query, nil))
		var got struct{ Lines []Line }
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || len(got.Lines) != tt.n {
			t.Errorf("%s: %d lines (%v), want %d", tt.query, len(got.Lines), err, tt.n)
			continue
		}
		if tt.n > 0 && got.Lines[0].Text != tt.first {
			t.Errorf("%s: first %q, want %q", tt.query, got.Lines[0].Text, tt.first)
		}
		if w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s: cached", tt.query)
		}
	}
}
