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

// envSensor reads a periph physic.SenseEnv (BME280/BMP280/BMP180, DS18B20).
type envSensor struct {
	sense    func(*physic.Env) error
	humidity bool
	pressure bool
	halt     func() error
}

func (s *envSensor) supports(kind string) bool { return kind == Read }

func (s *envSensor) do(_ context.Context, a Action) (reading, error) {
	if a.Kind != Read {
		return reading{}, unsupported(a)
	}
	var env physic.Env
	if err := s.sense(&env); err != nil {
		return reading{}, err
	}
	t := celsius(env.Temperature)
	r := reading{state: StateOK, value: t, unit: "°C", values: map[string]Quantity{"temperature": {t, "°C"}}}
	if s.humidity {
		r.values["humidity"] = Quantity{round(float64(env.Humidity) / float64(physic.PercentRH)), "%"}
	}
	if s.pressure {
		r.values["pressure"] = Quantity{round(float64(env.Pressure) / float64(100*physic.Pascal)), "hPa"}
	}
	return r, nil
}

func (s *envSensor) close() error { return s.halt() }

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

func openBMxx80(e *openEnv) (driver, reading, error) {
	addr, err := parseAddress(e.cfg.Address, 0x76)
	if err != nil || addr > 0x7f {
		return nil, reading{}, e.errorf("address", "%q is not an I2C address (0x76 or 0x77)", e.cfg.Address)
	}
	bus, err := e.board.I2C(e.cfg.Bus)
	if err != nil {
		return nil, reading{}, e.errorf("bus", "%v", err)
	}
	dev, err := bmxx80.NewI2C(bus, uint16(addr), &bmxx80.DefaultOpts)
	if err != nil {
		return nil, reading{}, e.errorf("address", "no BMxx80 at %#x on I2C bus %q: %v", addr, e.cfg.Bus, err)
	}
	// a BMP280/BMP180 has no humidity sensor; only a BME280 reports it
	hum := strings.HasPrefix(dev.String(), "BME280")
	return &envSensor{sense: dev.Sense, humidity: hum, pressure: true, halt: dev.Halt}, reading{state: StateUnknown}, nil
}

// DS18B20Resolution is the conversion resolution in bits (0.25 °C, 188 ms).
const DS18B20Resolution = 10

func openDS18B20(e *openEnv) (driver, reading, error) {
	addr, err := parseAddress(e.cfg.Address, 0)
	if err != nil || addr == 0 {
		return nil, reading{}, e.errorf("address", "%q is not a 1-wire address (e.g. \"0x740000070e41ac28\")", e.cfg.Address)
	}
	bus, err := e.board.OneWire(e.cfg.Bus)
	if err != nil {
		return nil, reading{}, e.errorf("bus", "%v", err)
	}
	dev, err := ds18b20.New(bus, onewire.Address(addr), DS18B20Resolution)
	if err != nil {
		return nil, reading{}, e.errorf("address", "no DS18B20 at %#x on 1-wire bus %q: %v", addr, e.cfg.Bus, err)
	}
	return &envSensor{sense: dev.Sense, halt: dev.Halt}, reading{state: StateUnknown}, nil
}

// simSensor is a temperature (or any) sensor whose value drifts: a random walk
// of step `drift` pulled back toward its baseline, kept within min/max.
type simSensor struct {
	value, base, drift float64
	lo, hi             float64
	unit               string
	rng                *rand.Rand
}

func (s *simSensor) supports(kind string) bool { return kind == Read }

func (s *simSensor) do(_ context.Context, a Action) (reading, error) {
	if a.Kind != Read {
		return reading{}, unsupported(a)
	}
	step := (s.rng.Float64()*2 - 1) * s.drift
	pull := (s.base - s.value) * 0.1
	s.value = math.Min(s.hi, math.Max(s.lo, s.value+step+pull))
	return s.reading(), nil
}

func (s *simSensor) reading() reading {
	return reading{state: StateOK, value: round(s.value), unit: s.unit}
}

func (s *simSensor) close() error { return nil }

func openSimSensor(e *openEnv) (driver, reading, error) {
	s := &simSensor{base: e.cfg.Baseline, drift: e.cfg.Drift, unit: e.cfg.Units, lo: math.Inf(-1), hi: math.Inf(1)}
	if s.base == 0 {
		s.base = 21.5
	}
	if s.drift == 0 {
		s.drift = 0.1
	}
	if s.unit == "" {
		s.unit = "°C"
	}
	if e.cfg.Min != nil {
		s.lo = *e.cfg.Min
	}
	if e.cfg.Max != nil {
		s.hi = *e.cfg.Max
	}
	s.value = math.Min(s.hi, math.Max(s.lo, s.base))
	seed := uint64(0)
	for _, c := range e.cfg.Name {
		seed = seed*31 + uint64(c)
	}
	s.rng = rand.New(rand.NewPCG(seed, 0x5eed))
	return s, s.reading(), nil
}
