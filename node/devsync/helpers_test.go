package devsync

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/events"
)

// devices are what every test board's config shares: one switch wired to
// each board.
var devices = []hal.DeviceSpec{
	{Name: "r1", Driver: "sim-switch", Node: "ews1"},
	{Name: "r2", Driver: "sim-switch", Node: "ews2"},
	{Name: "r3", Driver: "sim-switch", Node: "ews3"},
}

// testBoard is one board's devices and its local event stream, served on
// loopback the way the node serves /events?scope=local.
type testBoard struct {
	name  string
	devs  *hal.Devices
	hub   *events.Hub
	srv   *httptest.Server
	conns atomic.Int64 // stream requests served
	stop  context.CancelFunc
	done  chan struct{}
}

func openDevices(t testing.TB, self string) *hal.Devices {
	t.Helper()
	cfg := hal.Config{Node: self, Board: hal.BoardSim, Sim: &hal.SimConfig{}, Devices: devices}
	devs, err := hal.New(cfg, hal.Options{Board: hal.NewSimBoard()})
	if err != nil {
		t.Fatalf("hal.New: %v", err)
	}
	t.Cleanup(func() { _ = devs.Close() })
	return devs
}

// startBoard serves devs on addr ("127.0.0.1:0" for any port).
func startBoard(t testing.TB, devs *hal.Devices, addr string) *testBoard {
	t.Helper()
	return startBoardSetup(t, devs, addr, nil)
}

// startBoardSetup is startBoard with setup called on the hub before its
// "devices" snapshot is registered.
func startBoardSetup(t testing.TB, devs *hal.Devices, addr string, setup func(*events.Hub)) *testBoard {
	t.Helper()
	b := &testBoard{name: devs.Self(), devs: devs}
	b.hub = events.New(events.Options{Ping: 200 * time.Millisecond})
	if setup != nil {
		setup(b.hub)
	}
	b.hub.Snapshot("devices", func() any { return devs.Local() })
	ctx, cancel := context.WithCancel(context.Background())
	b.stop, b.done = cancel, make(chan struct{})
	watch := devs.WatchFromNow() // before the hub serves: no change falls between its snapshot and the watch
	go func() {
		defer close(b.done)
		watch(ctx, func(s hal.Snapshot) { b.hub.Publish("device", s) })
	}()
	ln := listen(t, addr)
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/events" || r.URL.Query().Get("scope") != "local" {
			http.NotFound(w, r)
			return
		}
		b.conns.Add(1)
		b.hub.ServeHTTP(w, r)
	}))
	b.srv.Listener = ln
	b.srv.Start()
	t.Cleanup(b.close)
	return b
}

// listen listens on addr, retrying a little: a port just closed may linger.
func listen(t testing.TB, addr string) net.Listener {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // retry interval
	}
}

func (b *testBoard) addr() string { return b.srv.Listener.Addr().String() }

// close takes the board off the network: streams end, the port is freed.
func (b *testBoard) close() {
	b.hub.Close()
	b.srv.Close()
	b.stop()
	<-b.done
}

// peerList is a peers func the test changes.
type peerList struct {
	mu    sync.Mutex
	peers []Peer
}

func (p *peerList) get() []Peer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Peer(nil), p.peers...)
}

func (p *peerList) set(peers ...Peer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peers = peers
}

// run starts m.Run and returns a func that stops it and waits.
func run(t testing.TB, m *Mirror) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Errorf("Run did not return 5s after its context ended")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// fastOptions make a mirror quick enough for tests.
func fastOptions(rec *recorder) Options {
	return Options{
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		Grace: 300 * time.Millisecond, Refresh: 20 * time.Millisecond,
		OnChange: rec.OnChange,
	}
}

func state(m *Mirror, name string) string {
	s, ok := m.Get(name)
	if !ok {
		return "absent"
	}
	return s.State
}

// noLeak fails when goroutines started after before are still running.
func noLeak(t testing.TB, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
}
