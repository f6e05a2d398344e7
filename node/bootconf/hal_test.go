package bootconf

import (
	"errors"
	"os"
	"regexp"
	"testing"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/config/configtest"
)

// hal's errors about a device come back with the file, line and key path.
func TestDeviceErrorsHaveTheLine(t *testing.T) {
	doc := "[node]\nname = \"ews1\"\n[sim]\n\n[[device]]\nname = \"ok\"\ndriver = \"sim-switch\"\n\n[[device]]\nname = \"r1\"\ndriver = \"gpio-out\"\npin = \"GPIO99\"\n"
	cfg, err := parseConfig("/boot/ews.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = hal.New(halConfig(cfg), hal.Options{Board: hal.NewSimBoard()})
	if err == nil {
		t.Fatal("GPIO99 opened on the simulated board")
	}
	var es config.Errors
	if !errors.As(deviceErrors(cfg, err), &es) || len(es) != 1 {
		t.Fatalf("deviceErrors(%v) = %v, want one config.Error", err, deviceErrors(cfg, err))
	}
	e := es[0]
	if e.File != "/boot/ews.toml" || e.Line != 12 || e.Key != "device[1].pin" {
		t.Fatalf("error at %s:%d %s, want /boot/ews.toml:12 device[1].pin (%v)", e.File, e.Line, e.Key, e)
	}
	if want := `config: /boot/ews.toml:12: device[1].pin: device "r1": pin "GPIO99": `; len(e.Error()) < len(want) || e.Error()[:len(want)] != want {
		t.Fatalf("message %q, want it to start with %q", e.Error(), want)
	}
	if other := errors.New("boom"); deviceErrors(cfg, other) != other {
		t.Fatal("an error that is not hal's was changed")
	}
}

// A driver's own key checks run at Parse, with the line of the key.
func TestParseAsksHalAboutDriverKeys(t *testing.T) {
	tests := []struct {
		name, doc string
		line      int
		key, msg  string
	}{
		{"needs a pin (no pin line: the table's)", "[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\n", 1, "device[0].pin", "needs a pin"},
		{"bad pull", "[[device]]\nname = \"b\"\ndriver = \"gpio-in\"\npin = \"GPIO4\"\npull = \"sideways\"\n", 5, "device[0].pull", "want up, down or none"},
		{"bad initial", "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\ninitial = \"maybe\"\n", 4, "device[0].initial", "want on or off"},
		{"modbus register", "[[device]]\nname = \"m\"\ndriver = \"modbus-register\"\nnode = \"any\"\naddress = \"plc:502\"\nregister = 70000\n", 6, "device[0].register", "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig("/boot/ews.toml", []byte(tt.doc))
			configtest.Refused(t, err, "/boot/ews.toml", configtest.Want{Line: tt.line, Key: tt.key, Msg: tt.msg})
		})
	}
}

// example.toml is written by hand: it must name every driver hal knows.
func TestExampleListsEveryDriver(t *testing.T) {
	for _, name := range hal.DriverNames() {
		if name == testDriver {
			continue
		}
		if !regexp.MustCompile(`(?m)^\s*(driver\s*=.*#.*|#.*)[ "]` + regexp.QuoteMeta(name) + `( |"|$)`).MatchString(config.Example()) {
			t.Errorf("example.toml does not list driver %q", name)
		}
	}
}

// The demo config parses and its devices open on the simulated board.
func TestDemoConfig(t *testing.T) {
	data, err := os.ReadFile("../../examples/demo.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig("demo.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.Auth != "token" || cfg.HTTP.Token != "demo-token" {
		t.Fatalf("demo auth %q token %q, want token demo-token", cfg.HTTP.Auth, cfg.HTTP.Token)
	}
	hc := halConfig(cfg)
	if hc.Sim == nil {
		t.Fatal("the demo does not run on the simulated board")
	}
	hc.Sim.DeviceLatency = 0
	ds, err := hal.New(hc, hal.Options{})
	if err != nil {
		t.Fatal(deviceErrors(cfg, err))
	}
	defer ds.Close()
	drivers := map[string]bool{}
	for _, s := range ds.List() {
		drivers[s.Driver] = true
	}
	for _, d := range []string{"gpio-out", "pwm", "sim-button", "sim-sensor"} {
		if !drivers[d] {
			t.Errorf("demo lacks a %s device", d)
		}
	}
	ctx := t.Context()
	if _, err := ds.Do(ctx, "relay1", hal.Action{Kind: hal.TurnOn}); err != nil {
		t.Fatal(err)
	}
	if s, err := ds.Do(ctx, "relay2", hal.Action{Kind: hal.TurnOn}); err != nil || s.State != hal.StateOn {
		t.Fatal(s, err)
	}
	if s, _ := ds.Get("relay1"); s.State != hal.StateOff {
		t.Fatalf("demo relays are not interlocked: relay1 %s", s.State)
	}
}
