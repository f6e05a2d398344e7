package hal

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
	"periph.io/x/conn/v3/physic"
)

func TestGPIOOut(t *testing.T) {
	tests := []struct {
		name      string
		toml      string
		start     gpio.Level // pin level after open
		afterOn   gpio.Level
		afterStop gpio.Level // pin level after Close
	}{
		{"plain", `initial = "off"` + "\non_stop = \"off\"", gpio.Low, gpio.High, gpio.Low},
		{"active low", "active_low = true\non_stop = \"off\"", gpio.High, gpio.Low, gpio.High},
		{"initial on, stop on", `initial = "on"` + "\non_stop = \"on\"", gpio.High, gpio.High, gpio.High},
		{"keep at stop", `on_stop = "keep"`, gpio.Low, gpio.High, gpio.High},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewSimBoard()
			ds, err := New(parse(t, "[[device]]\nname = \"relay1\"\ndriver = \"gpio-out\"\npin = \"GPIO17\"\n"+tt.toml+"\n"), Options{Board: b})
			if err != nil {
				t.Fatal(err)
			}
			pin := b.Pins["GPIO17"]
			if got := pin.Read(); got != tt.start {
				t.Fatalf("after open pin = %v, want %v", got, tt.start)
			}
			if tt.name == "initial on, stop on" {
				do(t, ds, "relay1", Action{Kind: TurnOff})
				do(t, ds, "relay1", Action{Kind: TurnOn})
			} else {
				if s := do(t, ds, "relay1", Action{Kind: TurnOn}); s.State != StateOn || s.Value != true {
					t.Fatalf("after turn_on: %+v", s)
				}
			}
			if got := pin.Read(); got != tt.afterOn {
				t.Fatalf("after turn_on pin = %v, want %v", got, tt.afterOn)
			}
			if err := ds.Close(); err != nil {
				t.Fatal(err)
			}
			if got := pin.Read(); got != tt.afterStop {
				t.Fatalf("after Close pin = %v, want %v (on_stop)", got, tt.afterStop)
			}
		})
	}
}

func TestSwitchActions(t *testing.T) {
	ds := open(t, parse(t, "[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n"), nil)
	steps := []struct {
		a    Action
		want string
	}{
		{Action{Kind: Toggle}, StateOn},
		{Action{Kind: Toggle}, StateOff},
		{Action{Kind: Set, Value: 1}, StateOn},
		{Action{Kind: Set, Value: 0}, StateOff},
		{Action{Kind: Pulse, Duration: time.Millisecond}, StateOff},
		{Action{Kind: Read}, StateOff},
	}
	for _, st := range steps {
		if s := do(t, ds, "s", st.a); s.State != st.want {
			t.Fatalf("%s: state %q, want %q", st.a, s.State, st.want)
		}
	}
	if _, err := ds.Do(t.Context(), "s", Action{Kind: Set, Value: 2}); !errors.Is(err, ErrBadValue) {
		t.Fatalf("set 2 on a switch: %v, want ErrBadValue", err)
	}
}

func TestPulseIsSeenOn(t *testing.T) {
	b := NewSimBoard()
	ds := open(t, parse(t, "[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\npin = \"GPIO5\"\n"), b)
	ch, cancel := ds.Subscribe(8)
	defer cancel()
	do(t, ds, "r", Action{Kind: Pulse, Duration: time.Millisecond})
	var states []string
	for range 2 {
		states = append(states, (<-ch).State)
	}
	if states[0] != StateOn || states[1] != StateOff {
		t.Fatalf("pulse published %v, want [on off]", states)
	}
	if b.Pins["GPIO5"].Read() != gpio.Low {
		t.Fatal("pin left high after pulse")
	}
}

func TestGPIOInDebounce(t *testing.T) {
	tests := []struct {
		name     string
		debounce string
		edges    []gpio.Level
		want     int // settled changes
		final    string
	}{
		{"no debounce: every edge", "0s", []gpio.Level{gpio.High, gpio.Low, gpio.High}, 3, StateOn},
		{"bounces settle to one change", "30ms", []gpio.Level{gpio.High, gpio.Low, gpio.High, gpio.Low, gpio.High}, 1, StateOn},
		{"bounce back to start: no change", "30ms", []gpio.Level{gpio.High, gpio.Low}, 0, StateOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewSimBoard()
			ds := open(t, parse(t, "[[device]]\nname = \"btn\"\ndriver = \"gpio-in\"\npin = \"GPIO4\"\npull = \"down\"\ndebounce = \""+tt.debounce+"\"\n"), b)
			in := ds.devices().local["btn"].drv.(*inputDriver)
			pin := b.Pins["GPIO4"]
			if pin.P != gpio.PullDown {
				t.Fatalf("pull = %v, want down", pin.P)
			}
			for _, l := range tt.edges {
				pin.EdgesChan <- l
			}
			// one settle per burst (debounce) or per edge (none)
			bursts := len(tt.edges)
			if tt.debounce != "0s" {
				bursts = 1
			}
			testutil.Eventually(t, "edges settled", func() bool { return in.Settles() >= bursts })
			if got := in.Changes(); got != tt.want {
				t.Fatalf("changes = %d, want %d", got, tt.want)
			}
			if s, _ := ds.Get("btn"); s.State != tt.final {
				t.Fatalf("state %q, want %q", s.State, tt.final)
			}
		})
	}
}

