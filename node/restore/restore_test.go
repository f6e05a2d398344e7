package restore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
)

func out(name, state string, seq uint64) hal.Snapshot {
	return hal.Snapshot{Name: name, Node: "ews2", State: state, Value: state == hal.StateOn, Seq: seq}
}

func TestPlan(t *testing.T) {
	cases := []struct {
		name    string
		own     []hal.Snapshot
		offers  map[string][]hal.Snapshot
		want    []string // device@board=state
		kept    []string
		dropped []string
	}{
		{"nothing remembered", []hal.Snapshot{out("r1", "off", 0)}, nil, nil, []string{"r1"}, nil},
		{"the highest seq wins across boards",
			[]hal.Snapshot{out("r1", "off", 0)},
			map[string][]hal.Snapshot{"ews1": {out("r1", "on", 10)}, "ews3": {out("r1", "off", 12)}},
			[]string{"r1@ews3=off"}, nil, nil},
		{"a board that missed the last command does not win",
			[]hal.Snapshot{out("r1", "off", 0)},
			map[string][]hal.Snapshot{"ews1": {out("r1", "on", 12)}, "ews3": {out("r1", "off", 10)}},
			[]string{"r1@ews1=on"}, nil, nil},
		{"equal seqs name the first board",
			[]hal.Snapshot{out("r1", "off", 0)},
			map[string][]hal.Snapshot{"ews3": {out("r1", "on", 10)}, "ews1": {out("r1", "on", 10)}},
			[]string{"r1@ews1=on"}, nil, nil},
		{"own state as new or newer is kept",
			[]hal.Snapshot{out("r1", "off", 20), out("r2", "off", 10)},
			map[string][]hal.Snapshot{"ews1": {out("r1", "on", 15), out("r2", "on", 10)}},
			nil, []string{"r1", "r2"}, nil},
		{"a device this board no longer has is dropped",
			[]hal.Snapshot{out("r1", "off", 0)},
			map[string][]hal.Snapshot{"ews1": {out("r1", "on", 5), out("gone", "on", 5)}},
			[]string{"r1@ews1=on"}, nil, []string{"gone"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			steps, kept, dropped := Plan(c.own, c.offers)
			var got, gotKept []string
			for _, s := range steps {
				got = append(got, s.From.Name+"@"+s.Board+"="+s.From.State)
			}
			for _, k := range kept {
				gotKept = append(gotKept, k.Device)
			}
			if !slices.Equal(got, c.want) || !slices.Equal(gotKept, c.kept) || !slices.Equal(dropped, c.dropped) {
				t.Errorf("Plan = %v kept %v dropped %v, want %v kept %v dropped %v", got, gotKept, dropped, c.want, c.kept, c.dropped)
			}
		})
	}
}

func TestSettled(t *testing.T) {
	answered := map[string][]hal.Snapshot{"ews1": nil}
	cases := []struct {
		name    string
		alive   []string
		master  string
		offers  map[string][]hal.Snapshot
		elapsed time.Duration
		want    bool
	}{
		{"alone, before settle", nil, "", nil, 100 * time.Millisecond, false},
		{"alone, after settle", nil, "", nil, 2 * time.Second, true},
		{"master answered, all alive answered", []string{"ews1"}, "ews1", answered, 0, true},
		{"an alive peer has not answered", []string{"ews1", "ews3"}, "ews1", answered, 10 * time.Second, false},
		{"master known, not answered, its address not known yet", nil, "ews1", nil, 10 * time.Second, false},
		{"this board is master (it waited tmax): alive peers suffice", []string{"ews1"}, "ews2", answered, 0, true},
		{"no master yet, peers answered, before settle", []string{"ews1"}, "", answered, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Settled("ews2", c.alive, c.master, c.offers, c.elapsed, time.Second); got != c.want {
				t.Errorf("Settled = %v, want %v", got, c.want)
			}
		})
	}
}

// fakeDevices records restores; a name in refuse fails with ErrCommanded.
type fakeDevices struct {
	mu       sync.Mutex
	own      []hal.Snapshot
	refuse   map[string]bool
	restored []string
	released bool
}

