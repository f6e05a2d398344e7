package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// The unequal boards' configs parse with the real parser and carry the
// settings each setup needs.
func TestUnequalConfigsParse(t *testing.T) {
	key := config.NewKey()
	for _, specs := range [][]boardSpec{busyBoards(3, 2, 20*time.Millisecond), speedBoards(3, 2, 20*time.Millisecond)} {
		bs := make([]board, len(specs))
		for i := range bs {
			bs[i] = board{spec: specs[i], http: "127.0.0.1:" + string(rune('1'+i)) + "000", gossip: "127.0.0.1:" + string(rune('1'+i)) + "001"}
		}
		pols, err := parseUnequal(unequalPolicies)
		if err != nil {
			t.Fatal(err)
		}
		for _, pol := range pols {
			data := boardConfig(bs, 2, true, pol, key, "", 4)
			cfg, err := config.Parse("gen.toml", []byte(data))
			if err != nil {
				t.Fatalf("%s: %v\n%s", pol, err, data)
			}
			switch pol {
			case setupProximity:
				if cfg.Sched.Policy != "integrated" || len(cfg.Sched.Proximity) != 1 || cfg.Sched.Proximity[0].Prefer[0] != "ews3" {
					t.Errorf("proximity: %+v", cfg.Sched)
				}
			case "qsc":
				if len(cfg.Sched.Classes) != 4 {
					t.Errorf("qsc classes %+v", cfg.Sched.Classes)
				}
			case "adaptive":
				if _, set := cfg.Sched.Adaptive.Limits["threshold"]; set || cfg.Sched.Adaptive.Suspend.Duration != adaptiveSuspend {
					t.Errorf("adaptive %+v", cfg.Sched.Adaptive)
				}
			}
		}
		last := config.Sim{}
		if cfg, err := config.Parse("gen.toml", []byte(boardConfig(bs, 2, true, "lc", key, "", 4))); err == nil {
			last = *cfg.Sim
		}
		if last.BusyFor.Duration == 0 && last.Speed == 0 {
			t.Errorf("the last board is not unequal: %+v", last)
		}
	}
	if _, err := parseUnequal("lc,nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown setup: %v", err)
	}
}

func TestShare(t *testing.T) {
	before := map[string]float64{"a": 10, "b": 10, "c": 0}
	after := map[string]float64{"a": 40, "b": 30, "c": 50}
	if got := share(before, after, "c"); got != 0.5 {
		t.Errorf("share = %v, want 50 of 100 = 0.5", got)
	}
	if got := share(nil, after, "c"); got != -1 {
		t.Errorf("share without a first reading = %v, want -1", got)
	}
}