func TestSimButtonPress(t *testing.T) {
	ds := open(t, parse(t, "[[device]]\nname = \"b\"\ndriver = \"sim-button\"\n"), nil)
	ch, cancel := ds.Subscribe(8)
	defer cancel()
	do(t, ds, "b", Action{Kind: Pulse, Duration: time.Millisecond})
	if s := <-ch; s.State != StateOn {
		t.Fatalf("first change %q, want on", s.State)
	}
	if s := <-ch; s.State != StateOff {
		t.Fatalf("second change %q, want off", s.State)
	}
	if _, err := ds.Do(t.Context(), "b", Action{Kind: TurnOn}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("turn_on a button: %v, want ErrUnsupported", err)
	}
}

func TestPWM(t *testing.T) {
	b := NewSimBoard()
	ds := open(t, parse(t, "[[device]]\nname = \"led\"\ndriver = \"pwm\"\npin = \"GPIO18\"\nfrequency = \"2kHz\"\n"), b)
	pin := b.Pins["GPIO18"]
	s := do(t, ds, "led", Action{Kind: Set, Value: 50})
	if s.Value != 50.0 || s.Unit != "%" || s.State != StateOn {
		t.Fatalf("set 50: %+v", s)
	}
	if pin.D != gpio.DutyHalf || pin.F != 2*physic.KiloHertz {
		t.Fatalf("pin duty %v freq %v, want 50%% 2kHz", pin.D, pin.F)
	}
	do(t, ds, "led", Action{Kind: TurnOff})
	if s := do(t, ds, "led", Action{Kind: Toggle}); s.Value != 50.0 {
		t.Fatalf("toggle back on: %v, want the last duty 50", s.Value)
	}
	for _, v := range []float64{-1, 100.5} {
		if _, err := ds.Do(t.Context(), "led", Action{Kind: Set, Value: v}); !errors.Is(err, ErrBadValue) {
			t.Errorf("set %v: %v, want ErrBadValue", v, err)
		}
	}
	if _, err := ds.Do(t.Context(), "led", Action{Kind: Pulse, Duration: time.Millisecond}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("pulse a pwm: %v, want ErrUnsupported", err)
	}
	if s, _ := ds.Get("led"); s.State == StateError {
		t.Fatalf("bad input put the device in error: %+v", s)
	}
}

// A pin added by the test, as periph's own tests do.
func TestCustomFakePin(t *testing.T) {
	b := NewSimBoard()
	b.Pins["P1_11"] = &gpiotest.Pin{N: "P1_11"}
	ds := open(t, parse(t, "[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\npin = \"P1_11\"\n"), b)
	do(t, ds, "r", Action{Kind: TurnOn})
	if b.Pins["P1_11"].Read() != gpio.High {
		t.Fatal("pin not driven")
	}
}

// A caller stops waiting for a busy device when its context ends.
func TestBusyDeviceHonorsContext(t *testing.T) {
	ds := open(t, parse(t, "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\n"), nil)
	ch, cancel := ds.Subscribe(8)
	defer cancel()
	release := make(chan error, 1)
	go func() {
		_, err := ds.Do(context.Background(), "r", Action{Kind: Pulse, Duration: 300 * time.Millisecond})
		release <- err
	}()
	if s := <-ch; s.State != StateOn {
		t.Fatalf("pulse did not start: %+v", s)
	}
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer stop()
	if _, err := ds.Do(ctx, "r", Action{Kind: TurnOn}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("turn_on while pulsing: %v, want the context's deadline", err)
	}
	if err := <-release; err != nil {
		t.Fatal(err)
	}
}

// A caller that gives up during the device's latency does not put it in error.
func TestCallerGoneIsNotDeviceError(t *testing.T) {
	cfg := parse(t, "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\n")
	cfg.Sim.DeviceLatency = time.Hour
	ds := open(t, cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ds.Do(ctx, "r", Action{Kind: TurnOn}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if s, _ := ds.Get("r"); s.State != StateOff {
		t.Fatalf("state %q, want off (untouched)", s.State)
	}
}
