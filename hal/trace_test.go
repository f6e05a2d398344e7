package hal

import (
	"context"
	"testing"

	"github.com/ews-firmware/ews/internal/reqtrace"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// marksOf runs do with a trace in its context and returns the stages it marked.
func marksOf(t *testing.T, do func(ctx context.Context)) map[string]bool {
	t.Helper()
	tr := &reqtrace.Trace{}
	do(reqtrace.With(context.Background(), tr))
	h := make(map[string][]string)
	tr.Flush(h)
	out := map[string]bool{}
	for st := range reqtrace.Parse(h) {
		out[st] = true
	}
	return out
}

// A traced read that takes the device marks lock and done; one that joins
// a read under way marks joined and done; an action marks lock and done.
func TestTraceDeviceMarks(t *testing.T) {
	ds := open(t, parse(t, "[[device]]\nname = \"traced\"\ndriver = \"test-counter\"\nunits = \"hold\"\nmax_age = \"0s\"\n"), NewSimBoard())
	c := counterOf(t, "traced")
	own := marksOf(t, func(ctx context.Context) { _, _ = ds.Do(ctx, "traced", Action{Kind: Read}) })
	if !own[reqtrace.Lock] || !own[reqtrace.Done] || own[reqtrace.Joined] {
		t.Fatalf("own read marked %v, want lock and done", own)
	}
	// an action holds the device; a first read waits for it as a flight; a second joins that flight
	acted := make(chan struct{})
	go func() { _, _ = ds.Do(context.Background(), "traced", Action{Kind: TurnOn}); close(acted) }()
	testutil.Eventually(t, "the action holds the device", func() bool { return c.running.Load() == 1 })
	first := make(chan struct{})
	go func() { _, _ = ds.Do(context.Background(), "traced", Action{Kind: Read}); close(first) }()
	d := ds.devices().local["traced"]
	testutil.Eventually(t, "a read flight waits", func() bool { d.reads.mu.Lock(); defer d.reads.mu.Unlock(); return d.reads.flight != nil })
	tr, h := &reqtrace.Trace{}, map[string][]string{}
	second := make(chan struct{})
	go func() {
		_, _ = ds.Do(reqtrace.With(context.Background(), tr), "traced", Action{Kind: Read})
		close(second)
	}()
	testutil.Eventually(t, "the second read joins", func() bool { tr.Flush(h); return len(reqtrace.Parse(h)) > 0 })
	close(c.hold)
	<-acted
	<-first
	<-second
	tr.Flush(h)
	if j := reqtrace.Parse(h); j[reqtrace.Joined].IsZero() || j[reqtrace.Done].IsZero() || !j[reqtrace.Lock].IsZero() {
		t.Fatalf("second read marked %v, want joined and done", j)
	}
	act := marksOf(t, func(ctx context.Context) { _, _ = ds.Do(ctx, "traced", Action{Kind: TurnOn}) })
	if !act[reqtrace.Lock] || !act[reqtrace.Done] {
		t.Fatalf("action marked %v, want lock and done", act)
	}
}
