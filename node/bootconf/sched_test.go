package bootconf

import (
	"strings"
	"testing"
)

// qsc's paper weighs four request classes 1 < 2 < 4 < 8 (publish,
// execution unit, dynamic page, multimedia): a file with policy "qsc" and
// no [[sched.class]] gets them; written classes replace them; other
// policies keep the two defaults.
func TestQSCClassesByDefault(t *testing.T) {
	tests := []struct {
		name, toml string
		want       map[string]float64
	}{
		{"qsc, no classes", "[sched]\npolicy = \"qsc\"\n", map[string]float64{"control": 2, "media": 8, "dynamic": 4, "static": 1}},
		{"qsc, written classes", "[sched]\npolicy = \"qsc\"\n[[sched.class]]\nname = \"all\"\nmatch = [\"*\"]\nweight = 3\n", map[string]float64{"all": 3}},
		{"lc, no classes", "[sched]\npolicy = \"lc\"\n", map[string]float64{"control": 1, "browse": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig("t.toml", []byte("[http]\nauth = \"none\"\n"+tt.toml))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, cl := range schedConfig(c).Classes {
				got[cl.Name] = cl.Weight
			}
			if len(got) != len(tt.want) {
				t.Fatalf("classes %v, want %v", got, tt.want)
			}
			for n, w := range tt.want {
				if got[n] != w {
					t.Errorf("class %s weight %v, want %v (all: %v)", n, got[n], w, got)
				}
			}
		})
	}
}

// The load models' resources are the scheduler's (sched.Config.Validate);
// a bad one is refused with its key.
func TestLoadModelValidation(t *testing.T) {
	tests := []struct {
		name, toml, wantErr string
	}{
		{"good", "[sched.adaptive]\nweights = {cpu = 0.5, mem = 0.5}\nbaselines = {cpu = 0.8}\n[sched.integrated]\nlimits = {cpu = 0.5, cpu_overload = 0.7, rt = 100}\noverload = \"3s\"\n", ""},
		{"unknown resource", "[sched.adaptive]\nweights = {gpu = 1}\n", "unknown key \"gpu\""},
		{"negative weight", "[sched.integrated]\nweights = {cpu = -1}\n", "sched.integrated.weights.cpu"},
		{"zero baseline", "[sched.adaptive]\nbaselines = {mem = 0}\n", "sched.adaptive.baselines.mem"},
		{"nan limit", "[sched.integrated]\nlimits = {disk = nan}\n", "sched.integrated.limits.disk"},
		{"qsc knows no disk", "[sched.qsc]\nweights.disk = 1\n", "sched.qsc.weights"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig("ews.toml", []byte("[http]\nauth = \"none\"\n"+tt.toml))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
