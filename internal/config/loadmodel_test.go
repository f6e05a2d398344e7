package config

import (
	"strings"
	"testing"
	"time"
)

func TestLoadModelValidation(t *testing.T) {
	tests := []struct {
		name, toml, wantErr string
	}{
		{"good", "[sched.adaptive]\nweights = {cpu = 0.5, mem = 0.5}\nbaselines = {cpu = 0.8}\n[sched.integrated]\nlimits = {cpu = 0.5, cpu_overload = 0.7, rt = 100}\noverload = \"3s\"\n", ""},
		{"unknown resource", "[sched.adaptive]\nweights = {gpu = 1}\n", "unknown key \"gpu\""},
		{"negative weight", "[sched.integrated]\nweights = {cpu = -1}\n", "sched.integrated.weights.cpu"},
		{"zero baseline", "[sched.adaptive]\nbaselines = {mem = 0}\n", "sched.adaptive.baselines.mem"},
		{"nan limit", "[sched.integrated]\nlimits = {disk = nan}\n", "sched.integrated.limits.disk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("ews.toml", []byte("[http]\nauth = \"none\"\n"+tt.toml))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// The keys of issue 16 are read (node's mapping hands them to sched.Config)
// and reach the simulated board, and a bad one names its key.
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
		{"[sched.qsc]\nweights.disk = 1\n", "sched.qsc.weights"},
		{"[sim]\nbusy_cpu = 1.5\n", "sim.busy_cpu"},
		{"[sim]\nspeed = -1\n", "sim.speed"},
	} {
		_, err := Parse("t.toml", []byte("[http]\nauth = \"none\"\n"+bad.toml))
		if err == nil || !strings.Contains(err.Error(), bad.key) {
			t.Errorf("%q: error %v, want one naming %s", bad.toml, err, bad.key)
		}
	}
}
