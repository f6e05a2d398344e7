package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// Rule is one [[rule]]: an automation the master runs. Exactly one of When
// (a device event) and At (a daily local time) starts it; Then is what it does.
//
//	when = "button1 pressed"   # pressed released on off changed | above N | below N
//	at   = "07:30"             # HH:MM (or HH:MM:SS) local time, every day
//	then = "pump1 turn_on for 5m"  # turn_on turn_off toggle | set V | pulse MS [for DURATION]
type Rule struct {
	When string `toml:"when"`
	At   string `toml:"at"`
	Then string `toml:"then"`
}

// Trigger is a parsed `when`.
type Trigger struct {
	Device    string
	Event     string  // pressed released on off changed above below
	Threshold float64 // above / below
}

// Step is a parsed `then`.
type Step struct {
	Device string
	Action hal.Kind
	Value  float64       // set
	Pulse  time.Duration // pulse
	For    time.Duration // 0: no turn-back
}

// Back is the action that undoes s after For: turn_on <-> turn_off, toggle itself.
func (s Step) Back() hal.Kind {
	switch s.Action {
	case hal.TurnOn:
		return hal.TurnOff
	case hal.TurnOff:
		return hal.TurnOn
	}
	return hal.Toggle
}

// ParsedRule is a rule checked against the devices of the file.
type ParsedRule struct {
	Index int
	When  *Trigger // nil for a timer
	// At is the time of day of a timer (hour*time.Hour + minute*time.Minute).
	At   time.Duration
	Then Step
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

// ParseClock reads "HH:MM" or "HH:MM:SS" (24 h).
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

// ParsedRules returns the [[rule]]s parsed; the config is validated, so
// they parse (a rule that does not is left out).
func (c *Config) ParsedRules() []ParsedRule {
	var out []ParsedRule
	for i := range c.Rules {
		if p, ok := c.parseRule(i, func(string, string, ...any) {}); ok {
			out = append(out, p)
		}
	}
	return out
}

func (c *Config) validateRules(bad func(string, string, ...any)) {
	for i := range c.Rules {
		c.parseRule(i, bad)
	}
	if len(c.Rules) > 0 && c.HTTP.Auth == "basic" {
		bad("rule[0]", "rules run with the cluster's token: they need http.auth = \"token\" or \"none\", not basic")
	}
}

func (c *Config) parseRule(i int, bad func(string, string, ...any)) (ParsedRule, bool) {
	r := c.Rules[i]
	key := fmt.Sprintf("rule[%d]", i)
	p := ParsedRule{Index: i}
	ok := true
	switch {
	case r.When != "" && r.At != "":
		bad(key+".at", "a rule has when or at, not both")
		ok = false
	case r.When == "" && r.At == "":
		bad(key, "a rule needs when = \"DEVICE EVENT\" or at = \"HH:MM\"")
		ok = false
	case r.When != "":
		t, err := ParseTrigger(r.When)
		if err != nil {
			bad(key+".when", "%v", err)
			ok = false
			break
		}
		if msg := c.checkTrigger(t); msg != "" {
			bad(key+".when", "%s", msg)
			ok = false
			break
		}
		p.When = &t
	default:
		at, err := ParseClock(r.At)
		if err != nil {
			bad(key+".at", "%v", err)
			ok = false
		}
		p.At = at
	}
	st, err := ParseStep(r.Then)
	if err != nil {
		bad(key+".then", "%v", err)
		return p, false
	}
	if msg := c.checkStep(st); msg != "" {
		bad(key+".then", "%s", msg)
		return p, false
	}
	p.Then = st
	return p, ok
}

func (c *Config) device(name string) (Device, hal.Driver, bool) {
	for _, d := range c.Devices {
		if d.Name == name {
			drv, ok := hal.LookupDriver(d.Driver)
			return d, drv, ok
		}
	}
	return Device{}, hal.Driver{}, false
}

func (c *Config) checkTrigger(t Trigger) string {
	_, drv, ok := c.device(t.Device)
	if !ok {
		return fmt.Sprintf("unknown device %q", t.Device)
	}
	numeric := t.Event == "above" || t.Event == "below"
	switch {
	case numeric && !drv.Polled:
		return fmt.Sprintf("device %q (%s) has no numeric value: use pressed, released, on, off or changed", t.Device, drv.Name)
	case !numeric && drv.Polled && t.Event != "changed":
		return fmt.Sprintf("device %q (%s) is a sensor: use above N, below N or changed", t.Device, drv.Name)
	}
	return ""
}

func (c *Config) checkStep(s Step) string {
	_, drv, ok := c.device(s.Device)
	if !ok {
		return fmt.Sprintf("unknown device %q", s.Device)
	}
	if !drv.Accepts(s.Action) || (s.For > 0 && !drv.Accepts(s.Back())) {
		return fmt.Sprintf("device %q (%s) does not take %s", s.Device, drv.Name, s.Action)
	}
	return ""
}
