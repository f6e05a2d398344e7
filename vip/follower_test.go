package vip

import (
	"slices"
	"testing"
)

type fakeHolder struct{ calls []string }

func (f *fakeHolder) Set(want bool) {
	if want {
		f.calls = append(f.calls, "hold")
	} else {
		f.calls = append(f.calls, "drop")
	}
}
func (f *fakeHolder) Announce() { f.calls = append(f.calls, "announce") }

// The address is held while master and dropped otherwise; it is announced
// again only when more boards are up than in the last view as master (a
// healed partition), never on the first view nor when boards go.
func TestFollower(t *testing.T) {
	h := &fakeHolder{}
	f := Follower{h: h, up: -1}
	for _, v := range []struct {
		master bool
		up     int
	}{{true, 2}, {true, 3}, {true, 2}, {false, 3}, {true, 3}} {
		f.Follow(v.master, v.up)
	}
	want := []string{"hold", "hold", "announce", "hold", "drop", "hold"}
	if !slices.Equal(h.calls, want) {
		t.Errorf("calls %v, want %v", h.calls, want)
	}
	none := NewFollower(nil)
	none.Follow(true, 3) // nothing to hold: no call, no panic
}
