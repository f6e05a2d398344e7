package report

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/bootconf"
)

// fakeWork is a front door's counts that a test sets.
type fakeWork struct {
	inFlight  int
	completed uint64
}

func (f *fakeWork) InFlight() int     { return f.inFlight }
func (f *fakeWork) Completed() uint64 { return f.completed }

// TestCapacityAuto: capacity = "auto" maps to a board whose reported
// capacity follows what it completes; without it the report keeps the
// configured capacity (Capacity 0).
func TestCapacityAuto(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		auto bool
	}{
		{"auto", "[node]\nname = \"ews1\"\ncapacity = \"auto\"\n", true},
		{"fixed", "[node]\nname = \"ews1\"\ncapacity = 3\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("c.toml", []byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			b, err := bootconf.Map(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if b.CapacityAuto != tc.auto {
				t.Fatalf("capacityAuto = %v, want %v", b.CapacityAuto, tc.auto)
			}
			w := &fakeWork{}
			l := &Local{Work: w}
			if !tc.auto {
				if got := l.Capacity(); got != 0 {
					t.Fatalf("Capacity = %d, want 0 (the configured one)", got)
				}
				return
			}
			now := time.Unix(0, 0)
			l.Auto = NewAutoSlots(b.State.Capacity)
			l.Auto.now = func() time.Time { return now }
			start := l.Capacity()
			if start != b.State.Capacity {
				t.Fatalf("first report %d, want the start %d", start, b.State.Capacity)
			}
			// Full every window, and each window completes more: the slots grow.
			for i := 1; i <= 5; i++ {
				now = now.Add(time.Second)
				w.inFlight, w.completed = l.Auto.est.Slots(), w.completed+uint64(100*i)
				l.Capacity()
			}
			if got := l.Capacity(); got <= start {
				t.Fatalf("Capacity = %d after rising throughput, want more than %d", got, start)
			}
		})
	}
}
