package sched

import (
	"fmt"
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
// it takes, and every class rule parses. It returns each problem, nil when
// there is none; NewDispatcher refuses the same config.
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
	for i, cl := range c.Classes {
		for _, m := range cl.Match {
			if err := CheckRule(m); err != nil {
				bad(fmt.Sprintf("class[%d].match", i), err)
			}
		}
	}
	return errs
}
