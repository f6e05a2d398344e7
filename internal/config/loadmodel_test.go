package config

import (
	"strings"
	"testing"
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
