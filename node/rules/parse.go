package rules

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// The grammar of [[rule]] (the boot config keeps the three strings as
// written; this file is the only reader of them):
//
//	when = "button1 pressed"   # pressed released on off changed | above N | below N
//	at   = "07:30"             # HH:MM (or HH:MM:SS) local time, every day
//	then = "pump1 turn_on for 5m"  # turn_on turn_off toggle | set V | pulse MS [for DURATION]

// Text is one [[rule]] as written: exactly one of When and At, and Then.
type Text struct {
	When, At, Then string
}

// FieldError is one problem of a rule, at its key ("when", "at", "then";
// "" for the rule as a whole).
type FieldError struct {
	Key string
	Err error
}

func (e *FieldError) Error() string { return "rules: " + e.Key + ": " + e.Err.Error() }

// Drivers finds the driver of a device of the cluster by the device's name.
type Drivers func(device string) (hal.Driver, bool)

// Parse reads rule index from its text and checks it against the devices
// drivers knows: the device exists, its driver has the event's kind of
// value and takes the action. errs holds every problem found (a bad when
// does not hide a bad then); a rule with any is not to be run.
func Parse(index int, t Text, drivers Drivers) (r Rule, errs []*FieldError) {
	r.Index = index
	bad := func(key string, err error) { errs = append(errs, &FieldError{Key: key, Err: err}) }
	switch {
	case t.When != "" && t.At != "":
		bad("at", fmt.Errorf("a rule has when or at, not both"))
	case t.When == "" && t.At == "":
		bad("", fmt.Errorf("a rule needs when = \"DEVICE EVENT\" or at = \"HH:MM\""))
	case t.When != "":
		tr, err := ParseTrigger(t.When)
		if err == nil {
			err = checkTrigger(tr, drivers)
		}
		if err != nil {
			bad("when", err)
			break
		}
		r.When = &tr
	default:
		at, err := ParseClock(t.At)
		if err != nil {
			bad("at", err)
		}
		r.At = at
	}
	st, err := ParseStep(t.Then)
	if err == nil {
		err = checkStep(st, drivers)
	}
	if err != nil {
		bad("then", err)
		return r, errs
	}
	r.Then = st
	return r, errs
}

// ParseTrigger reads "DEVICE EVENT".
func ParseTrigger(s string) (Trigger, error) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return Trigger{}, fmt.Errorf("%q: want \"DEVICE EVENT\" (pressed, released, on, off, changed, above N, below N)", s)
	}
	t := Trigger{Device: f[0], Event: f[1]}
	switch t.Event {
	case "pressed", "released", "on", "off", "changed":
		if len(f) != 2 {
			return Trigger{}, fmt.Errorf("%q: nothing may follow %q", s, t.Event)
		}
	case "above", "below":
		if len(f) != 3 {
			return Trigger{}, fmt.Errorf("%q: want \"DEVICE %s NUMBER\"", s, t.Event)
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return Trigger{}, fmt.Errorf("%q: %q is not a number", s, f[2])
		}
		t.Threshold = v
	default:
		return Trigger{}, fmt.Errorf("%q: unknown event %q: want pressed, released, on, off, changed, above N or below N", s, t.Event)
	}
	return t, nil
}

// ParseStep reads "DEVICE ACTION [ARG] [for DURATION]".
func ParseStep(s string) (Step, error) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return Step{}, fmt.Errorf("%q: want \"DEVICE ACTION\" (turn_on, turn_off, toggle, set V, pulse MS), optionally \"for 5m\"", s)
	}
	st := Step{Device: f[0]}
	k, err := hal.ParseKind(f[1])
	if err != nil || k == hal.Read {
		return Step{}, fmt.Errorf("%q: unknown action %q: want turn_on, turn_off, toggle, set V or pulse MS", s, f[1])
	}
	st.Action = k
	rest := f[2:]
	switch k {
	case hal.Set, hal.Pulse:
		if len(rest) == 0 {
			return Step{}, fmt.Errorf("%q: %s needs a number", s, k)
		}
		v, err := strconv.ParseFloat(rest[0], 64)
		if err != nil {
			return Step{}, fmt.Errorf("%q: %q is not a number", s, rest[0])
		}
		if k == hal.Set {
			st.Value = v
		} else {
			st.Pulse = time.Duration(v * float64(time.Millisecond))
			if st.Pulse <= 0 || st.Pulse > hal.MaxPulse {
				return Step{}, fmt.Errorf("%q: pulse of %v ms: want 1 … %d", s, v, hal.MaxPulse.Milliseconds())
			}
		}
		rest = rest[1:]
	}
	switch {
	case len(rest) == 0:
	case len(rest) == 2 && rest[0] == "for":
		if k != hal.TurnOn && k != hal.TurnOff && k != hal.Toggle {
			return Step{}, fmt.Errorf("%q: \"for\" goes with turn_on, turn_off or toggle only", s)
		}
		d, err := time.ParseDuration(rest[1])
		if err != nil || d <= 0 {
			return Step{}, fmt.Errorf("%q: %q is not a duration such as \"5m\"", s, rest[1])
		}
		st.For = d
	default:
		return Step{}, fmt.Errorf("%q: unexpected %q (only \"for DURATION\" may follow the action)", s, strings.Join(rest, " "))
	}
	return st, nil
}

// ParseClock reads "HH:MM" or "HH:MM:SS" (24 h) as a time of day.
func ParseClock(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	layout := "15:04"
	if strings.Count(s, ":") == 2 {
		layout = "15:04:05"
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a time of day: want HH:MM or HH:MM:SS, e.g. \"07:30\"", s)
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second, nil
}

func checkTrigger(t Trigger, drivers Drivers) error {
	drv, ok := drivers(t.Device)
	if !ok {
		return fmt.Errorf("unknown device %q", t.Device)
	}
	numeric := t.Event == "above" || t.Event == "below"
	switch {
	case numeric && !drv.Polled:
		return fmt.Errorf("device %q (%s) has no numeric value: use pressed, released, on, off or changed", t.Device, drv.Name)
	case !numeric && drv.Polled && t.Event != "changed":
		return fmt.Errorf("device %q (%s) is a sensor: use above N, below N or changed", t.Device, drv.Name)
	}
	return nil
}

func checkStep(s Step, drivers Drivers) error {
	drv, ok := drivers(s.Device)
	if !ok {
		return fmt.Errorf("unknown device %q", s.Device)
	}
	if !drv.Accepts(s.Action) || (s.For > 0 && !drv.Accepts(s.Back())) {
		return fmt.Errorf("device %q (%s) does not take %s", s.Device, drv.Name, s.Action)
	}
	return nil
}
