package devsync

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"

	"github.com/ews-firmware/ews/hal"
)

// A relay pinned to ews2 is toggled; ews1 (the page's
// board) mirrors it. The measured latency is logged; only a generous bound
// is asserted.
func TestMirrorFollowsBoards(t *testing.T) {
	d1, d2, d3 := openDevices(t, "ews1"), openDevices(t, "ews2"), openDevices(t, "ews3")
	before := runtime.NumGoroutine()
	b1, b2, b3 := startBoard(t, d1, "127.0.0.1:0"), startBoard(t, d2, "127.0.0.1:0"), startBoard(t, d3, "127.0.0.1:0")
	pl := &peerList{}
	pl.set(Peer{"ews1", b1.addr()}, Peer{"ews2", b2.addr()}, Peer{"ews3", b3.addr()}, Peer{"ews4", ""})
	rec := &recorder{sent: make(chan hal.Snapshot, 64)}
	m := New("ews1", pl.get, fastOptions(rec))
	stop := run(t, m)

	testutil.Eventually(t, "snapshots of ews2 and ews3", func() bool { return state(m, "r2") == "off" && state(m, "r3") == "off" })
	if n := b1.conns.Load(); n != 0 {
		t.Fatalf("the mirror opened %d streams to itself", n)
	}
	if _, ok := m.Get("r1"); ok {
		t.Fatal("r1 (this board's own) mirrored")
	}
	merged := m.Merge(d1.List())
	if got, want := names(merged), []string{"r1", "r2", "r3"}; !slices.Equal(got, want) {
		t.Fatalf("Merge order %v, want %v", got, want)
	}
	if merged[1].State != hal.StateOff || merged[1].Node != "ews2" {
		t.Fatalf("merged r2 = %+v, want ews2's live off", merged[1])
	}

	var worst time.Duration
	for i := range 5 {
		for len(rec.sent) > 0 {
			<-rec.sent
		}
		start := time.Now()
		s, err := d2.Do(context.Background(), "r2", hal.Action{Kind: hal.Toggle})
		if err != nil {
			t.Fatal(err)
		}
		// A deadline for a loaded machine (two busy loops took it past
		// 2 s), not a speed goal: the time is logged below.
		timeout := time.After(20 * time.Second)
		for got := false; !got; {
			select {
			case c := <-rec.sent:
				got = c.Name == "r2" && c.State == s.State
			case <-timeout:
				t.Fatalf("toggle %d: r2 = %s not mirrored within 20s", i, s.State)
			}
		}
		worst = max(worst, time.Since(start))
		if got := m.Merge(d1.List())[1].State; got != s.State {
			t.Fatalf("toggle %d: merged r2 = %s, want %s", i, got, s.State)
		}
	}
	t.Logf("Do on ews2 -> OnChange on ews1: worst of 5 = %s", worst)

	stop()
	b1.close()
	b2.close()
	b3.close()
	noLeak(t, before)
}

