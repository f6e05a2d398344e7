package sched

import (
	"testing"
	"time"
)

func TestDeviceOf(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		name         string
		read         bool
	}{
		{"POST", "/api/devices/temp1/read", "temp1", true},
		{"POST", "/api/devices/relay1/turn_on", "relay1", false},
		{"POST", "/api/devices/relay1/pulse", "relay1", false},
		{"POST", "/api/devices/relay1/bogus", "", false},
		{"GET", "/api/devices/temp1", "", false},
		{"GET", "/api/devices/temp1/history", "", false},
		{"POST", "/api/devices//read", "", false},
		{"POST", "/api/devices/temp1", "", false},
		{"POST", "/cgi-bin/x", "", false},
	} {
		name, read := DeviceOf(tc.method, tc.path)
		if name != tc.name || read != tc.read {
			t.Errorf("DeviceOf(%s %s) = %q, %v; want %q, %v", tc.method, tc.path, name, read, tc.name, tc.read)
		}
	}
}

// devCfg is schedCfg with the devices of the tests: relay and sensor one
// operation at a time, pair two at once, r1 and r2 an interlock group.
func devCfg() Config {
	s := schedCfg("priority-lc", 16)
	s.Devices = []Device{{Name: "relay"}, {Name: "sensor"}, {Name: "pair", Concurrency: 2},
		{Name: "r1", Lock: "g"}, {Name: "r2", Lock: "g"}}
	return s
}

// act and rd are an action and a read of a device reached from any board
// (node = "any"): never admitted ahead (device_ahead.go); actOn is an
// action pinned to board a, where its device is wired.
func act(dev string) *Request   { return &Request{Class: control, Device: dev} }
func rd(dev string) *Request    { return &Request{Class: control, Device: dev, Read: true} }
func actOn(dev string) *Request { return &Request{Class: control, Board: "a", Device: dev} }

// A request for a busy device waits in the queue, not in a board slot:
// the board's free slots go to other work meanwhile.
func TestBusyDeviceWaitsWithoutASlot(t *testing.T) {
	h := newHarness(t, devCfg(), Options{}, board("a", 4))
	first := h.now(act("relay"))
	second := h.queue(act("relay"))
	if n := h.linknum("a"); n != 1 {
		t.Fatalf("linknum %d while one action runs and one waits for its device, want 1", n)
	}
	page := h.now(&Request{Class: browse})
	other := h.now(act("sensor"))
	if _, ok := ready(second); ok {
		t.Fatal("second action on a busy device started")
	}
	first.Done()
	o := h.result(second)
	if o.err != nil || o.t.Board != "a" {
		t.Fatalf("second action: %v on %q", o.err, o.t.Board)
	}
	for _, tk := range []Ticket{o.t, page, other} {
		tk.Done()
	}
	if n := h.linknum("a"); n != 0 {
		t.Fatalf("linknum %d after all done", n)
	}
	if busy := h.d.busyDevices(); len(busy) != 0 {
		t.Fatalf("devices still busy: %v", busy)
	}
}

// Reads of one device start together (they share one device read); an
// action waits for them, and reads after a waiting action wait behind it.
func TestReadsShareActionsWait(t *testing.T) {
	h := newHarness(t, devCfg(), Options{}, board("a", 8))
	r1, r2 := h.now(rd("sensor")), h.now(rd("sensor"))
	action := h.queue(act("sensor"))
	late := h.queue(rd("sensor"))
	r1.Done()
	if _, ok := ready(action); ok {
		t.Fatal("action started while a read runs")
	}
	r2.Done()
	o := h.result(action)
	if o.err != nil {
		t.Fatal(o.err)
	}
	if _, ok := ready(late); ok {
		t.Fatal("read started while the action runs")
	}
	o.t.Done()
	if o := h.result(late); o.err != nil {
		t.Fatal(o.err)
	} else {
		o.t.Done()
	}
}

func TestDeviceConcurrencyAndLocks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		first, try string // devices
		together   bool
	}{
		{"one at a time", "relay", "relay", false},
		{"a driver that runs two", "pair", "pair", true},
		{"an interlock group shares its lock", "r1", "r2", false},
		{"two devices", "relay", "r1", true},
		{"unknown devices are not held", "nope", "nope", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, devCfg(), Options{}, board("a", 8))
			first := h.now(act(tc.first))
			if tc.together {
				h.now(act(tc.try)).Done()
				first.Done()
				return
			}
			p := h.queue(act(tc.try))
			first.Done()
			o := h.result(p)
			if o.err != nil {
				t.Fatal(o.err)
			}
			o.t.Done()
		})
	}
}

// A long wait for a busy device is not overload of the boards: CoDel does
// not shed the class's other requests because of it.
func TestDeviceWaitIsNotOverload(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, devCfg(), Options{Clock: clk}, board("a", 4))
	held := h.now(act("relay"))
	waiting := h.queue(act("relay"))
	for range 3 {
		clk.Advance(200 * time.Millisecond)
		h.now(act("sensor")).Done()
	}
	held.Done()
	o := h.result(waiting)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.t.Done()
	h.now(act("sensor")).Done() // a served 600 ms device wait did not start dropping
}

func TestDevicesConfigRefused(t *testing.T) {
	for _, devs := range [][]Device{{{Name: "x"}, {Name: "x"}}, {{Name: ""}}} {
		s := schedCfg("priority-lc", 4)
		s.Devices = devs
		if _, err := NewDispatcher(s, Options{}); err == nil {
			t.Errorf("devices %+v accepted", devs)
		}
	}
}

// A request for a free device that waits for a slot is load like any other:
// CoDel sheds new arrivals once it waited past the target for a while.
func TestDeviceRequestWaitingForASlotIsLoad(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, devCfg(), Options{Clock: clk}, board("a", 1))
	hold := h.now(&Request{Class: control, Board: "a"})
	waiting := h.queue(act("relay"))
	clk.Advance(150 * time.Millisecond)
	second := h.queue(&Request{Class: control, Board: "a"}) // sees the wait above target
	clk.Advance(150 * time.Millisecond)
	h.shed(&Request{Class: control, Board: "a"}, ReasonOverload)
	hold.Done()
	for _, p := range []*pending{waiting, second} {
		if o := h.result(p); o.err == nil {
			o.t.Done()
		}
	}
}
