package hal

import (
	"fmt"
	"log/slog"

	"github.com/ews-firmware/ews/internal/sandbox"
)

// Env is what a driver's Open gets.
type Env struct {
	Spec  DeviceSpec
	Board Board
	Log   *slog.Logger // carries the device's name
	// Observe reports a reading the instance saw on its own (an input edge);
	// safe to call from the instance's goroutines.
	Observe func(Reading)
	// Programs is the box a driver runs programs in (the command driver).
	Programs *sandbox.Box

	index int
}

// Errorf returns a *SpecError for the device's key.
func (e *Env) Errorf(key, format string, args ...any) error {
	return &SpecError{Index: e.index, Device: e.Spec.Name, Key: key, Err: fmt.Errorf(format, args...)}
}

func unsupported(a Action) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, a.Kind)
}
