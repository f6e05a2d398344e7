package sdnotify

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// fakeSystemd is a notify socket like the one systemd hands a Type=notify
// service: a unixgram socket named by $NOTIFY_SOCKET.
type fakeSystemd struct {
	t    *testing.T
	conn *net.UnixConn
}

func newFakeSystemd(t *testing.T) *fakeSystemd {
	t.Helper()
	// Socket paths are limited to 108 bytes; t.TempDir() can be longer.
	dir, err := os.MkdirTemp("", "sdn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return &fakeSystemd{t: t, conn: conn}
}

// next returns the next datagram, or fails the test after wait.
func (f *fakeSystemd) next(wait time.Duration) string {
	f.t.Helper()
	msg, ok := f.read(wait)
	if !ok {
		f.t.Fatalf("no notify message within %s", wait)
	}
	return msg
}

func (f *fakeSystemd) read(wait time.Duration) (string, bool) {
	buf := make([]byte, 4096)
	_ = f.conn.SetReadDeadline(time.Now().Add(wait))
	n, err := f.conn.Read(buf)
	if err != nil {
		return "", false
	}
	return string(buf[:n]), true
}

// until reads messages until one contains want, failing after wait.
func (f *fakeSystemd) until(want string, wait time.Duration) []string {
	f.t.Helper()
	deadline := time.Now().Add(wait)
	var seen []string
	for time.Now().Before(deadline) {
		msg, ok := f.read(time.Until(deadline))
		if !ok {
			break
		}
		seen = append(seen, msg)
		if strings.Contains(msg, want) {
			return seen
		}
	}
	f.t.Fatalf("no %q within %s; got %q", want, wait, seen)
	return nil
}

// drain returns every message already queued on the socket.
func (f *fakeSystemd) drain() []string {
	var out []string
	for {
		msg, ok := f.read(20 * time.Millisecond)
		if !ok {
			return out
		}
		out = append(out, msg)
	}
}

func TestWatchdogLifecycle(t *testing.T) {
	sd := newFakeSystemd(t)
	t.Setenv("WATCHDOG_USEC", "20000") // WatchdogSec=20ms: pet every 10ms
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))

	var failing atomic.Bool
	failedCalls := make(chan struct{}, 100)
	probe := Probe{Name: "loop", Check: func(context.Context) error {
		if failing.Load() {
			select {
			case failedCalls <- struct{}{}:
			default:
			}
			return errors.New("loop stuck")
		}
		return nil
	}}
	w := NewWatchdog(testutil.Logger(), []Probe{probe})
	if got := w.Interval(); got != 10*time.Millisecond {
		t.Fatalf("interval = %s, want half of WATCHDOG_USEC = 10ms", got)
	}

	if !w.Ready() {
		t.Fatal("Ready: not sent although NOTIFY_SOCKET is set")
	}
	if msg := sd.next(5 * time.Second); !strings.Contains(msg, "READY=1") {
		t.Fatalf("first message %q, want READY=1", msg)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	for i := 0; i < 3; i++ { // periodic pets while healthy
		sd.until("WATCHDOG=1", 5*time.Second)
	}

	failing.Store(true)
	sd.until("STATUS=sdnotify: probe", 5*time.Second) // the round that saw the failure says why
	for i := 0; i < 3; i++ {                          // three more failing rounds ...
		select {
		case <-failedCalls:
		case <-time.After(5 * time.Second):
			t.Fatal("probe not called again while failing")
		}
	}
	for _, msg := range sd.drain() { // ... and not one pet among them
		if strings.Contains(msg, "WATCHDOG=1") {
			t.Fatalf("watchdog petted while a probe fails: %q", msg)
		}
	}

	failing.Store(false)
	sd.until("WATCHDOG=1", 5*time.Second) // pets resume once healthy

	cancel()
	<-done
	sd.drain()
	if !w.Stopping() {
		t.Fatal("Stopping: not sent")
	}
	if msg := sd.next(5 * time.Second); !strings.Contains(msg, "STOPPING=1") {
		t.Fatalf("got %q, want STOPPING=1", msg)
	}
}

