package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// validateSched checks [sched] as plain values: numbers in range, names,
// the load models' keys. The scheduler owns its policies, their
// requirements, sticky, order, headroom and the class rules' grammar
// (sched.Config.Validate, called by node's mapping of the config).
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
		if j, dup := seen[cl.Name]; dup {
			bad(key+".name", "duplicate class name %q (first defined on line %d)", cl.Name, c.Lines[fmt.Sprintf("sched.class[%d].name", j)])
		} else {
			seen[cl.Name] = i
		}
		if len(cl.Match) == 0 {
			bad(key+".match", "class %q matches nothing", cl.Name)
		}
		if cl.Weight < 0 || cl.Weight != cl.Weight {
			bad(key+".weight", "%v: must not be negative", cl.Weight)
		}
	}
	validateLoadModel("sched.adaptive", s.Adaptive, modelKeys{[]string{"cpu", "mem", "net", "disk", "rt"}, []string{"cpu", "mem", "net", "disk"}, []string{"threshold", "cpu", "cpu_overload", "mem", "disk", "rt"}}, bad)
	validateLoadModel("sched.integrated", s.Integrated, modelKeys{[]string{"cpu", "mem", "net", "disk", "rt"}, []string{"cpu", "mem", "net", "disk"}, []string{"cpu", "cpu_overload", "mem", "disk", "rt"}}, bad)
	validateLoadModel("sched.qsc", s.QSC, modelKeys{[]string{"cpu", "mem", "req", "net"}, nil, nil}, bad)
	validateLoadModel("sched.socket", s.Socket, modelKeys{[]string{"cpu", "mem", "net", "disk"}, []string{"cpu", "mem", "net", "disk"}, nil}, bad)
	for i, p := range s.Proximity {
		key := fmt.Sprintf("sched.proximity[%d]", i)
		if _, err := netip.ParsePrefix(p.CIDR); err != nil {
			bad(key+".cidr", "%q: %v", p.CIDR, err)
		}
		if len(p.Prefer) == 0 {
			bad(key+".prefer", "empty")
		}
		for _, n := range p.Prefer {
			if c.Rank(n) < 0 && n != c.Node.Name {
				bad(key+".prefer", "%q is not in cluster.peers", n)
			}
		}
	}
}

// modelKeys are the resources a policy's weights, baselines and limits know.
type modelKeys struct{ weights, baselines, limits []string }

// validateLoadModel checks the keys and values of a [sched.<policy>] load
// model: known resources, finite non-negative numbers, baselines and
// limits above zero.
func validateLoadModel(key string, m LoadModel, known modelKeys, bad func(string, string, ...any)) {
	check := func(sub string, vals map[string]float64, known []string, positive bool) {
		for k, v := range vals {
			if !contains(known, k) {
				bad(key+"."+sub, "unknown key %q; want one of %s", k, strings.Join(known, " "))
			}
			if v != v || v < 0 || v > 1e9 || (positive && v == 0) {
				bad(key+"."+sub+"."+k, "%v: want a finite number above %s", v, map[bool]string{true: "0", false: "or equal to 0"}[positive])
			}
		}
	}
	check("weights", m.Weights, known.weights, false)
	check("baselines", m.Baselines, known.baselines, true)
	check("limits", m.Limits, known.limits, true)
}
