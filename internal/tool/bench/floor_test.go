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
	if len(a) != 2 || a[0].Latency != b[0].Latency || a[1].Latency != b[1].Latency || a[0].Requests != b[0].Requests {
		t.Fatalf("two replays differ (or a control row with one control class): %+v %+v", a, b)
	}
	if n := a[0].Requests + a[1].Requests; n < 500 || n > 700 {
		t.Fatalf("%d arrivals in 2 s at 300/s", n)
	}
	if a[1].Latency.P99 != 20 {
		t.Fatalf("browse floor %v, want the page latency", a[1].Latency)
	}
}

func TestFloorOfReportControlTogether(t *testing.T) {
	rep := &Report{Mix: "s1=0.2:POST /api/devices/s1/read,s2=0.2:POST /api/devices/s2/read,browse=0.6:GET /", Seed: 7, RateAsked: 300, DurationAsked: 2}
	m := FloorModel{DeviceLatency: 15 * time.Millisecond, PageLatency: 30 * time.Millisecond}
	fl, err := FloorOfReport(rep, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(fl) != 4 || fl[3].Name != "control" {
		t.Fatalf("floors %+v, want s1, s2, browse, control", fl)
	}
	if fl[3].Requests != fl[0].Requests+fl[1].Requests {
		t.Fatalf("control has %d requests, s1+s2 %d", fl[3].Requests, fl[0].Requests+fl[1].Requests)
	}
	if hi := max(fl[0].Latency.Max, fl[1].Latency.Max); fl[3].Latency.Max != hi || fl[3].Latency.P50 < 14.99 {
		t.Fatalf("control %+v; s1 %+v s2 %+v", fl[3].Latency, fl[0].Latency, fl[1].Latency)
	}
}