func (f *fakeDevices) Restorable() []hal.Snapshot { return f.own }
func (f *fakeDevices) Restore(_ context.Context, s hal.Snapshot) (hal.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.released {
		return s, errors.New("restored after release")
	}
	if f.refuse[s.Name] {
		return s, hal.ErrCommanded
	}
	f.restored = append(f.restored, s.Name+"="+s.State)
	s.Restored = true
	return s, nil
}
func (f *fakeDevices) Release() { f.mu.Lock(); f.released = true; f.mu.Unlock() }

// offers answers for the boards in answered once the test opens the gate.
type offers struct {
	mu   sync.Mutex
	m    map[string][]hal.Snapshot
	seen int
}

func (o *offers) get() map[string][]hal.Snapshot {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen++
	if o.seen < 3 { // the first looks find nothing yet: the streams are opening
		return map[string][]hal.Snapshot{}
	}
	return o.m
}

func TestRun(t *testing.T) {
	devs := &fakeDevices{own: []hal.Snapshot{out("r1", "off", 0), out("r2", "off", 0), out("r3", "off", 0)}, refuse: map[string]bool{"r2": true}}
	src := &offers{m: map[string][]hal.Snapshot{
		"ews1": {out("r1", "on", 5), out("r2", "on", 5), out("gone", "on", 5)},
		"ews3": {},
	}}
	var notified []string
	res := Run(context.Background(), Options{
		Self: "ews2", Devices: devs, Poll: time.Millisecond, Settle: time.Hour, Wait: 10 * time.Second,
		Peers: func() []string { return []string{"ews1", "ews3"} }, Master: func() string { return "ews1" },
		Offers:    src.get,
		OnRestore: func(s hal.Snapshot, from string) { notified = append(notified, s.Name+"@"+from) },
	})
	if !devs.released {
		t.Error("devices not released")
	}
	if !slices.Equal(devs.restored, []string{"r1=on"}) || !slices.Equal(notified, []string{"r1@ews1"}) {
		t.Errorf("restored %v notified %v, want r1 on from ews1", devs.restored, notified)
	}
	if !slices.Equal(res.Answered, []string{"ews1", "ews3"}) || len(res.Missing) != 0 || !slices.Equal(res.Dropped, []string{"gone"}) {
		t.Errorf("result %+v", res)
	}
	if res.Took > 5*time.Second {
		t.Errorf("took %v: did not stop when every board had answered", res.Took)
	}
	var kept []string
	for _, k := range res.Kept {
		kept = append(kept, k.Device)
	}
	if !slices.Equal(kept, []string{"r3", "r2"}) {
		t.Errorf("kept %v, want r3 (nothing remembered) and r2 (refused)", kept)
	}
}

// TestRunReleasesWhenNobodyAnswers: a board alone (its peers down) waits
// at most Wait, keeps its initial states and serves.
func TestRunReleasesWhenNobodyAnswers(t *testing.T) {
	devs := &fakeDevices{own: []hal.Snapshot{out("r1", "off", 0)}}
	res := Run(context.Background(), Options{
		Self: "ews2", Devices: devs, Poll: time.Millisecond, Settle: 20 * time.Millisecond, Wait: 50 * time.Millisecond,
		Peers: func() []string { return []string{"ews1"} }, Master: func() string { return "" },
		Offers: func() map[string][]hal.Snapshot { return nil },
	})
	if !devs.released || len(devs.restored) != 0 || !slices.Equal(res.Missing, []string{"ews1"}) {
		t.Errorf("released %v restored %v missing %v", devs.released, devs.restored, res.Missing)
	}
}

func TestRunCancelled(t *testing.T) {
	devs := &fakeDevices{own: []hal.Snapshot{out("r1", "off", 0)}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Run(ctx, Options{Self: "ews2", Devices: devs, Peers: func() []string { return []string{"ews1"} },
		Master: func() string { return "" }, Offers: func() map[string][]hal.Snapshot { return nil }})
	if !devs.released {
		t.Error("devices not released after ctx ended")
	}
}
