package report

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

func TestOverloadWatchFollowsIntegratedHold(t *testing.T) {
	type report struct {
		at   time.Duration // since the first report
		cpu  float64
		held bool // after this report
	}
	tests := []struct {
		name    string
		model   sched.LoadModel
		reports []report
	}{
		{"under the limit never holds", sched.LoadModel{}, []report{{0, .5, false}, {10 * time.Second, .69, false}}},
		{"over for the overload time holds (defaults 0.7, 5s)", sched.LoadModel{}, []report{
			{0, .8, false}, {4 * time.Second, .9, false}, {5 * time.Second, .75, true}, {6 * time.Second, .8, true}}},
		{"one report under starts over", sched.LoadModel{}, []report{
			{0, .8, false}, {4 * time.Second, .5, false}, {5 * time.Second, .8, false}, {10 * time.Second, .8, true}, {11 * time.Second, .6, false}}},
		{"the limit as the master reads it off the wire (per mille)", sched.LoadModel{}, []report{
			{0, .7004, false}, {5 * time.Second, .7004, false}}},
		{"the model's own limit and time", sched.LoadModel{Limits: map[string]float64{"cpu_overload": .5}, Overload: time.Second}, []report{
			{0, .6, false}, {time.Second, .6, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Unix(1_000_000, 0)
			now := start
			w := NewOverloadWatch(tt.model, func() time.Time { return now })
			for i, r := range tt.reports {
				now = start.Add(r.at)
				w.observe(state.Load{CPU: r.cpu})
				if w.Held() != r.held {
					t.Fatalf("report %d (cpu %v at %v): held %v, want %v", i, r.cpu, r.at, w.Held(), r.held)
				}
			}
		})
	}
}

func TestLocalLoadFeedsTheOverloadWatch(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := &Local{Figures: fixedLoad{CPU: .9}, Over: NewOverloadWatch(sched.LoadModel{Overload: time.Second}, func() time.Time { return now })}
	l.Load()
	now = now.Add(time.Second)
	if got := l.Load(); got.CPU != .9 || !l.Over.Held() {
		t.Fatalf("Load = %+v, held %v; want the sampled load and the board held", got, l.Over.Held())
	}
}

// fixedLoad is a loadSource that always reads the same figures.
type fixedLoad state.Load

func (f fixedLoad) Load() state.Load { return state.Load(f) }
