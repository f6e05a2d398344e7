package sched

import (
	"maps"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/promx"
)

// A lease is a slot of one board taken without waiting: only while nothing
// is queued and the board can take a request; it counts in the board's
// linknum and capacity like any ticket, and gives the admission no arrival
// and, when Done, no service time.
func TestLease(t *testing.T) {
	tests := []struct {
		name  string
		board string
		setup func(h *harness) []Ticket // what holds slots or queues before the lease
		ok    bool
	}{
		{name: "an idle board", board: "a", ok: true},
		{name: "an unknown board", board: "x"},
		{name: "a board that is down", board: "c"},
		{name: "a full board", board: "a", setup: func(h *harness) []Ticket {
			return []Ticket{h.now(&Request{Class: browse, Board: "a"}), h.now(&Request{Class: browse, Board: "a"})}
		}},
		{name: "a request waits in the queue", board: "b", setup: func(h *harness) []Ticket {
			held := []Ticket{h.now(&Request{Class: browse, Board: "a"}), h.now(&Request{Class: browse, Board: "a"})}
			h.queue(&Request{Class: control, Board: "a"})
			h.poll("one queued", func() bool { return h.d.Depths()["control"] == 1 })
			return held
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, schedCfg("priority-lc", 8), Options{},
				Board{Name: "a", Capacity: 2, Running: true}, Board{Name: "b", Capacity: 2, Running: true}, Board{Name: "c", Capacity: 2})
			var held []Ticket
			if tt.setup != nil {
				held = tt.setup(h)
			}
			svc := append([]int64(nil), durations(h.d)...)
			got := h.d.Lease(tt.board, 1)
			ok := len(got) == 1
			if ok != tt.ok {
				t.Fatalf("Lease(%s) = %v, want %v", tt.board, ok, tt.ok)
			}
			for _, t := range held {
				t.Done()
			}
			if !ok {
				return
			}
			lt := got[0]
			if lt.Board != tt.board || linknum(h.d, tt.board) != 1 {
				t.Fatalf("leased %+v, linknum %d", lt, linknum(h.d, tt.board))
			}
			if s := h.d.Started(); s["browse"]+s["control"] != 0 {
				t.Fatalf("a lease counted as a dispatch: %v", s)
			}
			lt.Done()
			if n := linknum(h.d, tt.board); n != 0 {
				t.Fatalf("linknum after Done: %d", n)
			}
			for c, d := range durations(h.d) {
				if d != svc[c] {
					t.Fatalf("class %d's service time moved with a lease: %d, was %d", c, d, svc[c])
				}
			}
		})
	}
}

// A lease asks for n slots and gets what its board has room for: below
// its capacity, within LeaseSlack of the least busy running board, and
// none under a policy other than least connections.
func TestLeaseRoom(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		capA   int
		n      int
		want   int
	}{
		{name: "capacity bounds it", policy: "priority-lc", capA: 4, n: 16, want: 4},
		{name: "slack bounds it", policy: "priority-lc", capA: 20, n: 16, want: LeaseSlack},
		{name: "n bounds it", policy: "priority-lc", capA: 20, n: 3, want: 3},
		{name: "not least connections", policy: "rr", capA: 20, n: 4, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, schedCfg(tt.policy, 8), Options{},
				Board{Name: "a", Capacity: tt.capA, Running: true}, Board{Name: "b", Capacity: 10, Running: true})
			got := h.d.Lease("a", tt.n)
			if len(got) != tt.want {
				t.Fatalf("Lease(a, %d) = %d slots, want %d", tt.n, len(got), tt.want)
			}
			for _, lt := range got {
				lt.Done()
			}
		})
	}
}

func durations(d *Dispatcher) []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]int64, len(d.admit.svc))
	for i, s := range d.admit.svc {
		out[i] = int64(s)
	}
	return out
}

func linknum(d *Dispatcher, name string) int {
	for _, b := range d.Boards() {
		if b.Name == name {
			return b.Linknum
		}
	}
	return -1
}

