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