func TestWatchdogWithoutSystemd(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	t.Setenv("WATCHDOG_USEC", "")
	w := NewWatchdog(testutil.Logger(), nil)
	if w.Interval() != 0 {
		t.Fatalf("interval = %s without WATCHDOG_USEC, want 0", w.Interval())
	}
	if w.Ready() || w.Stopping() {
		t.Fatal("notify claims to be sent without NOTIFY_SOCKET")
	}
	done := make(chan struct{})
	go func() { defer close(done); w.Run(context.Background()) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run with no watchdog interval did not return")
	}
}

func TestWatchdogSettings(t *testing.T) {
	tests := []struct {
		name, usec, pid string
		want            time.Duration
	}{
		{"for us", "2000000", strconv.Itoa(os.Getpid()), time.Second},
		{"no pid given", "600000", "", 300 * time.Millisecond},
		{"for another process", "2000000", "1", 0},
		{"garbage", "soon", "", 0},
		{"negative", "-5", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("WATCHDOG_USEC", tt.usec)
			t.Setenv("WATCHDOG_PID", tt.pid)
			if got := NewWatchdog(testutil.Logger(), nil).Interval(); got != tt.want {
				t.Fatalf("interval = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestWatchdogPanickingProbeStopsPets(t *testing.T) {
	var sent []string
	rec := func(s string) (bool, error) { sent = append(sent, s); return true, nil }
	w := NewWatchdog(testutil.Logger(), []Probe{{Name: "bad", Check: func(context.Context) error { panic("boom") }}},
		withNotifier(rec), withInterval(time.Hour))
	err := w.round(context.Background())
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Fatalf("round = %v, want the panic as an error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.Run(ctx) // one round, then sees ctx done
	for _, s := range sent {
		if strings.Contains(s, "WATCHDOG=1") {
			t.Fatalf("petted with a panicking probe: %q", sent)
		}
	}
	if len(sent) == 0 || !strings.HasPrefix(sent[0], "STATUS=") {
		t.Fatalf("sent %q, want a STATUS naming the failure", sent)
	}
}

func TestWatchdogHungProbe(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	probe := Probe{Name: "locked", Check: func(context.Context) error {
		calls.Add(1)
		<-release // ignores its deadline, like a deadlocked mutex
		return nil
	}}
	w := NewWatchdog(testutil.Logger(), []Probe{probe}, withNotifier(func(string) (bool, error) { return true, nil }),
		withInterval(20*time.Millisecond))
	for i := 0; i < 3; i++ {
		err := w.round(context.Background())
		if err == nil {
			t.Fatalf("round %d: a hung probe passed", i)
		}
		want := "no answer within"
		if i > 0 {
			want = "still hung"
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("round %d: %v, want %q", i, err, want)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("hung probe started %d times, want once", n)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for w.round(context.Background()) != nil { // the old call returns, the next round runs the probe afresh
		if time.Now().After(deadline) {
			t.Fatal("probe still failing after it was released")
		}
	}
}

// A probe with Every is checked between the rounds too, and its first
// failure asks systemd to restart ews at once (WATCHDOG=trigger), long
// before the next round (an hour away here) would stop the pets.
func TestWatchdogUrgentProbeTriggers(t *testing.T) {
	var failing atomic.Bool
	sent := make(chan string, 100)
	rec := func(s string) (bool, error) { sent <- s; return true, nil }
	probe := Probe{Name: "watch", Every: 5 * time.Millisecond, Check: func(context.Context) error {
		if failing.Load() {
			return errors.New("watch loop stalled")
		}
		return nil
	}}
	w := NewWatchdog(testutil.Logger(), []Probe{probe}, withNotifier(rec), withInterval(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	next := func() string {
		select {
		case s := <-sent:
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("nothing sent within 10 s")
			return ""
		}
	}
	if s := next(); s != "WATCHDOG=1" {
		t.Fatalf("first message %q, want the first round's pet", s)
	}
	failing.Store(true)
	if s := next(); !strings.HasPrefix(s, "STATUS=sdnotify: probe watch: watch loop stalled") {
		t.Fatalf("got %q, want a STATUS naming the failure", s)
	}
	if s := next(); s != "WATCHDOG=trigger" {
		t.Fatalf("got %q, want WATCHDOG=trigger", s)
	}
}
