package hal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestW1Sysfs reads DS18B20s through a fake /sys/bus/w1/devices, in both
// address forms, and reports a bad CRC and a missing sensor by path.
func TestW1Sysfs(t *testing.T) {
	root := t.TempDir()
	devs := filepath.Join(root, "sys/bus/w1/devices")
	write := func(dev, file, text string) {
		must(t, os.MkdirAll(filepath.Join(devs, dev), 0o755))
		must(t, os.WriteFile(filepath.Join(devs, dev, file), []byte(text), 0o644))
	}
	write("28-0000070e41ac", "w1_slave", "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=23125\n")
	write("28-00000a1b2c3d", "temperature", "-1500\n")
	write("28-0000deadbeef", "w1_slave", "72 01 4b 46 7f ff 0e 10 57 : crc=58 NO\n72 01 4b 46 7f ff 0e 10 57 t=23125\n")
	must(t, os.MkdirAll(filepath.Join(devs, "w1_bus_master1"), 0o755))

	cfg := Config{Node: "ews1", Devices: []DeviceSpec{
		{Name: "room", Driver: "ds18b20", Bus: "w1", Address: "28-0000070e41ac"},
		{Name: "freezer", Driver: "ds18b20", Bus: "w1", Address: "0x8f00000a1b2c3d28"}, // periph form, found by the kernel's name
		{Name: "loose", Driver: "ds18b20", Bus: "w1", Address: "28-0000deadbeef"},
	}}
	ds, err := New(cfg, Options{Board: &HostBoard{Root: root}, Logger: testutil.Logger()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer ds.Close()
	for name, want := range map[string]float64{"room": 23.125, "freezer": -1.5} {
		s := do(t, ds, name, Action{Kind: Read})
		if s.State != StateOK || s.Value != want || s.Unit != "°C" || s.Simulated {
			t.Errorf("%s: %+v, want %v °C", name, s, want)
		}
	}
	_, err = ds.Do(t.Context(), "loose", Action{Kind: Read})
	contains(t, err, "28-0000deadbeef/w1_slave", "CRC check failed")

	cfg.Devices = []DeviceSpec{{Name: "gone", Driver: "ds18b20", Bus: "w1", Address: "28-000000000001"}}
	_, err = New(cfg, Options{Board: &HostBoard{Root: root}, Logger: testutil.Logger()})
	contains(t, err, "no 1-wire device 28-000000000001", "found: 28-0000070e41ac, 28-00000a1b2c3d, 28-0000deadbeef")

	_, err = New(cfg, Options{Board: &HostBoard{Root: t.TempDir()}, Logger: testutil.Logger()})
	contains(t, err, "sys/bus/w1/devices", "dtoverlay=w1-gpio")
}

// TestI2CDevice: a numbered bus without its /dev/i2c-N says which line
// turns I²C on.
func TestI2CDevice(t *testing.T) {
	cfg := Config{Node: "ews1", Devices: []DeviceSpec{{Name: "env", Driver: "bmxx80", Bus: "I2C1"}}}
	_, err := New(cfg, Options{Board: &HostBoard{Root: t.TempDir()}, Logger: testutil.Logger()})
	contains(t, err, `device "env"`, "no /dev/i2c-1", "dtparam=i2c_arm=on")
	for name, want := range map[string]string{"1": "dev/i2c-1", "I2C3": "dev/i2c-3", "/dev/i2c-10": "dev/i2c-10", "sensors": ""} {
		if got, _ := i2cDevice(name); got != want {
			t.Errorf("i2cDevice(%q) = %q, want %q", name, got, want)
		}
	}
}
