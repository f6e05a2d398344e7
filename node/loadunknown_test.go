package node

import (
	"testing"

	"github.com/ews-firmware/ews/state"
)

// unknownLoad is a load source that could not read cpu_mhz.
type unknownLoad struct{ unknown state.LoadFigures }

func (unknownLoad) Load() state.Load             { return state.Load{} }
func (u unknownLoad) Unknown() state.LoadFigures { return u.unknown }

// Only this board's own row says which of its figures are unknown.
func TestMarkUnknown(t *testing.T) {
	v := func() state.View {
		return state.View{Self: "ews2", Nodes: []state.Board{{Name: "ews1"}, {Name: "ews2"}, {Name: "ews3"}}}
	}
	for _, c := range []struct {
		name string
		load loadSource
		want map[string]state.LoadFigures
	}{
		{"cpu_mhz unknown", unknownLoad{state.FigCPUMHz}, map[string]state.LoadFigures{"ews1": 0, "ews2": state.FigCPUMHz, "ews3": 0}},
		{"all read", unknownLoad{0}, map[string]state.LoadFigures{"ews1": 0, "ews2": 0, "ews3": 0}},
		{"simulated board", &simLoad{}, map[string]state.LoadFigures{"ews1": 0, "ews2": 0, "ews3": 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := &Node{system: &system{load: c.load}}
			for _, b := range n.markUnknown(v()).Nodes {
				if b.LoadUnknown != c.want[b.Name] {
					t.Fatalf("%s: load_unknown [%v], want [%v]", b.Name, b.LoadUnknown, c.want[b.Name])
				}
			}
		})
	}
}
