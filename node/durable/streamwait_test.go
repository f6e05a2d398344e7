package durable

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A dial waits, without failing, for a board that is down or runs a
// build without the log, and connects once it is back; a refused proof
// fails at once; StopDials ends a waiting dial.
func TestDialWaitsForABoard(t *testing.T) {
	var ready atomic.Bool // false: the older build (404), true: upgraded
	b := NewStream(StreamOptions{Self: "b"})
	defer b.Close()
	go func() { // board b's raft, taking its connections
		for {
			c, err := b.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("X-Test-Board") != "yes":
			http.Error(w, "not a board", http.StatusUnauthorized)
		case !ready.Load():
			http.NotFound(w, r)
		default:
			b.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	var tries atomic.Int32
	waiting := make(chan struct{}, 1) // the stopped case's third try
	known := func(string) (string, bool) { return addr, true }
	sign := func(r *http.Request, _ string) { r.Header.Set("X-Test-Board", "yes") }

	tests := []struct {
		name    string
		resolve func(string) (string, bool)
		sign    func(*http.Request, string)
		stop    bool // StopDials while it waits
		wantErr string
	}{
		{name: "not heard yet, then back", resolve: func(b string) (string, bool) {
			if tries.Add(1) < 3 {
				return "", false
			}
			ready.Store(true)
			return addr, true
		}, sign: sign},
		{name: "an older build, then upgraded", resolve: func(b string) (string, bool) {
			if tries.Add(1) >= 3 {
				ready.Store(true)
			}
			return addr, true
		}, sign: sign},
		{name: "proof refused", resolve: known, wantErr: "401"},
		{name: "stopped while it waits", resolve: func(string) (string, bool) {
			if tries.Add(1) == 3 {
				waiting <- struct{}{}
			}
			return "", false
		}, sign: sign, stop: true, wantErr: "not known yet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ready.Store(false)
			tries.Store(0)
			s := NewStream(StreamOptions{Self: "a", Resolve: tc.resolve, Sign: tc.sign, Wait: time.Minute, Retry: time.Millisecond})
			if tc.stop {
				go func() { <-waiting; s.StopDials() }()
			}
			conn, err := s.Dial("b", 5*time.Second)
			if conn != nil {
				conn.Close()
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("dial: %v after %d tries, want a connection", err, tries.Load())
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("dial: %v, want an error with %q", err, tc.wantErr)
			case tc.wantErr == "401" && !errors.Is(err, errRefused):
				t.Fatalf("dial: %v, want errRefused", err)
			}
		})
	}

	// the bound: a board that never comes back fails the dial after Wait
	s := NewStream(StreamOptions{Self: "a", Resolve: func(string) (string, bool) { return "", false }, Wait: 20 * time.Millisecond, Retry: time.Millisecond})
	if _, err := s.Dial("b", time.Second); err == nil || !strings.Contains(err.Error(), "not known yet") {
		t.Fatalf("dial to a board never heard: %v, want its error after Wait", err)
	}
}
