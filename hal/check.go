package hal

import (
	"fmt"
	"strings"
	"time"
)

// CheckSpecs finds, without hardware, what New would refuse about specs:
// unknown drivers, missing pins and buses, each driver's own keys (its
// Check), impossible interlocks. It checks every board's devices, so a
// config check runs anywhere; self is the board running it (programs of its
// own devices are looked up). Whether a pin or bus exists is only known to
// New. Interlock partners that are not in specs are left to the caller.
func CheckSpecs(self string, specs []DeviceSpec) SpecErrors {
	var errs SpecErrors
	byName := map[string]DeviceSpec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	for i, s := range specs {
		bad := badFunc(&errs, i, s)
		d := checkSpec(s, wiredHere(s, self), bad)
		if d == nil {
			continue
		}
		for _, other := range s.Interlock {
			p, ok := byName[other]
			switch {
			case !ok:
			case other == s.Name:
				bad("interlock", "cannot interlock with itself")
			case !d.Output || !isOutput(p.Driver):
				bad("interlock", "interlock needs two outputs, %q is %s", other, p.Driver)
			case nodeOf(p, self) != nodeOf(s, self):
				bad("interlock", "partner %q is on board %q, this one on %q; both must be on one board", other, p.Node, s.Node)
			}
		}
	}
	return errs
}

// checkSpec checks one device's driver and keys and returns its driver, or
// nil when the driver is unknown.
func checkSpec(s DeviceSpec, local bool, bad func(key, format string, args ...any)) *Driver {
	d := lookup(s.Driver)
	if d == nil {
		bad("driver", "unknown driver %q; want one of %s", s.Driver, strings.Join(DriverNames(), " "))
		return nil
	}
	switch {
	case d.Needs == NeedsPin && s.Pin == "":
		bad("pin", "driver %s needs a pin", s.Driver)
	case d.Needs == NeedsBus && s.Bus == "":
		bad("bus", "driver %s needs a bus", s.Driver)
	}
	for _, v := range []struct{ k, val string }{{"initial", s.Initial}, {"on_stop", s.OnStop}} {
		if v.val != "" && v.val != "on" && v.val != "off" && (v.k != "on_stop" || v.val != "keep") {
			bad(v.k, "%q: want on or off", v.val)
		}
	}
	checkRestore(s, d, bad)
	if s.Min != nil && s.Max != nil && *s.Min > *s.Max {
		bad("min", "min %v above max %v", *s.Min, *s.Max)
	}
	switch {
	case s.Poll.Duration != 0 && !d.Polled:
		bad("poll", "driver %s is not polled (only sensors are); remove poll", s.Driver)
	case s.Poll.Duration != 0 && s.Poll.Duration < MinPoll:
		bad("poll", "%v is too often; at least %v", s.Poll, MinPoll)
	}
	switch {
	case s.MaxAge != nil && !d.Accepts(Read):
		bad("max_age", "driver %s has no read; remove max_age", s.Driver)
	case s.MaxAge != nil && s.MaxAge.Duration < 0:
		bad("max_age", "%v is negative; want 0 (always read) or more", *s.MaxAge)
	}
	if d.Check != nil {
		d.Check(s, local, bad)
	}
	return d
}

// MinPoll is the shortest [[device]] poll: faster reads would keep a sensor
// (and its request slot) busy, and the history would grow past its sizing.
const MinPoll = 100 * time.Millisecond

func badFunc(errs *SpecErrors, i int, s DeviceSpec) func(key, format string, args ...any) {
	return func(key, format string, args ...any) {
		*errs = append(*errs, &SpecError{Index: i, Device: s.Name, Key: key, Err: fmt.Errorf(format, args...)})
	}
}

func isOutput(driver string) bool {
	d := lookup(driver)
	return d != nil && d.Output
}

func nodeOf(s DeviceSpec, self string) string {
	if s.Node == "" {
		return self
	}
	return s.Node
}
