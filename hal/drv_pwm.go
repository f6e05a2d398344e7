package hal

import (
	"context"
	"fmt"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
)

// DefaultPWMFrequency is used when a pwm device gives no frequency.
const DefaultPWMFrequency = physic.KiloHertz

// pwmDriver sets a duty cycle of 0–100 % at a fixed frequency.
type pwmDriver struct {
	pin  gpio.PinOut
	freq physic.Frequency
	duty float64 // percent
	last float64 // last duty above 0, for toggle and turn_on
	stop string
}

var pwmKinds = kinds(TurnOn, TurnOff, Toggle, Set, Read)

func (p *pwmDriver) supports(kind string) bool { return pwmKinds(kind) }

func (p *pwmDriver) do(_ context.Context, a Action) (reading, error) {
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
			return reading{}, fmt.Errorf("%w: duty %v%% out of range 0 … 100", ErrBadValue, a.Value)
		}
		return p.write(a.Value)
	case Read:
		return p.reading(), nil
	}
	return reading{}, unsupported(a)
}

func (p *pwmDriver) write(pct float64) (reading, error) {
	duty := gpio.Duty(pct / 100 * float64(gpio.DutyMax))
	if err := p.pin.PWM(duty, p.freq); err != nil {
		return reading{}, fmt.Errorf("pwm %s: %w", p.pin.Name(), err)
	}
	p.duty = pct
	if pct > 0 {
		p.last = pct
	}
	return p.reading(), nil
}

func (p *pwmDriver) reading() reading {
	st := StateOff
	if p.duty > 0 {
		st = StateOn
	}
	return reading{state: st, value: p.duty, unit: "%"}
}

func (p *pwmDriver) close() error {
	switch p.stop {
	case "off":
		_, err := p.write(0)
		return err
	case "on":
		_, err := p.write(p.last)
		return err
	}
	return nil
}

func openPWM(e *openEnv) (driver, reading, error) {
	pin, err := e.board.Pin(e.cfg.Pin)
	if err != nil {
		return nil, reading{}, e.errorf("pin", "pin %q: %v", e.cfg.Pin, err)
	}
	return startPWM(e, pin)
}

// sim-pwm is pwm on a pin of its own.
func openSimPWM(e *openEnv) (driver, reading, error) {
	return startPWM(e, NewSimPin(e.cfg.Name, -1))
}

func startPWM(e *openEnv, pin gpio.PinOut) (driver, reading, error) {
	freq := DefaultPWMFrequency
	if e.cfg.Frequency != "" {
		if err := freq.Set(e.cfg.Frequency); err != nil || freq <= 0 {
			return nil, reading{}, e.errorf("frequency", "%q is not a frequency (e.g. \"1kHz\")", e.cfg.Frequency)
		}
	}
	p := &pwmDriver{pin: pin, freq: freq, last: 100, stop: e.cfg.OnStop}
	initial := 0.0
	if e.cfg.Initial == "on" {
		initial = 100
	}
	r, err := p.write(initial)
	if err != nil {
		return nil, reading{}, e.errorf("pin", "pin %q: %v", e.cfg.Pin, err)
	}
	return p, r, nil
}
