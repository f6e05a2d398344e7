package hal

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/spec"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"periph.io/x/conn/v3/gpio"
)

// relay is a gpio-out device on pin with on_stop = "off".
func relay(name, pin string, extra ...string) string {
	return "[[device]]\nname = \"" + name + "\"\ndriver = \"gpio-out\"\npin = \"" + pin + "\"\non_stop = \"off\"\n" + strings.Join(extra, "\n") + "\n"
}

func TestApply(t *testing.T) {
	const sw = "[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n"
	tests := []struct {
		name       string
		before     string
		after      string
		opened     []string
		closed     []string
		failed     []string
		list       []string // names of List, in order
		pinsOffLow []string // pins written low by on_stop
	}{
		{"add", sw, sw + relay("r1", "GPIO17"), []string{"r1"}, nil, nil, []string{"s", "r1"}, nil},
		{"add on another board", sw, sw + "[[device]]\nname = \"far\"\ndriver = \"sim-switch\"\nnode = \"ews3\"\n", nil, nil, nil, []string{"s", "far"}, nil},
		{"remove writes on_stop", sw + relay("r1", "GPIO17"), sw, nil, []string{"r1"}, nil, []string{"s"}, []string{"GPIO17"}},
		{"moved to another board", relay("r1", "GPIO17"), "[[device]]\nname = \"r1\"\ndriver = \"gpio-out\"\npin = \"GPIO17\"\nnode = \"ews2\"\n", nil, []string{"r1"}, nil, []string{"r1"}, []string{"GPIO17"}},
		{"change reopens", relay("r1", "GPIO17"), relay("r1", "GPIO27"), []string{"r1"}, nil, nil, []string{"r1"}, []string{"GPIO17"}},
		{"unchanged stays", sw + relay("r1", "GPIO17"), sw + relay("r1", "GPIO17"), nil, nil, nil, []string{"s", "r1"}, nil},
		{"pin freed by a removal is taken", relay("r1", "GPIO17"), relay("r2", "GPIO17"), []string{"r2"}, []string{"r1"}, nil, []string{"r2"}, nil},
		{"driver fails, the others open", sw, sw + relay("bad", "GPIO999") + relay("r1", "GPIO17"), []string{"r1"}, nil, []string{"bad"}, []string{"s", "bad", "r1"}, nil},
		{"pin taken", relay("r1", "GPIO17"), relay("r1", "GPIO17") + relay("r2", "GPIO17"), nil, nil, []string{"r2"}, []string{"r1", "r2"}, nil},
		{"interlock added reopens the group", relay("a", "GPIO17") + relay("b", "GPIO27"), relay("a", "GPIO17", `interlock = ["b"]`) + relay("b", "GPIO27"), []string{"a", "b"}, nil, nil, []string{"a", "b"}, nil},
		{"interlock with a failed one", relay("a", "GPIO17"), relay("a", "GPIO17", `interlock = ["x"]`) + relay("x", "GPIO999"), nil, nil, []string{"x", "a"}, []string{"a", "x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewSimBoard()
			ds := open(t, parse(t, tt.before), b)
			for _, p := range []string{"GPIO17", "GPIO27"} { // on, so on_stop's low shows
				for _, s := range ds.Local() {
					if s.Driver == "gpio-out" && strings.Contains(tt.before, p) {
						do(t, ds, s.Name, Action{Kind: TurnOn})
					}
				}
			}
			got, err := ds.Apply(parse(t, tt.after))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Opened, tt.opened) || !slices.Equal(got.Closed, tt.closed) {
				t.Errorf("opened %v closed %v, want %v %v", got.Opened, got.Closed, tt.opened, tt.closed)
			}
			var failed []string
			for n := range got.Failed {
				failed = append(failed, n)
			}
			slices.Sort(failed)
			want := slices.Sorted(slices.Values(tt.failed))
			if !slices.Equal(failed, want) {
				t.Errorf("failed %v, want %v", got.Failed, want)
			}
			var names []string
			for _, s := range ds.List() {
				names = append(names, s.Name)
			}
			if !slices.Equal(names, tt.list) {
				t.Errorf("List %v, want %v", names, tt.list)
			}
			for _, n := range tt.failed {
				s, _ := ds.Get(n)
				if l := ds.List()[slices.Index(names, n)]; l.State != StateError || !strings.Contains(l.Error, "not open on ews1") {
					t.Errorf("%s listed %+v, want state error", n, l)
				}
				var de *DriverError
				if _, err := ds.Do(context.Background(), n, Action{Kind: TurnOn}); !errors.As(err, &de) {
					t.Errorf("%s: Do = %v (%+v), want a DriverError", n, err, s)
				}
			}
			for _, p := range tt.pinsOffLow {
				if l := b.Pins[p].Read(); l != gpio.Low {
					t.Errorf("pin %s = %v after close, want low (on_stop = off)", p, l)
				}
			}
			for _, n := range tt.opened {
				if s := do(t, ds, n, Action{Kind: Toggle}); s.State != StateOn {
					t.Errorf("%s after toggle: %+v", n, s)
				}
			}
		})
	}
}

// An action that holds a device while Apply removes it finishes first;
// the next gets ErrClosed, and lookups by then say not found.
func TestApplyWaitsForRunningAction(t *testing.T) {
	const sw = "[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n"
	ds := open(t, parse(t, sw), nil)
	d, _ := ds.device("s")
	if err := d.mu.lock(context.Background()); err != nil { // an action under way
		t.Fatal(err)
	}
	done := make(chan Applied)
	go func() { a, _ := ds.Apply(parse(t, "")); done <- a }()
	select {
	case <-done:
		t.Fatal("Apply closed a device while an action held it")
	default:
	}
	d.mu.unlock()
	if a := <-done; !slices.Equal(a.Closed, []string{"s"}) {
		t.Fatalf("closed %v", a.Closed)
	}
	if _, _, err := d.exclusive(context.Background(), Action{Kind: TurnOn}); !errors.Is(err, ErrClosed) {
		t.Fatalf("action on the removed device: %v, want ErrClosed", err)
	}
	if _, err := ds.Get("s"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after removal: %v", err)
	}
}

// Apply after Close changes nothing.
func TestApplyAfterClose(t *testing.T) {
	ds, err := New(parse(t, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = ds.Close()
	if _, err := ds.Apply(parse(t, "[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n")); !errors.Is(err, ErrApplyClosed) {
		t.Fatalf("Apply after Close: %v", err)
	}
}

// A sensor added while Run runs is polled at its period, without a
// client asking.
func TestApplyPollsAnAddedSensor(t *testing.T) {
	ds := open(t, parse(t, ""), nil)
	cfg := parse(t, "[[device]]\nname = \"t\"\ndriver = \"sim-sensor\"\nmax_age = \"0s\"\n")
	cfg.Devices[0].Poll = spec.D(100 * time.Millisecond) // the shortest allowed
	if _, err := ds.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	first, err := ds.Get("t")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the added sensor read by the poller", func() bool {
		s, err := ds.Get("t")
		return err == nil && s.Updated.After(first.Updated)
	})
}
