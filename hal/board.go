package hal

import (
	"errors"
	"fmt"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/onewire"
)

// Board hands out the pins and buses devices are wired to. The real board
// (HostBoard) and the simulated one (SimBoard) implement it, so every driver
// runs the same code on both. Methods are safe for concurrent use.
type Board interface {
	// Kind is "host" for real hardware, "sim" for the simulated board.
	Kind() string
	// Pin returns the GPIO pin called name ("GPIO17").
	Pin(name string) (gpio.PinIO, error)
	// I2C opens the I²C bus called name ("1", "I2C1", "/dev/i2c-1"); a bus
	// opened twice is shared.
	I2C(name string) (i2c.Bus, error)
	// OneWire opens the 1-wire bus called name; a bus opened twice is shared.
	OneWire(name string) (onewire.Bus, error)
	// Close releases the buses.
	Close() error
}

// Board kinds, the values of Config.Board.
const (
	BoardAuto = "auto" // the simulated board when Config.Sim is set, else the host's hardware
	BoardSim  = "sim"  // the simulated board, asked for (the demo, tests)
	BoardHost = "host" // the host's hardware; no GPIO at all is an error if a device needs it
)

// ErrNoHardware is wrapped by OpenBoard's errors when a host board has no
// GPIO chip, I²C or 1-wire bus for a device that needs one.
var ErrNoHardware = errors.New("no GPIO hardware found")

// OpenBoard picks the board cfg asks for (Config.Kind): the simulated board,
// or the host's hardware. On a host without any GPIO chip, I²C or 1-wire
// bus it fails, with a *SpecError per device that needs a pin or a bus
// naming what was looked for; a config whose devices need none (a board
// that only serves pages and CGI) gets a host board without hardware.
// It never falls back to the simulated board.
func OpenBoard(cfg Config) (Board, error) {
	kind, err := cfg.Kind()
	if err != nil {
		return nil, err
	}
	if kind == BoardSim {
		return NewSimBoard(), nil
	}
	hb, err := NewHostBoard()
	if err == nil {
		return hb, nil
	}
	var errs SpecErrors
	for i, s := range cfg.Devices {
		d := lookup(s.Driver)
		if !wiredHere(s, cfg.Node) || d == nil || d.Simulated || d.Needs == NeedsNothing {
			continue
		}
		key, what := "pin", "GPIO pin "+s.Pin
		if d.Needs == NeedsBus {
			key, what = "bus", "bus "+s.Bus
		}
		errs = append(errs, &SpecError{Index: i, Device: s.Name, Key: key,
			Err: fmt.Errorf("needs %s, but %w; on a machine without hardware set [node] board = \"sim\"", what, err)})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &HostBoard{Root: "/"}, nil
}

// Kind resolves Board: "" and "auto" are "sim" when Sim is set, else
// "host"; "host" with Sim set, or any other value, is an error.
func (c Config) Kind() (string, error) {
	switch c.Board {
	case "", BoardAuto:
		if c.Sim != nil {
			return BoardSim, nil
		}
		return BoardHost, nil
	case BoardSim:
		return BoardSim, nil
	case BoardHost:
		if c.Sim != nil {
			return "", errors.New("hal: board \"host\" with simulated-board settings (Sim); drop one")
		}
		return BoardHost, nil
	}
	return "", fmt.Errorf("hal: board %q: want auto, sim or host", c.Board)
}
