package hal

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// driver is one kind of device. The Device around it serialises calls, so a
// driver needs no lock of its own except for state its own goroutines touch.
type driver interface {
	// supports reports whether the driver implements the action kind.
	supports(kind string) bool
	// do performs a and returns the reading afterwards. An error wrapping
	// ErrBadValue or ErrUnsupported is the caller's fault; any other is the
	// hardware's.
	do(ctx context.Context, a Action) (reading, error)
	// close stops the driver's goroutines and writes its shutdown state.
	close() error
}

// openEnv is what a driver gets when it opens.
type openEnv struct {
	cfg   config.Device
	key   string // "device[3]", for config errors
	root  *config.Config
	board Board
	log   *slog.Logger
	// observe reports a reading the driver saw on its own (an input edge).
	observe func(reading)
}

// errorf builds a config error pointing at the device's field.
func (e *openEnv) errorf(field, format string, args ...any) error {
	return e.root.Errorf(e.key+"."+field, "device %q: "+format, append([]any{e.cfg.Name}, args...)...)
}

// opener opens a driver and returns its first reading.
type opener func(e *openEnv) (driver, reading, error)

var openers = map[string]opener{
	"gpio-out":        openGPIOOut,
	"sim-switch":      openSimSwitch,
	"gpio-in":         openGPIOIn,
	"sim-button":      openSimButton,
	"pwm":             openPWM,
	"sim-pwm":         openSimPWM,
	"bmxx80":          openBMxx80,
	"ds18b20":         openDS18B20,
	"modbus-coil":     openModbusCoil,
	"modbus-register": openModbusRegister,
	"command":         openCommand,
	"sim-sensor":      openSimSensor,
}

// outputs are the drivers that turn_off, so they may take part in an interlock.
func isOutput(driver string) bool {
	switch driver {
	case "gpio-out", "sim-switch", "pwm", "sim-pwm", "modbus-coil", "command":
		return true
	}
	return false
}

func isSim(driver string) bool { return strings.HasPrefix(driver, "sim-") }

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func kinds(k ...string) func(string) bool {
	return func(kind string) bool {
		for _, v := range k {
			if v == kind {
				return true
			}
		}
		return false
	}
}

func unsupported(a Action) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, a.Kind)
}
