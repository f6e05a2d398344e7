package hal

import (
	"errors"
	"testing"

	"periph.io/x/conn/v3/i2c/i2ctest"
	"periph.io/x/conn/v3/onewire/onewiretest"
)

// bme280Ops is a BME280 conversation recorded from a device (periph's own test data).
func bme280Ops() []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: 0x76, W: []byte{0xd0}, R: []byte{0x60}},
		{Addr: 0x76, W: []byte{0x88}, R: []byte{0x10, 0x6e, 0x6c, 0x66, 0x32, 0x0, 0x5d, 0x95, 0xb8, 0xd5, 0xd0, 0xb, 0x77, 0x1e, 0x9d, 0xff, 0xf9, 0xff, 0xac, 0x26, 0xa, 0xd8, 0xbd, 0x10, 0x0, 0x4b}},
		{Addr: 0x76, W: []byte{0xe1}, R: []byte{0x6e, 0x1, 0x0, 0x13, 0x5, 0x0, 0x1e}},
		{Addr: 0x76, W: []byte{0xf4, 0x6c, 0xf2, 0x3, 0xf5, 0xa0, 0xf4, 0x6c}},
		// Sense: forced mode, idle check, read
		{Addr: 0x76, W: []byte{0xF4, 0x6d}},
		{Addr: 0x76, W: []byte{0xF3}, R: []byte{0}},
		{Addr: 0x76, W: []byte{0xf7}, R: []byte{0x4a, 0x52, 0xc0, 0x80, 0x96, 0xc0, 0x7a, 0x76}},
	}
}

func TestBMxx80(t *testing.T) {
	b := NewSimBoard()
	bus := &i2ctest.Playback{Ops: bme280Ops(), DontPanic: true}
	b.I2CBuses["1"] = bus
	ds := open(t, parse(t, "[[device]]\nname = \"env\"\ndriver = \"bmxx80\"\nbus = \"1\"\naddress = \"0x76\"\nmax_age = \"0s\"\n\n[[device]]\nname = \"other\"\ndriver = \"sim-switch\"\n"), b)
	s := do(t, ds, "env", Action{Kind: Read})
	if s.State != StateOK || s.Value != 23.72 || s.Unit != "°C" {
		t.Fatalf("read: %+v", s)
	}
	if h := s.Values["humidity"]; h.Unit != "%" || h.Value < 65 || h.Value > 65.4 {
		t.Errorf("humidity %+v, want 65.3 %%", h)
	}
	if p := s.Values["pressure"]; p.Unit != "hPa" || p.Value < 1009 || p.Value > 1010 {
		t.Errorf("pressure %+v, want 1009.4 hPa", p)
	}
	// the playback is spent: the next read is a bus error (a NACK on real hardware)
	_, err := ds.Do(t.Context(), "env", Action{Kind: Read})
	var de *DriverError
	if !errors.As(err, &de) || de.Device != "env" {
		t.Fatalf("second read: %v, want DriverError for env", err)
	}
	if s, _ := ds.Get("env"); s.State != StateError || s.Error == "" || s.Value != 23.72 {
		t.Fatalf("after the error: %+v, want state error, message and last value", s)
	}
	// other devices are unaffected
	if s := do(t, ds, "other", Action{Kind: TurnOn}); s.State != StateOn {
		t.Fatalf("other device: %+v", s)
	}
	// recovery: a bus that answers again clears the error
	bus.Lock()
	bus.Ops = append(bus.Ops, bme280Ops()[4:]...)
	bus.Count = len(bus.Ops) - 3
	bus.Unlock()
	if s := do(t, ds, "env", Action{Kind: Read}); s.State != StateOK || s.Error != "" {
		t.Fatalf("after recovery: %+v", s)
	}
}

func TestDS18B20(t *testing.T) {
	addr := []byte{0x55, 0x28, 0xac, 0x41, 0xe, 0x7, 0x0, 0x0, 0x74}
	spad := []byte{0xe0, 0x1, 0x0, 0x0, 0x3f, 0xff, 0x10, 0x10, 0x3f}
	ops := []onewiretest.IO{
		{W: append(addr[:9:9], 0xbe), R: spad},    // init: read scratchpad
		{W: append(addr[:9:9], 0x44), Pull: true}, // convert
		{W: append(addr[:9:9], 0xbe), R: spad},    // read temperature
	}
	b := NewSimBoard()
	b.OneWireBuses["w1"] = &onewiretest.Playback{Ops: ops, DontPanic: true}
	ds := open(t, parse(t, "[[device]]\nname = \"water\"\ndriver = \"ds18b20\"\nbus = \"w1\"\naddress = \"0x740000070e41ac28\"\n"), b)
	if s := do(t, ds, "water", Action{Kind: Read}); s.Value != 30.0 || s.Unit != "°C" || s.State != StateOK {
		t.Fatalf("read: %+v, want 30 °C", s)
	}
}

func TestSimSensorDrifts(t *testing.T) {
	// max_age 0s: every read reaches the sensor. The default comes from
	// the measured read time (TestMaxAgeDefaultShare), which a loaded
	// machine stretches; this test is about drift, not caching.
	ds := open(t, parse(t, "[[device]]\nname = \"t\"\ndriver = \"sim-sensor\"\nbaseline = 20.0\ndrift = 0.5\nmin = 15.0\nmax = 25.0\nmax_age = \"0s\"\n"), nil)
	seen := map[float64]bool{}
	for range 200 {
		v := do(t, ds, "t", Action{Kind: Read}).Value.(float64)
		if v < 15 || v > 25 {
			t.Fatalf("value %v outside min/max", v)
		}
		seen[v] = true
	}
	if len(seen) < 20 {
		t.Fatalf("only %d distinct values in 200 reads: not drifting", len(seen))
	}
}