// Requests a follower ran on its lease count in the master's per-class
// figures (Started, ews_sched_dispatch_total, the admission's arrivals)
// as placed ones do; they take no slot, and what the dispatcher cannot
// name (a board it does not know, a class it does not have) is left out.
func TestRanOnLease(t *testing.T) {
	tests := []struct {
		name        string
		board       string
		class, n    int
		wantStarted map[string]uint64
		wantMetric  string
	}{
		{name: "pages on a's lease", board: "a", class: browse, n: 3,
			wantStarted: map[string]uint64{"control": 0, "browse": 3},
			wantMetric:  `ews_sched_dispatch_total{board="a",class="browse"} 3`},
		{name: "control on b's lease", board: "b", class: control, n: 2,
			wantStarted: map[string]uint64{"control": 2, "browse": 0},
			wantMetric:  `ews_sched_dispatch_total{board="b",class="control"} 2`},
		{name: "an unknown board", board: "x", class: browse, n: 3,
			wantStarted: map[string]uint64{"control": 0, "browse": 0}},
		{name: "an unknown class", board: "a", class: 7, n: 3,
			wantStarted: map[string]uint64{"control": 0, "browse": 0}},
		{name: "a negative class", board: "a", class: -1, n: 3,
			wantStarted: map[string]uint64{"control": 0, "browse": 0}},
		{name: "nothing ran", board: "a", class: browse, n: 0,
			wantStarted: map[string]uint64{"control": 0, "browse": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := promx.NewRegistry()
			h := newHarness(t, schedCfg("priority-lc", 8), Options{Registerer: reg},
				Board{Name: "a", Capacity: 2, Running: true}, Board{Name: "b", Capacity: 2, Running: true})
			h.d.RanOnLease(tt.board, tt.class, tt.n)
			if got := h.d.Started(); !maps.Equal(got, tt.wantStarted) {
				t.Fatalf("Started = %v, want %v", got, tt.wantStarted)
			}
			scrape := reg.Family("ews_sched_dispatch_total")
			if tt.wantMetric != "" && !strings.Contains(scrape, tt.wantMetric+"\n") {
				t.Fatalf("scrape:\n%s\nwant a line %s", scrape, tt.wantMetric)
			}
			var arrived int
			for _, n := range h.d.admit.arrived {
				arrived += n
			}
			if want := int(tt.wantStarted["control"] + tt.wantStarted["browse"]); arrived != want {
				t.Fatalf("admission arrivals %d, want %d", arrived, want)
			}
			if la, lb := linknum(h.d, "a"), linknum(h.d, "b"); la+lb != 0 {
				t.Fatalf("linknum a=%d b=%d: a count took a slot", la, lb)
			}
		})
	}
}

// A lease of entry f's board is revoked unless every waiting request is
// f's own, of the lowest class, for any board: those would get every freed
// slot anyway.
func TestQueuedBesides(t *testing.T) {
	tests := []struct {
		name  string
		queue []*Request
		entry string
		want  bool
	}{
		{name: "nothing waits", entry: "f"},
		{name: "f's own pages", entry: "f", queue: []*Request{{Class: browse, Entry: "f"}, {Class: browse, Entry: "f"}}},
		{name: "another entry's page", entry: "f", queue: []*Request{{Class: browse, Entry: "f"}, {Class: browse, Entry: "g"}}, want: true},
		{name: "the master's own page", entry: "f", queue: []*Request{{Class: browse}}, want: true},
		{name: "f's own control", entry: "f", queue: []*Request{{Class: control, Entry: "f"}}, want: true},
		{name: "f's own page pinned", entry: "f", queue: []*Request{{Class: browse, Entry: "f", Board: "a"}}, want: true},
		{name: "no entry named", entry: "", queue: []*Request{{Class: browse}}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, schedCfg("priority-lc", 8), Options{}, Board{Name: "a", Capacity: 1, Running: true})
			held := h.now(&Request{Class: browse})
			var waiting []*pending
			for _, r := range tt.queue {
				waiting = append(waiting, h.queue(r))
			}
			if got := h.d.QueuedBesides(tt.entry); got != tt.want {
				t.Fatalf("QueuedBesides(%q) = %v, want %v", tt.entry, got, tt.want)
			}
			for _, p := range waiting {
				p.cancel()
				h.result(p)
			}
			held.Done()
		})
	}
}
