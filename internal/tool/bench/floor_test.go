package bench

import (
	"testing"
	"time"
)

func TestFloor(t *testing.T) {
	mix := func(s string) []Class {
		c, err := ParseMix(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	m := FloorModel{DeviceLatency: 20 * time.Millisecond, PageLatency: 20 * time.Millisecond}
	for _, tc := range []struct {
		name     string
		mix      string
		rate     float64
		model    FloorModel
		class    int
		minP99   float64 // ms
		maxP99   float64
		requests int // at least
	}{
		// a page never waits: its floor is its own latency
		{"pages", "browse=1:GET /", 500, m, 0, 20, 20, 400},
		// actions on one device at 40/s, 20 ms each (0.8 of the device): they queue
		{"one busy relay", "control=1:POST /api/devices/r1/toggle", 40, m, 0, 40, 1000, 20},
		// the same load spread over reads shares device reads: shorter than the actions' wait
		{"reads share", "control=1:POST /api/devices/s1/read", 40, m, 0, 1, 20, 20},
		// a young reading answers at once: some reads take nothing
		{"max_age", "control=1:POST /api/devices/s1/read", 400, FloorModel{DeviceLatency: 20 * time.Millisecond, MaxAge: 5 * time.Millisecond}, 0, 1, 20, 300},
		// a device's state (GET) is not an operation
		{"state reads", "control=1:GET /api/devices/s1", 100, m, 0, 0, 0, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fl, err := Floor(mix(tc.mix), 7, tc.rate, time.Second, tc.model)
			if err != nil {
				t.Fatal(err)
			}
			c := fl[tc.class]
			if c.Requests < tc.requests || c.Latency.P99 < tc.minP99 || c.Latency.P99 > tc.maxP99 {
				t.Fatalf("%s: %d requests, p99 %.1f ms; want ≥ %d requests, p99 in [%.0f, %.0f]", tc.name, c.Requests, c.Latency.P99, tc.requests, tc.minP99, tc.maxP99)
			}
		})
	}
	if _, err := Floor(nil, 1, 0, 0, m); err == nil {
		t.Fatal("an empty run has a floor")
	}
}

// The floor replays the run's own arrivals: the same report gives the same
// floor, and its request count is the stream's.
func TestFloorOfReport(t *testing.T) {
	rep := &Report{Mix: "control=0.25:POST /api/devices/s1/read,browse=0.75:GET /", Seed: 7, RateAsked: 300, DurationAsked: 2}
	a, err := FloorOfReport(rep, FloorModel{DeviceLatency: 20 * time.Millisecond, PageLatency: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FloorOfReport(rep, FloorModel{DeviceLatency: 20 * time.Millisecond, PageLatency: 20 * time.Millisecond})
	if a[0] != b[0] || a[1] != b[1] {
		t.Fatalf("two replays differ: %+v %+v", a, b)
	}
	if n := a[0].Requests + a[1].Requests; n < 500 || n > 700 {
		t.Fatalf("%d arrivals in 2 s at 300/s", n)
	}
	if a[1].Latency.P99 != 20 {
		t.Fatalf("browse floor %v, want the page latency", a[1].Latency)
	}
}
