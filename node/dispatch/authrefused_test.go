package dispatch

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// A board that refuses what the master accepted is a credentials mismatch:
// the client gets 502 naming the board (not a 401 that would send the UI
// to its login), the master counts it, tells its owner and logs the board.
func TestBoardRefusesCredentials(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}})
	m, b := tc.boards[0], tc.boards[1]
	var logs bytes.Buffer
	var mu sync.Mutex
	var seen []string
	m.front.log = slog.New(slog.NewTextHandler(&syncWriter{w: &logs, mu: &mu}, nil))
	m.front.out.onAuthRefused = func(board string) {
		mu.Lock()
		seen = append(seen, board)
		mu.Unlock()
	}
	b.mode.Store(modeDeny)
	for range 3 {
		resp, body := do(t, nil, "POST", m.srv.URL+"/api/devices/r1/toggle", nil, "")
		if resp.StatusCode != 502 || !strings.Contains(string(body), "board ews2 refused the credentials") ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	tc.waitIdle()
	if n := metricValue(t, m.front.m.authRefused.WithLabelValues("ews2")); n != 3 {
		t.Errorf("auth refused = %v, want 3", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, ",") != "ews2,ews2,ews2" {
		t.Errorf("OnAuthRefused saw %v", seen)
	}
	if n := strings.Count(logs.String(), "board refused credentials"); n != 1 || !strings.Contains(logs.String(), "board=ews2") {
		t.Errorf("want one log line (rate-limited) naming ews2, got %d:\n%s", n, logs.String())
	}
	// an ordinary answer passes as it is
	b.mode.Store(modeEcho)
	if resp, _ := do(t, nil, "POST", m.srv.URL+"/api/devices/r1/toggle", nil, ""); resp.StatusCode != 200 {
		t.Fatalf("echo: %d", resp.StatusCode)
	}
}

func TestAuthLogRateLimit(t *testing.T) {
	var l authLog
	t0 := time.Unix(1000, 0)
	steps := []struct {
		board string
		at    time.Duration
		log   bool
		n     int
	}{
		{"ews2", 0, true, 1},
		{"ews2", time.Second, false, 0},
		{"ews3", time.Second, true, 1},
		{"ews2", 2 * time.Second, false, 0},
		{"ews2", authLogEvery, true, 3},
	}
	for i, s := range steps {
		log, n := l.due(s.board, t0.Add(s.at))
		if log != s.log || n != s.n {
			t.Errorf("step %d (%s at %v): log %v n %d, want %v %d", i, s.board, s.at, log, n, s.log, s.n)
		}
	}
}

type syncWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// A board's 401 becomes the 502 of a credentials mismatch (and
// OnAuthRefused, which marks the board auth_mismatch) only when the master
// vouched for the credentials and the board's really differ; else the
// client gets the board's 401 as it is (docs/NOTES.md, Security).
func TestBoardRefusalIsMismatchOnlyWhenCredentialsDiffer(t *testing.T) {
	for _, tc := range []struct {
		name              string
		verified, differs bool
		want              int
	}{
		{"vouched, differ", true, true, 502},
		{"not vouched (read without read_auth on the master)", false, true, 401},
		{"vouched, same fingerprint", true, false, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}})
			m, b := c.boards[0], c.boards[1]
			var refused int
			var mu sync.Mutex
			m.front.out.onAuthRefused = func(string) { mu.Lock(); refused++; mu.Unlock() }
			m.front.out.verified = func(*http.Request) bool { return tc.verified }
			m.front.out.credsDiffer = func(board string) bool { return tc.differs && board == "ews2" }
			b.mode.Store(modeDeny)
			resp, body := do(t, nil, "GET", m.srv.URL+"/api/devices/r1/history", nil, "")
			if resp.StatusCode != tc.want {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.want)
			}
			c.waitIdle()
			mu.Lock()
			defer mu.Unlock()
			if want := map[bool]int{true: 1, false: 0}[tc.want == 502]; refused != want {
				t.Fatalf("OnAuthRefused called %d times, want %d", refused, want)
			}
		})
	}
}
