package hal

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"time"
)

// Kind is what an action does. The API path names it (Kind.String);
// ParseKind reads it back. The zero Kind is no action.
type Kind uint8

// Action kinds. ONLY APPEND TO THIS LIST: drivers list them in Driver.Actions.
const (
	TurnOn  Kind = iota + 1
	TurnOff      // a driver that accepts it is an output (Driver.Output)
	Toggle
	Set   // Action.Value
	Pulse // Action.Duration
	Read
)

var kindNames = [...]string{TurnOn: "turn_on", TurnOff: "turn_off", Toggle: "toggle", Set: "set", Pulse: "pulse", Read: "read"}

// Kinds is every action kind, in API order.
func Kinds() []Kind { return []Kind{TurnOn, TurnOff, Toggle, Set, Pulse, Read} }

// String is the kind's name in the API path ("turn_on").
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ParseKind reads an action name of the API path; an unknown one wraps ErrBadAction.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds() {
		if kindNames[k] == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%w %q: want turn_on, turn_off, toggle, set?value=, pulse?ms= or read", ErrBadAction, s)
}

// MaxPulse bounds pulse?ms=.
const MaxPulse = time.Minute

// Action is one operation on a device.
type Action struct {
	Kind     Kind
	Value    float64       // set
	Duration time.Duration // pulse
}

func (a Action) String() string {
	switch a.Kind {
	case Set:
		return fmt.Sprintf("set %v", a.Value)
	case Pulse:
		return fmt.Sprintf("pulse %v", a.Duration)
	}
	return a.Kind.String()
}

// Errors a caller tells apart with errors.Is; each comes wrapped in a message
// that names the device.
var (
	ErrNotFound    = errors.New("no such device")
	ErrBadAction   = errors.New("unknown action")
	ErrBadValue    = errors.New("bad value")
	ErrUnsupported = errors.New("action not supported")
	ErrClosed      = errors.New("devices closed")
)

// RemoteError is returned for a device wired to another board.
type RemoteError struct{ Device, Node string }

func (e *RemoteError) Error() string {
	return fmt.Sprintf("hal: device %q is wired to board %q", e.Device, e.Node)
}

// DriverError is a failure of the hardware or program behind a device.
type DriverError struct {
	Device string
	Err    error
}

func (e *DriverError) Error() string { return fmt.Sprintf("hal: device %q: %v", e.Device, e.Err) }
func (e *DriverError) Unwrap() error { return e.Err }

// ParseAction reads an action from the API: the path's action kind (see
// ParseKind) and its query (value= for set, ms= for pulse). Errors wrap
// ErrBadAction or ErrBadValue.
func ParseAction(kind Kind, q url.Values) (Action, error) {
	a := Action{Kind: kind}
	switch kind {
	case TurnOn, TurnOff, Toggle, Read:
	case Set:
		s := q.Get("value")
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return a, fmt.Errorf("%w: value=%q is not a number", ErrBadValue, s)
		}
		a.Value = v
	case Pulse:
		s := q.Get("ms")
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms < 1 || time.Duration(ms)*time.Millisecond > MaxPulse {
			return a, fmt.Errorf("%w: ms=%q: want 1 … %d", ErrBadValue, s, MaxPulse.Milliseconds())
		}
		a.Duration = time.Duration(ms) * time.Millisecond
	default:
		return a, fmt.Errorf("%w %v: want turn_on, turn_off, toggle, set?value=, pulse?ms= or read", ErrBadAction, kind)
	}
	return a, nil
}
