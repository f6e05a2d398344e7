package config

import (
	"errors"
	"fmt"

	"github.com/ews-firmware/ews/hal"
)

// Spec maps the [[device]] entry onto what hal opens.
func (d Device) Spec() hal.DeviceSpec {
	return hal.DeviceSpec{
		Name: d.Name, Driver: d.Driver, Node: d.Node, Pin: d.Pin,
		ActiveLow: d.ActiveLow, Initial: d.Initial, OnStop: d.OnStop, Interlock: d.Interlock, Restore: d.Restore,
		Pull: d.Pull, Debounce: d.Debounce.Duration, Edge: d.Edge,
		Frequency: d.Frequency, Bus: d.Bus, Address: d.Address, Unit: d.Unit, Register: d.Register,
		Command: d.Command, Timeout: d.Timeout.Duration,
		Min: d.Min, Max: d.Max, Scale: d.Scale, Units: d.Units, Drift: d.Drift, Baseline: d.Baseline,
		Poll: d.Poll.Duration, // issue 28
	}
}

// Specs maps every [[device]] entry, in file order (so a hal.SpecError's
// Index is the entry's).
func (c *Config) Specs() []hal.DeviceSpec {
	specs := make([]hal.DeviceSpec, len(c.Devices))
	for i, d := range c.Devices {
		specs[i] = d.Spec()
	}
	return specs
}

// HAL maps the config onto what hal.New opens: this board, its kind
// (node.board), every device, and [sim] as written (a missing
// device_latency is 0; board = "sim" without [sim] is a bare [sim]).
func (c *Config) HAL() hal.Config {
	hc := hal.Config{Node: c.Node.Name, Board: c.Node.Board, Devices: c.Specs()}
	if c.Sim != nil {
		hc.Sim = &hal.SimConfig{DeviceLatency: c.Sim.Scaled(c.Sim.DeviceLatency.Duration)}
	} else if c.Node.Board == hal.BoardSim {
		hc.Sim = &hal.SimConfig{}
	}
	return hc
}

// Simulated reports whether the board runs on the simulated board.
func (c *Config) Simulated() bool {
	kind, err := c.HAL().Kind()
	return err == nil && kind == hal.BoardSim
}

// HardwareWarnings are hal.Preflight's findings on this machine (root "/")
// as warnings with the device's line: kernel interfaces or groups the
// board's devices need and this machine lacks.
func (c *Config) HardwareWarnings() Errors {
	var out Errors
	for _, e := range hal.Preflight(c.HAL(), "/") {
		w := c.deviceError(e)
		w.Warning = true
		out = append(out, w)
	}
	return out
}

// DeviceErrors puts file:line and the key path in front of each of hal's
// errors about a device (hal.New's, hal.CheckSpecs'); it returns Errors, or
// err as it is when it holds none.
func (c *Config) DeviceErrors(err error) error {
	var hs hal.SpecErrors
	if !errors.As(err, &hs) {
		var one *hal.SpecError
		if !errors.As(err, &one) {
			return err
		}
		hs = hal.SpecErrors{one}
	}
	errs := make(Errors, 0, len(hs))
	for _, e := range hs {
		errs = append(errs, c.deviceError(e))
	}
	return errs
}

func (c *Config) deviceError(e *hal.SpecError) *Error {
	if e.Index < 0 || e.Index >= len(c.Devices) {
		return &Error{File: c.Path, Msg: e.Error()}
	}
	return c.Errorf(fmt.Sprintf("device[%d].%s", e.Index, e.Key), "device %q: %v", e.Device, e.Err)
}
