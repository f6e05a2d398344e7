package hal

import (
	"context"
	"errors"
	"fmt"

	"periph.io/x/conn/v3/gpio"

	"github.com/ews-firmware/ews/internal/clock"
)

func init() {
	Register(Driver{Name: "gpio-out", Open: openGPIOOut, Actions: switchActions, Output: true, Restores: true, Needs: NeedsPin})
	Register(Driver{Name: "sim-switch", Open: openSimSwitch, Actions: switchActions, Output: true, Restores: true, Simulated: true})
}

// switchActions are what a switch (GPIO line, Modbus coil) accepts.
var switchActions = []Kind{TurnOn, TurnOff, Toggle, Set, Pulse, Read}

// binaryOut is an output that is on or off: a GPIO line, a Modbus coil.
type binaryOut interface {
	set(ctx context.Context, on bool) error
	get(ctx context.Context) (bool, error)
	release() error
}

// switchDriver gives a binaryOut the switch actions, including pulse.
type switchDriver struct {
	out     binaryOut
	on      bool
	onStop  string        // on | off | keep | ""
	observe func(Reading) // reports the "on" half of a pulse
}

func (s *switchDriver) Do(ctx context.Context, a Action) (Reading, error) {
	switch a.Kind {
	case TurnOn, TurnOff:
		return s.write(ctx, a.Kind == TurnOn)
	case Toggle:
		return s.write(ctx, !s.on)
	case Set:
		if a.Value != 0 && a.Value != 1 {
			return Reading{}, fmt.Errorf("%w: %v: a switch takes 0 or 1", ErrBadValue, a.Value)
		}
		return s.write(ctx, a.Value == 1)
	case Pulse:
		r, err := s.write(ctx, true)
		if err != nil {
			return r, err
		}
		if s.observe != nil {
			s.observe(r)
		}
		waitErr := clock.Sleep(ctx, a.Duration)
		// always switch back off, even when the caller gave up
		r, err = s.write(context.WithoutCancel(ctx), false)
		if err == nil && waitErr != nil {
			if s.observe != nil {
				s.observe(r) // it is off again, though the pulse failed
			}
			err = fmt.Errorf("pulse cut short: %w", waitErr)
		}
		return r, err
	case Read:
		on, err := s.out.get(ctx)
		if err != nil {
			return Reading{}, err
		}
		s.on = on
		return onOff(on), nil
	}
	return Reading{}, unsupported(a)
}

func (s *switchDriver) write(ctx context.Context, on bool) (Reading, error) {
	if err := s.out.set(ctx, on); err != nil {
		return Reading{}, err
	}
	s.on = on
	return onOff(on), nil
}

func (s *switchDriver) Close() error {
	var err error
	switch s.onStop {
	case "on", "off":
		err = s.out.set(context.Background(), s.onStop == "on")
	}
	return errors.Join(err, s.out.release())
}

// gpioOut drives a GPIO line; active_low inverts it.
type gpioOut struct {
	pin       gpio.PinIO
	activeLow bool
}

func (g *gpioOut) level(on bool) gpio.Level { return gpio.Level(on != g.activeLow) }

func (g *gpioOut) set(_ context.Context, on bool) error {
	if err := g.pin.Out(g.level(on)); err != nil {
		return fmt.Errorf("write %s: %w", g.pin.Name(), err)
	}
	return nil
}

func (g *gpioOut) get(context.Context) (bool, error) {
	return bool(g.pin.Read()) != g.activeLow, nil
}

func (g *gpioOut) release() error { return nil }

func openGPIOOut(e *Env) (Instance, Reading, error) {
	pin, err := e.Board.Pin(e.Spec.Pin)
	if err != nil {
		return nil, Reading{}, e.Errorf("pin", "pin %q: %v", e.Spec.Pin, err)
	}
	return startSwitch(e, &gpioOut{pin: pin, activeLow: e.Spec.ActiveLow})
}

// sim-switch is gpio-out on a pin of its own.
func openSimSwitch(e *Env) (Instance, Reading, error) {
	return startSwitch(e, &gpioOut{pin: NewSimPin(e.Spec.Name, -1), activeLow: e.Spec.ActiveLow})
}

// startSwitch writes the initial state (off unless initial = "on").
func startSwitch(e *Env, out binaryOut) (Instance, Reading, error) {
	s := &switchDriver{out: out, onStop: e.Spec.OnStop, observe: e.Observe}
	r, err := s.write(context.Background(), e.Spec.Initial == "on")
	if err != nil {
		return nil, Reading{}, e.Errorf("initial", "write initial state: %v", err)
	}
	return s, r, nil
}