func TestBoardGoesAwayAndComesBack(t *testing.T) {
	d2 := openDevices(t, "ews2")
	b2 := startBoard(t, d2, "127.0.0.1:0")
	addr := b2.addr()
	pl := &peerList{}
	pl.set(Peer{"ews2", addr})
	rec := &recorder{}
	logs := &capture{}
	opts := fastOptions(rec)
	opts.Logger = slog.New(logs)
	m := New("ews1", pl.get, opts)
	run(t, m)
	testutil.Eventually(t, "r2 mirrored", func() bool { return state(m, "r2") == "off" })

	b2.close()
	testutil.Eventually(t, "r2 stale", func() bool { return state(m, "r2") == hal.StateError })
	if s, _ := m.Get("r2"); s.Error != "board ews2 unreachable" || s.Value != false {
		t.Fatalf("stale r2 = %+v", s)
	}
	if !slices.Contains(rec.names(), "r2=error") {
		t.Fatalf("OnChange never told the stale mark: %v", rec.names())
	}
	if _, err := d2.Do(context.Background(), "r2", hal.Action{Kind: hal.TurnOn}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	startBoard(t, d2, addr)
	testutil.Eventually(t, "r2 back and on", func() bool { return state(m, "r2") == hal.StateOn })
	t.Logf("reconnected and resynced %s after the board came back (max backoff 200ms)", time.Since(start))
	if s, _ := m.Get("r2"); s.Error != "" {
		t.Fatalf("r2 still marked: %+v", s)
	}
	// a short session, then refusals, then back: a reboot, not a flapping stream
	if n := logs.count("INFO devsync: board stream connected"); n != 2 {
		t.Fatalf("logged connected %d times, want 2 (first and after the return): %v", n, logs.msgs)
	}
}

// capture is a slog handler that keeps the messages.
type capture struct {
	mu   sync.Mutex
	msgs []string
}

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, r.Level.String()+" "+r.Message)
	return nil
}
func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }
func (c *capture) count(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.msgs {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

// A board that refuses the stream is retried with growing waits and logged once.
func TestBackoffAndLogOnce(t *testing.T) {
	var (
		mu    sync.Mutex
		times []time.Time
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	logs := &capture{}
	pl := &peerList{}
	pl.set(Peer{"ews2", srv.Listener.Addr().String()})
	opts := Options{MinBackoff: 40 * time.Millisecond, MaxBackoff: 160 * time.Millisecond, Refresh: 20 * time.Millisecond, Logger: slog.New(logs)}
	stop := run(t, New("ews1", pl.get, opts))
	testutil.Eventually(t, "6 attempts", func() bool { mu.Lock(); defer mu.Unlock(); return len(times) >= 6 })
	stop()

	mu.Lock()
	defer mu.Unlock()
	backoff := opts.MinBackoff
	for i := 1; i < 6; i++ {
		gap := times[i].Sub(times[i-1])
		if gap < backoff/2 {
			t.Errorf("attempt %d came %s after the last, want at least %s", i, gap, backoff/2)
		}
		backoff = min(2*backoff, opts.MaxBackoff)
	}
	if n := logs.count("WARN devsync: board unreachable"); n != 1 {
		t.Errorf("logged unreachable %d times over 6 attempts, want once: %v", n, logs.msgs)
	}
}

// serveFake answers every stream with body, then holds the stream open until
// the client leaves, so only the mirror can end it.
func serveFake(t *testing.T, contentType string, status int, body string) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conns.Add(1)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv, &conns
}

const r2Off = "event: devices\ndata: [{\"name\":\"r2\",\"driver\":\"sim-switch\",\"node\":\"ews2\",\"state\":\"off\",\"value\":false}]\n\n"

// A board may only report its own devices: ews2 sending state for r3 (ews3)
// and r1 (ews1, the mirror's own) is ignored.
func TestForeignStateIgnored(t *testing.T) {
	body := "event: devices\ndata: [{\"name\":\"r2\",\"node\":\"ews2\",\"state\":\"off\"},{\"name\":\"r3\",\"node\":\"ews3\",\"state\":\"on\"}]\n\n" +
		"event: device\ndata: {\"name\":\"r3\",\"node\":\"ews3\",\"state\":\"off\"}\n\n" +
		"event: device\ndata: {\"name\":\"r1\",\"node\":\"ews1\",\"state\":\"on\"}\n\n" +
		"event: device\ndata: {\"name\":\"r3\",\"node\":\"ews2\",\"state\":\"on\"}\n\n" + // lies about the board
		"event: device\ndata: {\"name\":\"r2\",\"node\":\"ews2\",\"state\":\"on\"}\n\n"
	srv, _ := serveFake(t, "text/event-stream", http.StatusOK, body)
	pl := &peerList{}
	pl.set(Peer{"ews2", srv.Listener.Addr().String()})
	rec := &recorder{}
	m := New("ews1", pl.get, fastOptions(rec))
	run(t, m)
	testutil.Eventually(t, "the last event", func() bool { return state(m, "r2") == hal.StateOn })

	if s, ok := m.Get("r1"); ok {
		t.Fatalf("r1 taken from ews2: %+v", s)
	}
	local := []hal.Snapshot{{Name: "r3", Node: "ews3", State: hal.StateRemote}}
	if got := m.Merge(local)[0].State; got != hal.StateRemote {
		t.Fatalf("r3 merged as %s from ews2's claim", got)
	}
	for _, n := range rec.names() {
		if strings.HasPrefix(n, "r1=") || n == "r3=off" {
			t.Fatalf("OnChange told a foreign state: %v", rec.names())
		}
	}
}

// A stream that breaks the rules is dropped and opened again; nothing panics.
func TestBadStreamsReconnect(t *testing.T) {
	tests := []struct {
		name, ctype string
		status      int
		body        string
		keepsR2     bool // the good part before the bad one was taken
	}{
		{"line too long", "text/event-stream", 200, r2Off + "data: " + strings.Repeat("x", 2000), true},
		{"event too long", "text/event-stream", 200, r2Off + strings.Repeat("data: "+strings.Repeat("y", 100)+"\n", 12) + "\n", true},
		{"binary junk", "text/event-stream", 200, r2Off + strings.Repeat("\x00\xff\xfe", 1000), true},
		{"malformed device", "text/event-stream", 200, r2Off + "event: device\ndata: {nope\n\n", true},
		{"devices not a list", "text/event-stream", 200, "event: devices\ndata: {\"a\":1}\n\n", false},
		{"not an event stream", "text/html", 200, r2Off, false},
		{"not found", "text/plain", 404, "no", false},
		{"silent", "text/event-stream", 200, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, conns := serveFake(t, tt.ctype, tt.status, tt.body)
			pl := &peerList{}
			pl.set(Peer{"ews2", srv.Listener.Addr().String()})
			rec := &recorder{}
			logs := &capture{}
			opts := fastOptions(rec)
			opts.MaxEvent, opts.Logger, opts.Idle = 1024, slog.New(logs), 100*time.Millisecond
			m := New("ews1", pl.get, opts)
			stop := run(t, m)
			testutil.Eventually(t, "4 connections", func() bool { return conns.Load() >= 4 })
			stop()
			if n := logs.count("INFO") + logs.count("WARN"); n > 2 {
				t.Errorf("%d info/warn logs for one broken board, want at most 2: %v", n, logs.msgs)
			}
			if got := state(m, "r2") != "absent"; got != tt.keepsR2 {
				t.Fatalf("r2 mirrored = %v, want %v (state %s)", got, tt.keepsR2, state(m, "r2"))
			}
		})
	}
}

// Boards that change address are followed there; boards that leave are
// disconnected and, after the grace, shown unreachable.
func TestPeersChange(t *testing.T) {
	da, db := openDevices(t, "ews2"), openDevices(t, "ews2")
	if _, err := da.Do(context.Background(), "r2", hal.Action{Kind: hal.TurnOn}); err != nil {
		t.Fatal(err)
	}
	ba, bb := startBoard(t, da, "127.0.0.1:0"), startBoard(t, db, "127.0.0.1:0")
	pl := &peerList{}
	pl.set(Peer{"ews2", ba.addr()})
	m := New("ews1", pl.get, fastOptions(&recorder{}))
	run(t, m)
	testutil.Eventually(t, "r2 on from the first address", func() bool { return state(m, "r2") == hal.StateOn })

	pl.set(Peer{"ews2", bb.addr()})
	testutil.Eventually(t, "r2 off from the new address", func() bool { return state(m, "r2") == hal.StateOff })
	testutil.Eventually(t, "old address dropped", func() bool { return ba.hub.Clients() == 0 })

	pl.set()
	testutil.Eventually(t, "stream closed", func() bool { return bb.hub.Clients() == 0 })
	testutil.Eventually(t, "r2 unreachable", func() bool { return state(m, "r2") == hal.StateError })
}

// A board the table has just learned (and the master may already send
// work to) is followed at Poke, not at the next Refresh: a change on it
// right after reaches OnChange (the master's rules). The node pokes on
// every table change. Refresh is an hour here, so only Poke can connect.
func TestPokeFollowsNewBoardNow(t *testing.T) {
	d2 := openDevices(t, "ews2")
	b2 := startBoard(t, d2, "127.0.0.1:0")
	var reads atomic.Int32
	pl := &peerList{}
	peers := func() []Peer { reads.Add(1); return pl.get() }
	rec := &recorder{}
	opts := fastOptions(rec)
	opts.Refresh = time.Hour
	m := New("ews1", peers, opts)
	run(t, m)
	testutil.Eventually(t, "the first reconcile, with no peer", func() bool { return reads.Load() >= 1 })

	pl.set(Peer{"ews2", b2.addr()})
	m.Poke()
	testutil.Eventually(t, "ews2's devices mirrored", func() bool { return state(m, "r2") == hal.StateOff })
	if _, err := d2.Do(context.Background(), "r2", hal.Action{Kind: hal.TurnOn}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the change told", func() bool { return slices.Contains(rec.names(), "r2=on") })
}

// A board that answers but never sends its device list is flapping however
// long each attempt lasts: here Idle (150ms) is longer than MaxBackoff
// (50ms), as in the field (45s and 5s), so wall time since the dial always
// passes MaxBackoff. It is logged once, not on every connection.
func TestSilentBoardLoggedOnce(t *testing.T) {
	srv, conns := serveFake(t, "text/event-stream", http.StatusOK, "")
	pl := &peerList{}
	pl.set(Peer{"ews2", srv.Listener.Addr().String()})
	logs := &capture{}
	opts := fastOptions(&recorder{})
	opts.MinBackoff, opts.MaxBackoff, opts.Idle, opts.Logger = 10*time.Millisecond, 50*time.Millisecond, 150*time.Millisecond, slog.New(logs)
	m := New("ews1", pl.get, opts)
	stop := run(t, m)
	testutil.Eventually(t, "3 connections", func() bool { return conns.Load() >= 3 })
	stop()
	if n := logs.count("INFO") + logs.count("WARN"); n > 2 {
		t.Errorf("%d info/warn logs for one silent board, want at most 2: %v", n, logs.msgs)
	}
}
