package sched

import (
	"context"
	"testing"
	"time"

	"github.com/ews-firmware/ews/state/row"
)

// Update takes the state package's rows as they are: only a running board
// with an HTTP address gets requests, a negative capacity is none, the
// master's probe gives the response time, and a row without a name is
// skipped.
func TestUpdateFromRows(t *testing.T) {
	rows := []row.Board{
		{Name: "ews1", Rank: 0, HTTP: "10.0.0.11:8080", Capacity: 4, Weight: 1, Runstate: row.Running, Linknum: 2, Load: row.Load{CPU: 0.5}},
		{Name: "", HTTP: "x:1", Runstate: row.Running},
		{Name: "ews2", Rank: 1, HTTP: "10.0.0.12:8080", Capacity: -3, Weight: 2, Runstate: row.Running, Linknum: -1},
		{Name: "ews3", Rank: 2, HTTP: "10.0.0.13:8080", Capacity: 4, Runstate: row.Overloaded, Linknum: 0},
		{Name: "ews4", Rank: 3, HTTP: "10.0.0.14:8080", Capacity: 4, Runstate: row.Down},
		{Name: "ews5", Rank: 4, HTTP: "", Capacity: 4, Runstate: row.Running},
		{Name: "ews6", Rank: 5, HTTP: "10.0.0.16:8080", Capacity: 4, Runstate: row.Joining},
	}
	rt := func(name string) time.Duration {
		if name == "ews2" {
			return 30 * time.Millisecond
		}
		return 0
	}
	d, err := NewDispatcher(DefaultConfig(), Options{RT: rt})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Update(rows)
	got := d.Boards()
	want := []struct {
		name    string
		running bool
		cap     int
		link    int
	}{
		{"ews1", true, 4, 2}, {"ews2", true, 0, 0}, {"ews3", false, 4, 0},
		{"ews4", false, 4, 0}, {"ews5", false, 4, 0}, {"ews6", false, 4, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("%d boards, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Running != w.running || g.Capacity != w.cap || g.Linknum != w.link {
			t.Errorf("board %d = %+v, want %+v", i, g, w)
		}
	}
	if got[0].Addr != "10.0.0.11:8080" || got[0].Load.CPU != 0.5 || got[1].Weight != 2 || got[1].RT != 30*time.Millisecond || got[0].RT != 0 {
		t.Fatalf("fields lost: %+v", got[:2])
	}
	tk, err := d.Acquire(context.Background(), &Request{Class: 1})
	if err != nil || tk.Board != "ews1" || tk.Addr != "10.0.0.11:8080" {
		t.Fatalf("acquire: %+v %v (only ews1 runs with free slots)", tk, err)
	}
	tk.Done()
}

// A board's report is taken at the board and heard later. In proxy mode
// (Options.Proxy) every request on the board is a ticket of ours, so a
// report heard after some of ours finished no longer holds their slots;
// what a report counts beyond ours (a previous master's requests) still
// holds slots until the next report, and the same report carried again in
// a later table is not taken again. Without Proxy a report is taken as it
// is, and the stale count holds the slot.
func TestReportHeardAfterTicketsFinished(t *testing.T) {
	for _, tc := range []struct {
		name  string
		proxy bool
		held  bool // the stale report keeps the one slot taken
	}{
		{"proxy: finished tickets leave the report", true, false},
		{"redirect: the report is taken as it is", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			a := board("a", 1)
			h := newHarness(t, schedCfg("priority-lc", 16), Options{Clock: clk, Proxy: tc.proxy}, a)
			report := func(linknum int, ageMs int64) {
				r := rows([]Board{a})
				r[0].Linknum, r[0].LastSeenMs = linknum, ageMs
				h.d.Update(r)
			}
			first := h.now(&Request{Class: control, Board: "a"})
			// the board takes its report while first runs; first ends,
			// then the report is heard
			clk.Advance(100 * time.Millisecond)
			first.Done()
			report(1, 0)
			if tc.held {
				if n := h.linknum("a"); n != 1 {
					t.Fatalf("linknum %d, want the report's 1", n)
				}
				p := h.queue(&Request{Class: control, Board: "a"})
				report(0, 0) // the next report frees it
				o := h.result(p)
				if o.err != nil {
					t.Fatal(o.err)
				}
				o.t.Done()
				return
			}
			if n := h.linknum("a"); n != 0 {
				t.Fatalf("linknum %d after a report of a ticket that finished before it was heard, want 0", n)
			}
			second := h.now(&Request{Class: control, Board: "a"})
			// the same report again (another board's report made a new
			// table, 20 ms later): not taken again, second still counts
			clk.Advance(20 * time.Millisecond)
			report(1, 20)
			if n := h.linknum("a"); n != 1 {
				t.Fatalf("linknum %d with second running and the same report again, want 1", n)
			}
			second.Done()
			if n := h.linknum("a"); n != 0 {
				t.Fatalf("linknum %d after second ended, want 0", n)
			}
			// a new report of two: one may be second (it finished since
			// the last report), the other is a request we did not place (a
			// previous master's): it holds the slot until a report says it
			// ended
			clk.Advance(80 * time.Millisecond)
			report(2, 0)
			if n := h.linknum("a"); n != 1 {
				t.Fatalf("linknum %d with a request of another's on the board, want 1", n)
			}
			p := h.queue(&Request{Class: control, Board: "a"})
			clk.Advance(100 * time.Millisecond)
			report(0, 0)
			o := h.result(p)
			if o.err != nil {
				t.Fatal(o.err)
			}
			o.t.Done()
		})
	}
}
