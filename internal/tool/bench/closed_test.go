package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestClosedLoop: N closed-loop clients never have more than N requests at
// the server at once (each waits for its answer), and Max bounds the run.
func TestClosedLoop(t *testing.T) {
	for _, tc := range []struct {
		name    string
		clients int
		think   time.Duration
		max     int64
	}{
		{"one client", 1, 0, 20},
		{"three clients", 3, 0, 60},
		{"three clients thinking", 3, time.Millisecond, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var now, most, seen atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := now.Add(1)
				defer now.Add(-1)
				seen.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				w.WriteHeader(http.StatusOK)
			}))
			defer srv.Close()
			cls, err := ParseMix("a=1:GET /a,b=1:GET /b")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(context.Background(), Config{URL: srv.URL, Classes: cls, Closed: tc.clients, Think: tc.think,
				Duration: time.Minute, Max: tc.max, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Total.Sent != tc.max || rep.Total.OK != tc.max || rep.Closed != tc.clients {
				t.Fatalf("sent %d ok %d closed %d, want %d %d %d", rep.Total.Sent, rep.Total.OK, rep.Closed, tc.max, tc.max, tc.clients)
			}
			if m := most.Load(); m > int64(tc.clients) {
				t.Fatalf("%d requests at the server at once, want at most %d clients", m, tc.clients)
			}
			if !rep.Sustained {
				t.Fatalf("closed loop reported not sustained: %s", rep.Note)
			}
		})
	}
}
