package audit

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
)

// run starts l's writer for the test.
func run(t *testing.T, l *Log) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// clock is a fake time: each call one millisecond later.
func clock() func() time.Time {
	t := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Millisecond); return t }
}

// Entries survive a restart; the file is capped and rotated; queries come
// newest first and filter by user, target and time.
func TestFileRotateQuery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ews1.audit.log")
	l := New(Options{Path: path, MaxBytes: 4096, Board: "ews1", Now: clock()})
	run(t, l)
	for i := range 100 {
		l.Record(Entry{User: fmt.Sprintf("u%d", i%3), Action: "device.toggle", Target: fmt.Sprintf("relay%d", i%2), Result: 200})
	}
	l.Sync(context.Background())
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil || st.Size() > 4096 {
			t.Errorf("%s: %v, size over the cap", p, err)
		}
	}
	again := New(Options{Path: path, MaxBytes: 4096, Board: "ews1"}) // a restart
	all, err := again.Query(Filter{Limit: 1000})
	if err != nil || len(all) < 20 {
		t.Fatalf("after restart: %d entries, %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if !all[i].Time.Before(all[i-1].Time) {
			t.Fatalf("not newest first at %d", i)
		}
	}
	for _, f := range []Filter{{User: "u1"}, {Target: "relay0"}, {Before: all[3].Time, Limit: 2}} {
		got, _ := again.Query(f)
		if len(got) == 0 {
			t.Errorf("%+v: nothing", f)
		}
		for _, e := range got {
			if !f.Norm().Match(e) {
				t.Errorf("%+v matched %+v", f, e)
			}
		}
		if f.Limit == 2 && (len(got) != 2 || got[0] != all[4]) {
			t.Errorf("before %v limit 2 = %v, want from %v", f.Before, got, all[4])
		}
	}
}

// 10,000 entries a minute: below the buffer cap nothing is lost; past it
// the drops are counted in /metrics.
func TestBoundedNothingLostBelowCap(t *testing.T) {
	reg := promx.NewRegistry()
	l := New(Options{Buffer: 16384, Registerer: reg})
	for range 10000 { // a minute's worth at once, before the writer runs
		l.Record(Entry{User: "op1", Action: "device.toggle"})
	}
	run(t, l)
	l.Sync(context.Background())
	got, _ := l.Query(Filter{Limit: MaxLimit})
	if v, _ := reg.Value("ews_audit_entries_total"); v != 10000 || l.Dropped() != 0 || len(got) != MaxLimit {
		t.Errorf("written %v, dropped %d, query %d", v, l.Dropped(), len(got))
	}

	small := New(Options{Buffer: 10, Registerer: promx.NewRegistry()})
	for range 25 {
		small.Record(Entry{})
	}
	if small.Dropped() != 15 {
		t.Errorf("dropped %d past a cap of 10, want 15", small.Dropped())
	}
}

func TestAction(t *testing.T) {
	for _, c := range []struct{ method, path, action, target string }{
		{"POST", "/api/devices/relay1/toggle", "device.toggle", "relay1"},
		{"GET", "/api/devices/relay1", "", ""},
		{"GET", "/cgi-bin/status.sh", "cgi", "status.sh"},
		{"POST", "/api/login", "login", ""},
		{"POST", "/api/users/op1/rotate", "user.rotate", "op1"},
		{"DELETE", "/api/users/op1", "user.delete", "op1"},
		{"PUT", "/api/users/op1", "user.update", "op1"},
		{"POST", "/api/board/firmware", "firmware.upload", ""},
		{"POST", "/api/board/restart", "restart", ""},
		{"POST", "/api/cluster/upgrade", "upgrade", ""},
		{"POST", "/api/cluster/enrol", "board.enrol", ""},
		{"GET", "/api/cluster/enrol", "", ""},
		{"GET", "/api/cluster/enrol/0123", "", ""},
		{"POST", "/api/config/rollback?to=3", "config.rollback", "config back to v3"},
		{"GET", "/api/config", "", ""},
		{"GET", "/", "", ""},
	} {
		a, tg := Action(httptest.NewRequest(c.method, c.path, nil))
		if a != c.action || tg != c.target {
			t.Errorf("%s %s = %q %q, want %q %q", c.method, c.path, a, tg, c.action, c.target)
		}
	}
}

// The handler merges the peers' entries, newest first, and names a peer
// that does not answer.
func TestHandlerAsksPeers(t *testing.T) {
	now := clock()
	mk := func(board string) *Log {
		l := New(Options{Board: board, Now: now})
		run(t, l)
		return l
	}
	l1, l2 := mk("ews1"), mk("ews2")
	l1.Record(Entry{User: "op1", Target: "relay1"})
	l2.Record(Entry{User: "op1", Target: "relay2"})
	l1.Record(Entry{User: "v1", Target: "relay1"})
	srv2 := httptest.NewServer(l2.Handler(ServeOptions{Self: "ews2"}))
	defer srv2.Close()
	h := l1.Handler(ServeOptions{Self: "ews1", Peers: func() []Peer {
		return []Peer{{"ews1", "x"}, {"ews2", strings.TrimPrefix(srv2.URL, "http://")}, {"ews3", "127.0.0.1:1"}}
	}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/audit?user=op1", nil))
	body := w.Body.String()
	i1, i2 := strings.Index(body, `"relay1"`), strings.Index(body, `"relay2"`)
	if w.Code != http.StatusOK || i1 < 0 || i2 < 0 || i2 > i1 || strings.Contains(body, "v1") || !strings.Contains(body, `"missing":["ews3"]`) {
		t.Errorf("GET /api/audit = %d %s", w.Code, body)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/audit?limit=x", nil))
	if w.Code != http.StatusBadRequest {
		t.Errorf("limit=x = %d", w.Code)
	}
}

// An idle log holds no queue: the old buffered channel of 16,384 entries
// took 2 MiB of every board's RSS (docs/NOTES.md, Packaging and binary
// size: lighter boards).
func TestIdleLogSmall(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l := New(Options{Registerer: promx.NewRegistry()})
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Errorf("New allocated %d bytes, want under 64 KiB", got)
	}
	runtime.KeepAlive(l)
}
