package hal

import (
	"context"
	"errors"
	"fmt"
	"io"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
)

func init() {
	actions := []Kind{TurnOn, TurnOff, Toggle, Set, Read}
	Register(Driver{Name: "pwm", Open: openPWM, Check: checkPWM, Actions: actions, Output: true, Restores: true, Needs: NeedsPin})
	Register(Driver{Name: "sim-pwm", Open: openSimPWM, Check: checkPWM, Actions: actions, Output: true, Restores: true, Simulated: true})
}

func checkPWM(s DeviceSpec, _ bool, bad func(key, format string, args ...any)) {
	if _, err := parseFrequency(s.Frequency); err != nil {
		bad("frequency", "%v", err)
	}
}

// parseFrequency reads a pwm frequency; "" is DefaultPWMFrequency.
func parseFrequency(s string) (physic.Frequency, error) {
	f := DefaultPWMFrequency
	if s == "" {
		return f, nil
	}
	if err := f.Set(s); err != nil || f <= 0 {
		return 0, fmt.Errorf("%q is not a frequency (e.g. \"1kHz\")", s)
	}
	return f, nil
}

// DefaultPWMFrequency is used when a pwm device gives no frequency.
const DefaultPWMFrequency = physic.KiloHertz

// pwmOut is what a pwm device drives: a periph pin (the simulated board,
// or a PWM-capable pin of periph's drivers) or a sysfs PWM channel.
type pwmOut interface {
	PWM(duty gpio.Duty, f physic.Frequency) error
	Name() string
}

// pwmDriver sets a duty cycle of 0–100 % at a fixed frequency.
type pwmDriver struct {
	pin  pwmOut
	freq physic.Frequency
	duty float64 // percent
	last float64 // last duty above 0, for toggle and turn_on
	stop string
}

func (p *pwmDriver) Do(_ context.Context, a Action) (Reading, error) {
	switch a.Kind {
	case TurnOn:
		return p.write(p.last)
	case TurnOff:
		return p.write(0)
	case Toggle:
		if p.duty > 0 {
			return p.write(0)
		}
		return p.write(p.last)
	case Set:
		if a.Value < 0 || a.Value > 100 {
			return Reading{}, fmt.Errorf("%w: duty %v%% out of range 0 … 100", ErrBadValue, a.Value)
		}
		return p.write(a.Value)
	case Read:
		return p.Reading(), nil
	}
	return Reading{}, unsupported(a)
}

func (p *pwmDriver) write(pct float64) (Reading, error) {
	duty := gpio.Duty(pct / 100 * float64(gpio.DutyMax))
	if err := p.pin.PWM(duty, p.freq); err != nil {
		return Reading{}, fmt.Errorf("pwm %s: %w", p.pin.Name(), err)
	}
	p.duty = pct
	if pct > 0 {
		p.last = pct
	}
	return p.Reading(), nil
}

func (p *pwmDriver) Reading() Reading {
	st := StateOff
	if p.duty > 0 {
		st = StateOn
	}
	return Reading{State: st, Value: p.duty, Unit: "%"}
}

func (p *pwmDriver) Close() error {
	var err error
	switch p.stop {
	case "off":
		_, err = p.write(0)
	case "on":
		_, err = p.write(p.last)
	}
	if c, ok := p.pin.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}

// openPWM drives a sysfs PWM channel on a host board when the pin names one
// (PWM0, pwmchip0/pwm1, or a Pi's GPIO12/13/18/19 with its pwmchip
// present), else the pin's own PWM through periph.
func openPWM(e *Env) (Instance, Reading, error) {
	if hb, ok := e.Board.(*HostBoard); ok {
		ch, ok, err := hb.sysfsPWM(e.Spec.Pin)
		if err != nil {
			return nil, Reading{}, e.Errorf("pin", "pin %q: %v", e.Spec.Pin, err)
		}
		if ok {
			return startPWM(e, ch)
		}
	}
	pin, err := e.Board.Pin(e.Spec.Pin)
	if err != nil {
		return nil, Reading{}, e.Errorf("pin", "pin %q: %v", e.Spec.Pin, err)
	}
	inst, r, err := startPWM(e, pin)
	if _, pi := parsePWMPin(e.Spec.Pin); err != nil && pi && e.Board.Kind() == BoardHost {
		// periph's PWM on a Pi needs /dev/mem; the kernel's PWM class does not
		return nil, Reading{}, e.Errorf("pin", "%v; no /%s: %s", errors.Unwrap(err), c0.chipDir(), hintPWM)
	}
	return inst, r, err
}

// c0 is pwmchip0, where a Pi's GPIO12/13/18/19 are.
var c0 = pwmChannel{}

// sim-pwm is pwm on a pin of its own.
func openSimPWM(e *Env) (Instance, Reading, error) {
	return startPWM(e, NewSimPin(e.Spec.Name, -1))
}

func startPWM(e *Env, pin pwmOut) (Instance, Reading, error) {
	release := func() {
		if c, ok := pin.(io.Closer); ok {
			_ = c.Close()
		}
	}
	freq, err := parseFrequency(e.Spec.Frequency)
	if err != nil {
		release()
		return nil, Reading{}, e.Errorf("frequency", "%v", err)
	}
	p := &pwmDriver{pin: pin, freq: freq, last: 100, stop: e.Spec.OnStop}
	initial := 0.0
	if e.Spec.Initial == "on" {
		initial = 100
	}
	r, err := p.write(initial)
	if err != nil {
		release()
		return nil, Reading{}, e.Errorf("pin", "pin %q: %v", e.Spec.Pin, err)
	}
	return p, r, nil
}
