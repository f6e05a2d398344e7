package hal

import (
	"fmt"
	"sync"

	"github.com/jonboulle/clockwork"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/onewire"
)

// SimPins is how many pins NewSimBoard creates: GPIO0 … GPIO27, a Raspberry
// Pi header.
const SimPins = 28

// SimBoard is the simulated board, built like periph's gpiotest and i2ctest
// fakes: its exported fields are what a test (or the demo) drives. Add a pin
// or a bus before opening devices; lock Mu while changing the maps later.
type SimBoard struct {
	Mu sync.Mutex
	// Pins by name; each a gpiotest.Pin whose EdgesChan is buffered, so a
	// test fakes an input edge with `p.EdgesChan <- gpio.High`.
	Pins map[string]*gpiotest.Pin
	// I2CBuses and OneWireBuses by name, e.g. an *i2ctest.Playback; a name
	// absent here fails to open, like a missing bus on a real board.
	I2CBuses     map[string]i2c.Bus
	OneWireBuses map[string]onewire.Bus
}

// NewSimBoard returns a board with pins GPIO0 … GPIO27 and no buses.
func NewSimBoard() *SimBoard {
	b := &SimBoard{Pins: map[string]*gpiotest.Pin{}, I2CBuses: map[string]i2c.Bus{}, OneWireBuses: map[string]onewire.Bus{}}
	for i := range SimPins {
		name := fmt.Sprintf("GPIO%d", i)
		b.Pins[name] = NewSimPin(name, i)
	}
	return b
}

// NewSimPin returns a fake pin ready for edge detection.
func NewSimPin(name string, num int) *gpiotest.Pin {
	return &gpiotest.Pin{N: name, Num: num, Clock: clockwork.NewRealClock(), EdgesChan: make(chan gpio.Level, 64)}
}

// Kind is "sim".
func (b *SimBoard) Kind() string { return "sim" }

// Pin returns the fake pin called name.
func (b *SimBoard) Pin(name string) (gpio.PinIO, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	if p, ok := b.Pins[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("hal: no GPIO pin %q on the simulated board (GPIO0 … GPIO%d)", name, SimPins-1)
}

// I2C returns the fake bus called name.
func (b *SimBoard) I2C(name string) (i2c.Bus, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	if bus, ok := b.I2CBuses[name]; ok {
		return bus, nil
	}
	return nil, fmt.Errorf("hal: open I2C bus %q: no such bus on the simulated board", name)
}

// OneWire returns the fake bus called name.
func (b *SimBoard) OneWire(name string) (onewire.Bus, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	if bus, ok := b.OneWireBuses[name]; ok {
		return bus, nil
	}
	return nil, fmt.Errorf("hal: open 1-wire bus %q: no such bus on the simulated board", name)
}

// Close does nothing: the fakes hold no resources.
func (b *SimBoard) Close() error { return nil }
