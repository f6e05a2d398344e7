package state

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"

	"github.com/ews-firmware/ews/internal/promx"
)

// recorder is a slog.Handler that keeps every message.
type recorder struct {
	mu   *sync.Mutex
	msgs *[]string
}

func newRecorder() recorder { return recorder{mu: &sync.Mutex{}, msgs: &[]string{}} }

func (r recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.msgs = append(*r.msgs, rec.Message)
	return nil
}
func (r recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r recorder) WithGroup(string) slog.Handler      { return r }

func (r recorder) count(sub string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range *r.msgs {
		if strings.Contains(m, sub) {
			n++
		}
	}
	return n
}

func TestRejoinRetriesAndLogsOncePerChange(t *testing.T) {
	peers := []string{fmt.Sprintf("ews1=127.0.0.1:%d", freePort(t)), fmt.Sprintf("ews2=127.0.0.1:%d", freePort(t))}
	rec := newRecorder()
	c, err := New(testConfig("ews1", peers, testKey), slog.New(rec), promx.NewRegistry(), &fakeLocal{})
	if err != nil {
		t.Fatal(err)
	}
	if err := startRun(t, c); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyWithin(t, "three join attempts on the absent peer", 10*time.Second, func() bool { return c.mem.joins.Load() >= 3 })
	if n := rec.count("cannot join peer"); n != 1 {
		t.Fatalf("%d 'cannot join' logs over %d attempts, want 1 (once per change)", n, c.mem.joins.Load())
	}
	testutil.EventuallyWithin(t, "ews1 master alone", 5*time.Second, c.IsMaster)

	other := startBoard(t, testConfig("ews2", peers, testKey))
	testutil.EventuallyWithin(t, "ews2 follows ews1", 5*time.Second, func() bool { return oneMaster([]*board{{c: c}, other}, "ews1") })
	testutil.EventuallyWithin(t, "'peer joined' logged", 5*time.Second, func() bool { return rec.count("peer joined the membership") == 1 })
	if n := rec.count("peer is back"); n != 0 {
		t.Fatalf("the first join was logged as 'peer is back' %d times, want 0", n)
	}
	other.c.crash()
	testutil.EventuallyWithin(t, "'peer missing' logged", 10*time.Second, func() bool { return rec.count("peer missing") == 1 })
	startBoard(t, testConfig("ews2", peers, testKey))
	testutil.EventuallyWithin(t, "'peer is back' logged after the restart", 15*time.Second, func() bool { return rec.count("peer is back") == 1 })
	if n := rec.count("peer joined the membership"); n != 1 {
		t.Fatalf("'peer joined' logged %d times, want 1 (the restart is 'back')", n)
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"1 error occurred:\n\t* Failed to join 127.0.0.1:7947: dial tcp 127.0.0.1:7947: connect: connection refused\n\n",
			"Failed to join 127.0.0.1:7947: dial tcp 127.0.0.1:7947: connect: connection refused"},
		{"2 errors occurred:\r\n\t* a\r\n\t* b\r\n", "2 errors occurred: a; b"},
		{"join failed: 1 error occurred:\n\t* x\n", "join failed: 1 error occurred: x"},
		{"", ""},
	} {
		if got := oneLine(tc.in); got != tc.want {
			t.Errorf("oneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMemberlistLogIsOneLine(t *testing.T) {
	rec := newRecorder()
	l := &mlLog{logger: slog.New(rec), refused: func(string) {}}
	_, _ = l.Write([]byte("[WARN] memberlist: join failed: 1 error occurred:\n\t* Failed to join 127.0.0.1:1: refused\n\n"))
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(*rec.msgs) != 1 {
		t.Fatalf("%d records, want 1: %q", len(*rec.msgs), *rec.msgs)
	}
	if m := (*rec.msgs)[0]; strings.ContainsAny(m, "\n\t") || !strings.Contains(m, "Failed to join 127.0.0.1:1") {
		t.Fatalf("record %q: want one line keeping the error", m)
	}
}
