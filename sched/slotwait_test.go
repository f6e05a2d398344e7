package sched

import (
	"testing"
	"time"
)

// A ticket tells how much of its wait was for a slot once its device could
// start it: an action that waited only for its device waited no slot; one
// whose device was free but whose board was full waited a slot for all of
// that; one that did not queue waited nothing.
func TestTicketSlotWait(t *testing.T) {
	clk := newFakeClock()
	s := devCfg()
	s.QueueTarget = 0
	h := newHarness(t, s, Options{Clock: clk}, board("a", 2))
	first := h.now(act("relay"))
	if first.SlotWait != 0 {
		t.Fatalf("a request that did not queue: SlotWait %v", first.SlotWait)
	}
	second := h.queue(act("relay")) // its device is busy; a slot is free
	clk.Advance(15 * time.Millisecond)
	first.Done()
	o := h.result(second)
	if o.err != nil || o.t.SlotWait != 0 {
		t.Fatalf("waited for its device only: %v, SlotWait %v, want 0", o.err, o.t.SlotWait)
	}
	page := h.now(&Request{Class: browse}) // the board is full: the action's ticket and a page
	third := h.queue(act("sensor"))        // its device is free, no slot
	clk.Advance(7 * time.Millisecond)
	page.Done()
	o3 := h.result(third)
	if o3.err != nil || o3.t.SlotWait != 7*time.Millisecond {
		t.Fatalf("waited for a slot only: %v, SlotWait %v, want 7ms", o3.err, o3.t.SlotWait)
	}
	o.t.Done()
	o3.t.Done()
}
