package hal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreflight runs against fake roots: what is missing is reported per
// device with the key and the config.txt line or group that fixes it.
func TestPreflight(t *testing.T) {
	devices := []DeviceSpec{
		{Name: "fan", Driver: "pwm", Pin: "GPIO18"},
		{Name: "temp", Driver: "ds18b20", Bus: "w1", Address: "28-0000070e41ac"},
		{Name: "env", Driver: "bmxx80", Bus: "1"},
		{Name: "relay", Driver: "gpio-out", Pin: "GPIO17"},
		{Name: "elsewhere", Driver: "gpio-out", Pin: "GPIO17", Node: "ews2"},
		{Name: "fake", Driver: "sim-switch"},
	}
	full := func(t *testing.T, root string) {
		for _, d := range []string{"sys/class/pwm/pwmchip0", "sys/bus/w1/devices", "dev"} {
			must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		}
		for _, f := range []string{"sys/class/pwm/pwmchip0/export", "dev/i2c-1", "dev/gpiochip0"} {
			must(t, os.WriteFile(filepath.Join(root, f), nil, 0o600))
		}
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, root string)
		cfg   Config
		want  []string // "device key: text", in device order
	}{
		{"bare machine", func(*testing.T, string) {}, Config{Node: "ews1", Devices: devices}, []string{
			"fan pin: dtoverlay=pwm",
			"temp bus: dtoverlay=w1-gpio",
			"env bus: dtparam=i2c_arm=on",
			"relay pin: /dev/gpiochip*",
		}},
		{"a ready Pi", full, Config{Node: "ews1", Devices: devices}, nil},
		{"simulated board", func(*testing.T, string) {}, Config{Node: "ews1", Board: BoardSim, Devices: devices}, nil},
		{"sim table", func(*testing.T, string) {}, Config{Node: "ews1", Sim: &SimConfig{}, Devices: devices}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			c.setup(t, root)
			got := Preflight(c.cfg, root)
			if len(got) != len(c.want) {
				t.Fatalf("got %d warnings, want %d:\n%v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				dev, rest, _ := strings.Cut(w, " ")
				key, text, _ := strings.Cut(rest, ": ")
				if got[i].Device != dev || got[i].Key != key || !strings.Contains(got[i].Err.Error(), text) {
					t.Errorf("warning %d: %s %s: %v; want %s", i, got[i].Device, got[i].Key, got[i].Err, w)
				}
			}
		})
	}
}
