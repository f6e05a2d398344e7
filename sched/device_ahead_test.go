package sched

import "testing"

// An action for a one-at-a-time device wired to a board takes its slot on
// that board while the device's running action still runs there (it waits
// at the board's device lock), one ahead at a time; nothing else is
// admitted ahead.
func TestDeviceAhead(t *testing.T) {
	on := func(board, dev string, read bool) *Request {
		return &Request{Class: control, Board: board, Device: dev, Read: read}
	}
	for _, tc := range []struct {
		name     string
		running  []*Request // started first, each at once
		next     *Request
		ahead    bool
		onBoard  string
		linknumA int // board a's slots taken once next is admitted ahead
	}{
		{"an action behind an action on its board", []*Request{actOn("relay")}, actOn("relay"), true, "a", 2},
		{"a read is not admitted ahead", []*Request{actOn("relay")}, on("a", "relay", true), false, "", 1},
		{"an action of a device reached from any board", []*Request{act("relay")}, act("relay"), false, "", 1},
		{"an action pinned to another board than the running one's", []*Request{on("b", "relay", false)}, actOn("relay"), false, "", 0},
		{"behind a read: reads may run on several boards", []*Request{on("a", "sensor", true)}, actOn("sensor"), false, "", 1},
		{"a device of two places, both taken", []*Request{actOn("pair"), actOn("pair")}, actOn("pair"), false, "", 2},
		{"an interlock group's other device", []*Request{actOn("r1")}, actOn("r2"), true, "a", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, devCfg(), Options{}, board("a", 4), board("b", 4))
			var held []Ticket
			for _, r := range tc.running {
				held = append(held, h.now(r))
			}
			if tc.ahead {
				tk := h.now(tc.next)
				if tk.Board != tc.onBoard {
					t.Fatalf("admitted ahead on %q, want %q", tk.Board, tc.onBoard)
				}
				held = append(held, tk)
			} else {
				p := h.queue(tc.next)
				for _, tk := range held {
					tk.Done()
				}
				held = nil
				if o := h.result(p); o.err != nil {
					t.Fatalf("after the device was free: %v", o.err)
				} else {
					held = append(held, o.t)
				}
			}
			if n := h.linknum("a"); tc.ahead && n != tc.linknumA {
				t.Fatalf("board a linknum %d with the action ahead, want %d", n, tc.linknumA)
			}
			for _, tk := range held {
				tk.Done()
			}
			if busy := h.d.busyDevices(); len(busy) != 0 {
				t.Fatalf("devices still busy: %v", busy)
			}
		})
	}
}

// One ahead at a time: a third action waits in the master's queue, and is
// admitted ahead in its turn once the first ends (the second then runs).
func TestDeviceAheadOneAtATime(t *testing.T) {
	h := newHarness(t, devCfg(), Options{}, board("a", 4))
	first := h.now(actOn("relay"))
	second := h.now(actOn("relay"))
	third := h.queue(actOn("relay"))
	if n := h.linknum("a"); n != 2 {
		t.Fatalf("linknum %d with one running, one ahead and one queued, want 2", n)
	}
	if _, ok := ready(third); ok {
		t.Fatal("a second action admitted ahead")
	}
	first.Done()
	o := h.result(third)
	if o.err != nil || o.t.Board != "a" {
		t.Fatalf("third action: %v on %q", o.err, o.t.Board)
	}
	second.Done()
	o.t.Done()
	if n := h.linknum("a"); n != 0 {
		t.Fatalf("linknum %d after all done", n)
	}
	if busy := h.d.busyDevices(); len(busy) != 0 {
		t.Fatalf("devices still busy: %v", busy)
	}
}

// Nothing is admitted ahead while a request waits for a slot: the slot held
// at the device lock would be taken from it.
func TestDeviceAheadNotOverPages(t *testing.T) {
	s := devCfg()
	s.QueueTarget = 0
	h := newHarness(t, s, Options{}, board("a", 2))
	first := h.now(actOn("relay"))
	page := h.now(&Request{Class: browse}) // the board is full
	waiting := h.queue(&Request{Class: browse})
	page.Done() // the waiting page takes the slot
	o := h.result(waiting)
	if o.err != nil {
		t.Fatal(o.err)
	}
	late := h.queue(&Request{Class: browse}) // waits for a slot
	second := h.queue(actOn("relay"))
	o.t.Done() // a slot frees: the page gets it, not the action ahead
	ol := h.result(late)
	if ol.err != nil {
		t.Fatal(ol.err)
	}
	if _, ok := ready(second); ok {
		t.Fatal("an action admitted ahead while a page waited for the slot")
	}
	first.Done()
	os := h.result(second)
	if os.err != nil {
		t.Fatal(os.err)
	}
	ol.t.Done()
	os.t.Done()
	if busy := h.d.busyDevices(); len(busy) != 0 {
		t.Fatalf("devices still busy: %v", busy)
	}
}
