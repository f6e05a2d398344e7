package config

import (
	"strings"
	"testing"
	"time"
)

// The papers' load-model keys and the unequal boards' [sim] keys
// (docs/NOTES.md, Policies) are read (node's mapping hands them to
// sched.Config), reach the simulated board, and a bad one names its key.
func TestPaperKeys(t *testing.T) {
	src := "[http]\nauth = \"none\"\n" + `
[sched.adaptive]
limits.threshold = 0.8
suspend = "5s"

[sched.qsc]
weights.req = 2

[sched.socket]
baselines.net = 500

[sim]
speed = 2
device_latency = "20ms"
busy_after = "10s"
busy_for = "10s"
`
	c, err := Parse("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sc := c.Sched
	if sc.Adaptive.Limits["threshold"] != 0.8 || sc.Adaptive.Suspend.Duration != 5*time.Second || sc.QSC.Weights["req"] != 2 || sc.Socket.Baselines["net"] != 500 {
		t.Fatalf("sched config %+v", sc)
	}
	if got := c.Sim.Scaled(20 * time.Millisecond); got != 10*time.Millisecond {
		t.Fatalf("speed 2: latency %v, want 10ms", got)
	}
	for _, bad := range []struct{ toml, key string }{
		{"[sim]\nbusy_cpu = 1.5\n", "sim.busy_cpu"},
		{"[sim]\nspeed = -1\n", "sim.speed"},
	} {
		_, err := Parse("t.toml", []byte("[http]\nauth = \"none\"\n"+bad.toml))
		if err == nil || !strings.Contains(err.Error(), bad.key) {
			t.Errorf("%q: error %v, want one naming %s", bad.toml, err, bad.key)
		}
	}
}
