package hal

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"periph.io/x/conn/v3/onewire"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/bmxx80"
	"periph.io/x/devices/v3/ds18b20"
)

func init() {
	Register(Driver{Name: "bmxx80", Open: openBMxx80, Check: checkBMxx80, Actions: []Kind{Read}, Polled: true, Needs: NeedsBus})
	Register(Driver{Name: "ds18b20", Open: openDS18B20, Check: checkDS18B20, Actions: []Kind{Read}, Polled: true, Needs: NeedsBus})
	Register(Driver{Name: "sim-sensor", Open: openSimSensor, Actions: []Kind{Read}, Polled: true, Simulated: true})
}

func checkBMxx80(s DeviceSpec, _ bool, bad func(key, format string, args ...any)) {
	if a, err := parseAddress(s.Address, 0x76); err != nil || a > 0x7f {
		bad("address", "%q is not an I2C address (0x76 or 0x77)", s.Address)
	}
}

func checkDS18B20(s DeviceSpec, _ bool, bad func(key, format string, args ...any)) {
	_, kernel, err := parseW1Address(s.Address)
	switch {
	case err != nil:
		bad("address", "%q is not a 1-wire address (e.g. \"0x740000070e41ac28\" or \"28-0000070e41ac\")", s.Address)
	case kernel && s.Bus != W1Bus:
		bad("address", "%q is the kernel's name of a device; it needs bus = %q", s.Address, W1Bus)
	}
}

// envSensor reads a periph physic.SenseEnv (BME280/BMP280/BMP180, DS18B20).
type envSensor struct {
	sense    func(*physic.Env) error
	humidity bool
	pressure bool
	halt     func() error
}

func (s *envSensor) Do(_ context.Context, a Action) (Reading, error) {
	if a.Kind != Read {
		return Reading{}, unsupported(a)
	}
	var env physic.Env
	if err := s.sense(&env); err != nil {
		return Reading{}, err
	}
	t := celsius(env.Temperature)
	r := Reading{State: StateOK, Value: t, Unit: "°C", Values: map[string]Quantity{"temperature": {t, "°C"}}}
	if s.humidity {
		r.Values["humidity"] = Quantity{round(float64(env.Humidity) / float64(physic.PercentRH)), "%"}
	}
	if s.pressure {
		r.Values["pressure"] = Quantity{round(float64(env.Pressure) / float64(100*physic.Pascal)), "hPa"}
	}
	return r, nil
}

func (s *envSensor) Close() error { return s.halt() }

func celsius(t physic.Temperature) float64 {
	return round(float64(t-physic.ZeroCelsius) / float64(physic.Celsius))
}

// round keeps three decimals, more than any of these sensors resolves.
func round(v float64) float64 { return math.Round(v*1000) / 1000 }

func parseAddress(s string, def uint64) (uint64, error) {
	if s == "" {
		return def, nil
	}
	return strconv.ParseUint(s, 0, 64)
}

func openBMxx80(e *Env) (Instance, Reading, error) {
	addr, err := parseAddress(e.Spec.Address, 0x76)
	if err != nil || addr > 0x7f {
		return nil, Reading{}, e.Errorf("address", "%q is not an I2C address (0x76 or 0x77)", e.Spec.Address)
	}
	bus, err := e.Board.I2C(e.Spec.Bus)
	if err != nil {
		return nil, Reading{}, e.Errorf("bus", "%v", err)
	}
	dev, err := bmxx80.NewI2C(bus, uint16(addr), &bmxx80.DefaultOpts)
	if err != nil {
		return nil, Reading{}, e.Errorf("address", "no BMxx80 at %#x on I2C bus %q: %v", addr, e.Spec.Bus, err)
	}
	// a BMP280/BMP180 has no humidity sensor; only a BME280 reports it
	hum := strings.HasPrefix(dev.String(), "BME280")
	return &envSensor{sense: dev.Sense, humidity: hum, pressure: true, halt: dev.Halt}, Reading{State: StateUnknown}, nil
}

// DS18B20Resolution is the conversion resolution in bits (0.25 °C, 188 ms).
const DS18B20Resolution = 10

// openDS18B20 reads the sensor through the kernel's w1 bus on a host board
// (bus = "w1", or a device the kernel lists), else through a periph 1-wire
// bus (a DS248x bridge).
func openDS18B20(e *Env) (Instance, Reading, error) {
	addr, _, err := parseW1Address(e.Spec.Address)
	if err != nil {
		return nil, Reading{}, e.Errorf("address", "%v", err)
	}
	if hb, ok := e.Board.(*HostBoard); ok {
		s, ok, err := hb.w1Sensor(e.Spec.Bus, addr)
		if err != nil {
			return nil, Reading{}, e.Errorf("address", "%v", err)
		}
		if ok {
			return s, Reading{State: StateUnknown}, nil
		}
	}
	bus, err := e.Board.OneWire(e.Spec.Bus)
	if err != nil {
		return nil, Reading{}, e.Errorf("bus", "%v", err)
	}
	dev, err := ds18b20.New(bus, onewire.Address(addr), DS18B20Resolution)
	if err != nil {
		return nil, Reading{}, e.Errorf("address", "no DS18B20 at %#x on 1-wire bus %q: %v", addr, e.Spec.Bus, err)
	}
	return &envSensor{sense: dev.Sense, halt: dev.Halt}, Reading{State: StateUnknown}, nil
}

// simSensor is a temperature (or any) sensor whose value drifts: a random walk
// of step `drift` pulled back toward its baseline, kept within min/max.
type simSensor struct {
	value, base, drift float64
	lo, hi             float64
	unit               string
	rng                *rand.Rand
}

func (s *simSensor) Do(_ context.Context, a Action) (Reading, error) {
	if a.Kind != Read {
		return Reading{}, unsupported(a)
	}
	step := (s.rng.Float64()*2 - 1) * s.drift
	pull := (s.base - s.value) * 0.1
	s.value = math.Min(s.hi, math.Max(s.lo, s.value+step+pull))
	return s.Reading(), nil
}

func (s *simSensor) Reading() Reading {
	return Reading{State: StateOK, Value: round(s.value), Unit: s.unit}
}

func (s *simSensor) Close() error { return nil }

func openSimSensor(e *Env) (Instance, Reading, error) {
	s := &simSensor{base: e.Spec.Baseline, drift: e.Spec.Drift, unit: e.Spec.Units, lo: math.Inf(-1), hi: math.Inf(1)}
	if s.base == 0 {
		s.base = 21.5
	}
	if s.drift == 0 {
		s.drift = 0.1
	}
	if s.unit == "" {
		s.unit = "°C"
	}
	if e.Spec.Min != nil {
		s.lo = *e.Spec.Min
	}
	if e.Spec.Max != nil {
		s.hi = *e.Spec.Max
	}
	s.value = math.Min(s.hi, math.Max(s.lo, s.base))
	seed := uint64(0)
	for _, c := range e.Spec.Name {
		seed = seed*31 + uint64(c)
	}
	s.rng = rand.New(rand.NewPCG(seed, 0x5eed))
	return s, s.Reading(), nil
}
