package bootconf

import (
	"testing"
	"time"
)

// [[device]] max_age (docs/DESIGN.md, Data flow): unset keeps hal's default (nil), "0s" is
// always read, a duration is passed on; a bad one is refused with its line.
func TestMaxAge(t *testing.T) {
	cfg, errs := parseAllConfig("ews.toml", []byte(`[node]
name = "ews1"
[[device]]
name = "t1"
driver = "sim-sensor"
max_age = "250ms"
[[device]]
name = "t2"
driver = "sim-sensor"
max_age = "0s"
[[device]]
name = "t3"
driver = "sim-sensor"
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	specs := deviceSpecs(cfg)
	for i, want := range []*time.Duration{ptr(250 * time.Millisecond), ptr(0), nil} {
		got := specs[i].MaxAge
		if (got == nil) != (want == nil) || (got != nil && got.Duration != *want) {
			t.Errorf("device %d: max_age %v, want %v", i, got, want)
		}
	}
}

func ptr(d time.Duration) *time.Duration { return &d }

// The master schedules every device: an interlock group (both ways,
// chained) shares one lock, other devices have their own.
func TestSchedDevices(t *testing.T) {
	cfg, errs := parseAllConfig("ews.toml", []byte(`[node]
name = "ews1"
[[device]]
name = "a"
driver = "sim-switch"
interlock = ["b"]
[[device]]
name = "b"
driver = "sim-switch"
[[device]]
name = "c"
driver = "sim-switch"
interlock = ["b"]
[[device]]
name = "t"
driver = "sim-sensor"
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := schedConfig(cfg).Devices
	if len(got) != 4 {
		t.Fatalf("devices %+v", got)
	}
	if got[0].Lock == "" || got[0].Lock != got[1].Lock || got[1].Lock != got[2].Lock {
		t.Errorf("interlock group a-b-c has locks %q %q %q, want one", got[0].Lock, got[1].Lock, got[2].Lock)
	}
	if got[3].Lock != "" || got[3].Name != "t" || got[3].Concurrency != 1 {
		t.Errorf("sensor t: %+v, want its own lock, one at a time", got[3])
	}
}
