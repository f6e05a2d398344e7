package clusterview

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/state"
)

func TestRefusalsMarkAndExpire(t *testing.T) {
	t0 := time.Unix(1000, 0)
	view := func() state.View {
		return state.View{Nodes: []state.Board{{Name: "ews1"}, {Name: "ews2"}, {Name: "ews3", AuthMismatch: true}}}
	}
	var r refusals
	cases := []struct {
		at   time.Duration
		want [3]bool
	}{
		{0, [3]bool{false, false, true}}, // nothing refused: the view as it is
		{time.Second, [3]bool{false, true, true}},
		{refusalTTL, [3]bool{false, true, true}},
		{refusalTTL + 2*time.Second, [3]bool{false, false, true}}, // expired
	}
	for i, c := range cases {
		if i == 1 {
			r.seen("ews2", t0)
		}
		v := r.mark(view(), t0.Add(c.at))
		for j, n := range v.Nodes {
			if n.AuthMismatch != c.want[j] {
				t.Errorf("case %d: %s auth_mismatch=%v, want %v", i, n.Name, n.AuthMismatch, c.want[j])
			}
		}
	}
}
