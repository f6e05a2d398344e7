package sched

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// FieldError is one problem of a Config, at the field it is about, named
// as the boot config spells it under [sched] ("policy", "class[1].match").
type FieldError struct {
	Field string
	Err   error // the problem in plain words, without the package name
}

func (e *FieldError) Error() string { return "sched: " + e.Field + ": " + e.Err.Error() }

// Validate checks what only the scheduler knows: the policy is registered
// and suits the config (its Check), sticky, order and headroom are values
// it takes, every class rule parses, and the load models name resources
// their formulas know, with finite values (baselines and limits above 0).
// It returns each problem, nil when there is none.
func (c Config) Validate() []*FieldError {
	var errs []*FieldError
	bad := func(field string, err error) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "sched: "))})
	}
	if _, ok := LookupPolicy(c.Policy); !ok {
		bad("policy", fmt.Errorf("unknown policy %q; want one of %s", c.Policy, strings.Join(PolicyNames(), " ")))
	} else if err := CheckPolicy(c); err != nil {
		bad("policy", err)
	}
	if err := CheckSticky(c.Sticky); err != nil {
		bad("sticky", err)
	}
	if err := CheckOrder(c.Order); err != nil {
		bad("order", err)
	}
	if _, err := ParseHeadroom(c.Headroom); err != nil {
		bad("headroom", err)
	}
	if err := CheckStale(c.Stale); err != nil {
		bad("stale", err)
	}
	for i, cl := range c.Classes {
		for _, m := range cl.Match {
			if err := CheckRule(m); err != nil {
				bad(fmt.Sprintf("class[%d].match", i), err)
			}
		}
	}
	for _, m := range []struct {
		field string
		model LoadModel
		known modelKeys
	}{
		{"adaptive", c.Adaptive, modelKeys{[]string{"cpu", "mem", "net", "disk", "rt"}, []string{"cpu", "mem", "net", "disk"}, []string{"threshold", "cpu", "cpu_overload", "mem", "disk", "rt"}}},
		{"integrated", c.Integrated, modelKeys{[]string{"cpu", "mem", "net", "disk", "rt"}, []string{"cpu", "mem", "net", "disk"}, []string{"cpu", "cpu_overload", "mem", "disk", "rt"}}},
		{"qsc", c.QSC, modelKeys{[]string{"cpu", "mem", "req", "net"}, nil, nil}},
		{"socket", c.Socket, modelKeys{[]string{"cpu", "mem", "net", "disk"}, []string{"cpu", "mem", "net", "disk"}, nil}},
	} {
		m.model.validate(m.field, m.known, bad)
	}
	return errs
}

// modelKeys are the resources a policy's weights, baselines and limits know.
type modelKeys struct{ weights, baselines, limits []string }

// validate checks the keys and values of a load model: known resources,
// finite non-negative numbers, baselines and limits above zero.
func (m LoadModel) validate(field string, known modelKeys, bad func(string, error)) {
	check := func(sub string, vals map[string]float64, known []string, positive bool) {
		for _, k := range slices.Sorted(maps.Keys(vals)) {
			v := vals[k]
			if !slices.Contains(known, k) {
				bad(field+"."+sub, fmt.Errorf("unknown key %q; want one of %s", k, strings.Join(known, " ")))
			}
			if v != v || v < 0 || v > 1e9 || (positive && v == 0) {
				bad(field+"."+sub+"."+k, fmt.Errorf("%v: want a finite number above %s", v, map[bool]string{true: "0", false: "or equal to 0"}[positive]))
			}
		}
	}
	check("weights", m.Weights, known.weights, false)
	check("baselines", m.Baselines, known.baselines, true)
	check("limits", m.Limits, known.limits, true)
}
