package config

import (
	"fmt"
	"net/netip"
)

// validateSched checks [sched] as plain values: numbers in range, names,
// the proximity rules' boards. The scheduler owns its policies, their
// requirements, sticky, order, headroom, the class rules' grammar and the
// load models' resources (sched.Config.Validate, called by node's mapping
// of the config).
func (c *Config) validateSched(bad func(string, string, ...any)) {
	s := c.Sched
	if s.Assign.Duration < 0 {
		bad("sched.assign", "%v: want a duration of 0 (off) or more", s.Assign.Duration)
	}
	if s.Mode != "proxy" && s.Mode != "redirect" {
		bad("sched.mode", "%q: want proxy or redirect", s.Mode)
	}
	if s.Queue < 1 {
		bad("sched.queue", "must be at least 1, got %d", s.Queue)
	}
	if s.QueueTimeout.Duration <= 0 {
		bad("sched.queue_timeout", "must be positive")
	}
	if s.Reserve < 0 || s.Reserve >= 1 || s.Reserve != s.Reserve {
		bad("sched.reserve", "%v: want a share in [0, 1)", s.Reserve)
	}
	seen := map[string]int{}
	for i, cl := range s.Classes {
		key := fmt.Sprintf("sched.class[%d]", i)
		if !nameRe.MatchString(cl.Name) {
			bad(key+".name", "%q is not a class name", cl.Name)
		}
		c.once(bad, seen, key+".name", "class name", cl.Name, i, "sched.class[%d].name")
		if len(cl.Match) == 0 {
			bad(key+".match", "class %q matches nothing", cl.Name)
		}
		if cl.Weight < 0 || cl.Weight != cl.Weight {
			bad(key+".weight", "%v: must not be negative", cl.Weight)
		}
	}
	for i, p := range s.Proximity {
		key := fmt.Sprintf("sched.proximity[%d]", i)
		if _, err := netip.ParsePrefix(p.CIDR); err != nil {
			bad(key+".cidr", "%q: %v", p.CIDR, err)
		}
		// No prefer: a learned rule, boards ranked by measured round-trip
		// times (docs/NOTES.md, Policies: proximity learned).
		for _, n := range p.Prefer {
			if c.Rank(n) < 0 && n != c.Node.Name {
				bad(key+".prefer", "%q is not in cluster.peers", n)
			}
		}
	}
}
