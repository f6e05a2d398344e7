package mqtt

import (
	"strconv"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/state/row"
)

// StatePayloads are the retained messages that show a device's state,
// topic -> payload. A device with no known state (unknown, error, on a board
// that is unreachable) has none: its last state stays, and its board's
// availability says whether to trust it.
func (t Topics) StatePayloads(s hal.Snapshot) map[string]string {
	out := map[string]string{}
	switch s.State {
	case hal.StateOn, hal.StateOff, hal.StateOK:
	default:
		return out
	}
	for _, e := range Entities(s) {
		switch e.Component {
		case Switch, BinarySensor:
			out[t.State(s.Name, "")] = onOff(s)
		case Light:
			out[t.State(s.Name, "")] = onOff(s)
			if v, ok := s.Value.(float64); ok {
				out[t.Brightness(s.Name)] = number(v)
			}
		case Sensor:
			if e.Quantity != "" {
				out[t.State(s.Name, e.Quantity)] = number(s.Values[e.Quantity].Value)
			} else if v, ok := s.Value.(float64); ok {
				out[t.State(s.Name, "")] = number(v)
			}
		}
	}
	return out
}

func onOff(s hal.Snapshot) string {
	if s.State == hal.StateOn {
		return On
	}
	return Off
}

func number(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// BoardAvailability is online for a board that takes requests (running or
// overloaded), offline otherwise.
func BoardAvailability(b row.Board) string {
	if b.Runstate == row.Running || b.Runstate == row.Overloaded {
		return Online
	}
	return Offline
}
