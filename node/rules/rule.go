package rules

import (
	"time"

	"github.com/ews-firmware/ews/hal"
)

// Rule is one checked [[rule]]: exactly one of When (a device event) and
// At (a daily time) starts it; Then is what it does. Parse reads it from
// the text the boot config keeps and checks it against the devices.
type Rule struct {
	Index int           // the rule's place in the file: keys and logs name it "rule-N"
	When  *Trigger      // nil for a timer
	At    time.Duration // a timer's time of day: hour*time.Hour + minute*time.Minute (+ seconds)
	Then  Step
}

// Trigger is a device event: `when = "DEVICE EVENT"`.
type Trigger struct {
	Device    string
	Event     string  // pressed released on off changed above below
	Threshold float64 // above / below
}

// Step is what a rule does: `then = "DEVICE ACTION [ARG] [for DURATION]"`.
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
