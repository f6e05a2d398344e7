package sched

import (
	"sync"
	"testing"
)

// A queued request's Started is told its ticket by the goroutine that
// freed the slot, before that goroutine's Done returns (after Update, in
// a goroutine of its own); Acquire returns the same ticket, and ending it
// twice (once by each) gives back one slot. A request placed at once or
// shed is not told.
func TestRequestStarted(t *testing.T) {
	type told struct {
		mu sync.Mutex
		ts []Ticket
	}
	record := func(tl *told) func(Ticket) {
		return func(t Ticket) { tl.mu.Lock(); tl.ts = append(tl.ts, t); tl.mu.Unlock() }
	}
	count := func(tl *told) int { tl.mu.Lock(); defer tl.mu.Unlock(); return len(tl.ts) }
	tests := []struct {
		name string
		free func(h *harness, held Ticket) // what frees a slot for the queued request
		sync bool                          // Started was told before free returned
	}{
		{name: "Done of the request on the board", sync: true, free: func(_ *harness, held Ticket) { held.Done() }},
		{name: "Update brings a second board", free: func(h *harness, held Ticket) {
			h.d.Update(rows([]Board{board("a", 1), board("b", 1)}))
			held.Done()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, schedCfg("priority-lc", 8), Options{}, board("a", 1))
			var now, queued told
			held := h.now(&Request{Class: browse, Started: record(&now)})
			p := h.queue(&Request{Class: browse, Started: record(&queued)})
			tt.free(h, held)
			if tt.sync && count(&queued) != 1 {
				t.Fatalf("Started told %d times when Done returned, want 1", count(&queued))
			}
			h.poll("Started told", func() bool { return count(&queued) == 1 })
			o := h.result(p)
			if o.err != nil || o.t != queued.ts[0] {
				t.Fatalf("Acquire returned %+v %v; Started was told %+v", o.t, o.err, queued.ts[0])
			}
			if count(&now) != 0 {
				t.Fatal("Started told for a request placed at once")
			}
			queued.ts[0].Done()
			o.t.Done()
			h.poll("both boards idle", func() bool { return h.linknum("a") == 0 && (len(h.d.boards) < 2 || h.linknum("b") == 0) })
			if count(&queued) != 1 {
				t.Fatalf("Started told %d times, want once", count(&queued))
			}
		})
	}
	h := newHarness(t, schedCfg("priority-lc", 1), Options{}, board("a", 1))
	held := h.now(&Request{Class: browse})
	p := h.queue(&Request{Class: browse})
	var shed told
	h.shed(&Request{Class: browse, Started: record(&shed)}, ReasonFull)
	held.Done()
	h.result(p).t.Done()
	if count(&shed) != 0 {
		t.Fatal("Started told for a shed request")
	}
}
