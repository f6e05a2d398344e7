package sched

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		field  string
		msg    string
	}{
		{"defaults", func(*Config) {}, "", ""},
		{"unknown policy", func(c *Config) { c.Policy = "fastest" }, "policy", `unknown policy "fastest"; want one of `},
		{"qsc without weights", func(c *Config) {
			c.Policy = "qsc"
			c.Classes = []Class{{Name: "all", Match: []string{"*"}}}
		}, "policy", "qsc needs class weights"},
		{"sticky", func(c *Config) { c.Sticky = "ip" }, "sticky", `sticky "ip": want cookie or source-ip`},
		{"order", func(c *Config) { c.Order = "lifo" }, "order", `order "lifo"`},
		{"headroom", func(c *Config) { c.Headroom = "-1" }, "headroom", `headroom "-1"`},
		{"stale", func(c *Config) { c.Stale = "fresh" }, "stale", `stale "fresh": want placed, two or reported`},
		{"class rule", func(c *Config) {
			c.Classes = []Class{{Name: "a", Match: []string{"*"}}, {Name: "b", Match: []string{"get /x"}}}
		}, "class[1].match", "method must be upper case"},
		{"unknown resource", func(c *Config) { c.Adaptive.Weights = map[string]float64{"gpu": 1} }, "adaptive.weights", `unknown key "gpu"; want one of cpu mem net disk rt`},
		{"zero baseline", func(c *Config) { c.Socket.Baselines = map[string]float64{"mem": 0} }, "socket.baselines.mem", "want a finite number above 0"},
		{"negative weight", func(c *Config) { c.QSC.Weights = map[string]float64{"req": -1} }, "qsc.weights.req", "above or equal to 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.change(&c)
			errs := c.Validate()
			if tc.field == "" {
				if len(errs) != 0 {
					t.Fatalf("Validate() = %v, want none", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tc.field || !strings.Contains(errs[0].Err.Error(), tc.msg) || strings.HasPrefix(errs[0].Err.Error(), "sched:") {
				t.Fatalf("Validate() = %v, want one at %s with %q", errs, tc.field, tc.msg)
			}
		})
	}
}
