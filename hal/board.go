package hal

import (
	"log/slog"

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

// OpenBoard picks the board: the simulated board when sim is set or when
// periph finds no GPIO, I²C or 1-wire hardware; else the host board.
func OpenBoard(sim *SimConfig, log *slog.Logger) Board {
	if log == nil {
		log = slog.Default()
	}
	if sim != nil {
		return NewSimBoard()
	}
	hb, err := NewHostBoard()
	if err != nil {
		log.Warn("hal: no hardware found, using the simulated board", "err", err)
		return NewSimBoard()
	}
	return hb
}
