package clusterview

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/report"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/procload"
)

// unknownLoad is a load source that could not read some figures, with a
// run queue.
type unknownLoad struct {
	unknown state.LoadFigures
	runQ    float64
}

func (unknownLoad) Load() state.Load             { return state.Load{} }
func (u unknownLoad) Unknown() state.LoadFigures { return u.unknown }
func (u unknownLoad) RunQueue() float64          { return u.runQ }

// Only this board's own row says which of its figures are unknown, and
// its run queue.
func TestMarkUnknown(t *testing.T) {
	v := func() state.View {
		return state.View{Self: "ews2", Nodes: []state.Board{{Name: "ews1"}, {Name: "ews2"}, {Name: "ews3"}}}
	}
	for _, c := range []struct {
		name string
		load report.LoadSource
		want map[string]state.LoadFigures
		runQ float64 // on ews2's row alone
	}{
		{"cpu_mhz unknown", unknownLoad{state.FigCPUMHz, 2}, map[string]state.LoadFigures{"ews1": 0, "ews2": state.FigCPUMHz, "ews3": 0}, 2},
		{"all read", unknownLoad{0, 0}, map[string]state.LoadFigures{"ews1": 0, "ews2": 0, "ews3": 0}, 0},
		{"simulated board", &procload.Sim{}, map[string]state.LoadFigures{"ews1": 0, "ews2": 0, "ews3": 0}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			view := New(Options{Load: c.load})
			for _, b := range view.markUnknown(v()).Nodes {
				if b.LoadUnknown != c.want[b.Name] {
					t.Fatalf("%s: load_unknown [%v], want [%v]", b.Name, b.LoadUnknown, c.want[b.Name])
				}
				if want := map[bool]float64{true: c.runQ}[b.Name == "ews2"]; b.Load.RunQueue != want {
					t.Fatalf("%s: run_queue %v, want %v", b.Name, b.Load.RunQueue, want)
				}
			}
		})
	}
}

// Paper 003's monitoring table: the master's view carries the response
// times it probed and, under the integrated policy, its limits; a
// follower's view has the policy but no response times (it does not probe).
func TestMonitoredView(t *testing.T) {
	for _, c := range []struct {
		name, policy, self string
		limits             bool
		rt                 map[string]float64
	}{
		{"master, integrated", "integrated", "ews1", true, map[string]float64{"ews1": 0.5, "ews2": 12.25, "ews3": 0}},
		{"master, lc", "lc", "ews1", false, map[string]float64{"ews1": 0.5, "ews2": 12.25, "ews3": 0}},
		{"follower, integrated", "integrated", "ews2", true, map[string]float64{"ews1": 0, "ews2": 0, "ews3": 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.DefaultConfig()
			cfg.Sched.Policy = c.policy
			b, err := bootconf.Map(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			view := New(Options{Sched: func() sched.Config { return b.Sched }})
			view.rt.observe("ews1", 500*time.Microsecond)
			view.rt.observe("ews2", 12250*time.Microsecond)
			v := view.monitored(state.View{Master: "ews1", Self: c.self, Nodes: []state.Board{{Name: "ews1"}, {Name: "ews2"}, {Name: "ews3"}}})
			if v.Policy != c.policy {
				t.Fatalf("policy %q", v.Policy)
			}
			want := map[string]float64(nil)
			if c.limits {
				want = map[string]float64{"cpu": 0.5, "mem": 0.8, "disk": 0.8, "rt": 100, "cpu_overload": 0.7}
			}
			if len(v.Limits) != len(want) {
				t.Fatalf("limits %v, want %v", v.Limits, want)
			}
			for k, x := range want {
				if v.Limits[k] != x {
					t.Errorf("limit %s = %v, want %v", k, v.Limits[k], x)
				}
			}
			for _, b := range v.Nodes {
				if b.RTMs != c.rt[b.Name] {
					t.Errorf("%s rt_ms %v, want %v", b.Name, b.RTMs, c.rt[b.Name])
				}
			}
		})
	}
}
