package node

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestLifecycleStopsInReverse: components stop last-started first, each
// waited for; closers run after, in reverse; a failure is reported.
func TestLifecycleStopsInReverse(t *testing.T) {
	var mu sync.Mutex
	var log []string
	note := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
	comp := func(name string) runner {
		return runFunc(func(ctx context.Context) error {
			<-ctx.Done()
			note("stop " + name)
			return nil
		})
	}
	var l lifecycle
	l.onClose(func() { note("close a") })
	l.onClose(func() { note("close b") })
	parent, cancel := context.WithCancel(context.Background())
	for _, n := range []string{"health", "devices", "mirror"} {
		l.start(parent, n, comp(n))
	}
	cancel() // Run's context ending does not stop the components by itself
	select {
	case <-l.failed():
		t.Fatal("failed without a failure")
	default:
	}
	l.close()
	l.close() // once
	want := []string{"stop mirror", "stop devices", "stop health", "close b", "close a"}
	if !slices.Equal(log, want) {
		t.Fatalf("order %q, want %q", log, want)
	}
}

func TestLifecycleFailure(t *testing.T) {
	var l lifecycle
	boom := errors.New("boom")
	l.start(context.Background(), "ok", runFunc(func(ctx context.Context) error { <-ctx.Done(); return nil }))
	l.start(context.Background(), "bad", runFunc(func(context.Context) error { return boom }))
	select {
	case <-l.failed():
	case <-time.After(5 * time.Second):
		t.Fatal("a failed component was not reported")
	}
	if err := l.stop(); !errors.Is(err, boom) || err.Error() != "node: bad: boom" {
		t.Fatalf("stop: %v, want node: bad: boom", err)
	}
}
