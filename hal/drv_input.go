package hal

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"
)

func init() {
	Register(Driver{Name: "gpio-in", Open: openGPIOIn, Check: checkInput, Actions: []Kind{Read}, Needs: NeedsPin})
	// sim-button: pulse presses it
	Register(Driver{Name: "sim-button", Open: openSimButton, Check: checkInput, Actions: []Kind{Read, Pulse}, Simulated: true})
}

func checkInput(s DeviceSpec, _ bool, bad func(key, format string, args ...any)) {
	if _, err := parsePull(s.Pull); err != nil {
		bad("pull", "%v", err)
	}
	if _, err := parseEdge(s.Edge); err != nil {
		bad("edge", "%v", err)
	}
}

// edgePoll bounds how long the watcher waits for an edge before it checks
// whether it should stop; it is also the longest stopping Run waits for it.
const edgePoll = 100 * time.Millisecond

// maxBounces bounds how many edges one debounce window swallows.
const maxBounces = 10000

// inputDriver watches a GPIO input (button, contact) for edges, debounces
// them and reports each settled change.
type inputDriver struct {
	pin       gpio.PinIO
	activeLow bool
	debounce  time.Duration
	observe   func(Reading)
	log       *slog.Logger
	press     func() error // sim-button: fake a press; nil elsewhere

	mu      sync.Mutex
	on      bool
	changes int // settled changes seen, for tests and metrics
	settles int // debounce windows closed (edge bursts handled)

}

func (in *inputDriver) Do(ctx context.Context, a Action) (Reading, error) {
	switch a.Kind {
	case Read:
		in.mu.Lock()
		in.on = in.level()
		on := in.on
		in.mu.Unlock()
		return onOff(on), nil
	case Pulse:
		if in.press != nil {
			if err := in.press(); err != nil {
				return Reading{}, err
			}
			in.mu.Lock()
			on := in.on
			in.mu.Unlock()
			return onOff(on), nil
		}
	}
	return Reading{}, unsupported(a)
}

func (in *inputDriver) level() bool { return bool(in.pin.Read()) != in.activeLow }

// Changes returns how many settled changes the watcher has reported.
func (in *inputDriver) Changes() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.changes
}

// Settles returns how many edge bursts the watcher has handled.
func (in *inputDriver) Settles() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.settles
}

var _ Runner = (*inputDriver)(nil)

// Run watches the pin for edges until ctx ends (Devices.Run runs it).
func (in *inputDriver) Run(ctx context.Context) error {
	for {
		if ctx.Err() != nil {
			return nil
		}
		if !in.waitEdge() {
			continue
		}
		in.settle()
	}
}

// waitEdge waits one poll period for an edge, recovering a panicking pin.
func (in *inputDriver) waitEdge() (got bool) {
	defer func() {
		if v := recover(); v != nil {
			in.log.Error("hal: input watcher panicked", "pin", in.pin.Name(), "panic", v)
			got = false
		}
	}()
	return in.pin.WaitForEdge(edgePoll)
}

// settle swallows edges until the line is quiet for the debounce time, then
// reports the level if it changed.
func (in *inputDriver) settle() {
	if in.debounce > 0 {
		for i := 0; i < maxBounces && in.pin.WaitForEdge(in.debounce); i++ {
		}
	}
	on := in.level()
	in.mu.Lock()
	changed := on != in.on
	in.settles++
	if changed {
		in.on = on
		in.changes++
	}
	in.mu.Unlock()
	if changed {
		in.observe(onOff(on))
	}
}

// Close releases the pin; Devices.Close has ended Run first.
func (in *inputDriver) Close() error { return in.pin.Halt() }

func parsePull(s string) (gpio.Pull, error) {
	switch s {
	case "", "none":
		return gpio.Float, nil
	case "up":
		return gpio.PullUp, nil
	case "down":
		return gpio.PullDown, nil
	}
	return gpio.PullNoChange, fmt.Errorf("%q: want up, down or none", s)
}

func parseEdge(s string) (gpio.Edge, error) {
	switch s {
	case "", "both":
		return gpio.BothEdges, nil
	case "rising":
		return gpio.RisingEdge, nil
	case "falling":
		return gpio.FallingEdge, nil
	}
	return gpio.NoEdge, fmt.Errorf("%q: want rising, falling or both", s)
}

func openGPIOIn(e *Env) (Instance, Reading, error) {
	pin, err := e.Board.Pin(e.Spec.Pin)
	if err != nil {
		return nil, Reading{}, e.Errorf("pin", "pin %q: %v", e.Spec.Pin, err)
	}
	return startInput(e, pin, nil)
}

// sim-button is gpio-in on a pin of its own; pulse presses it.
func openSimButton(e *Env) (Instance, Reading, error) {
	p := NewSimPin(e.Spec.Name, -1)
	press := func() error {
		// a press is a pulse of the active level; the watcher sees both edges
		act, rest := gpio.Level(!e.Spec.ActiveLow), gpio.Level(e.Spec.ActiveLow)
		for _, l := range []gpio.Level{act, rest} {
			select {
			case p.EdgesChan <- l:
			default:
				return fmt.Errorf("button busy")
			}
		}
		return nil
	}
	return startInput(e, p, press)
}

func startInput(e *Env, pin gpio.PinIO, press func() error) (Instance, Reading, error) {
	pull, err := parsePull(e.Spec.Pull)
	if err != nil {
		return nil, Reading{}, e.Errorf("pull", "%v", err)
	}
	edge, err := parseEdge(e.Spec.Edge)
	if err != nil {
		return nil, Reading{}, e.Errorf("edge", "%v", err)
	}
	if err := pin.In(pull, edge); err != nil {
		return nil, Reading{}, e.Errorf("pin", "pin %q: set input: %v", e.Spec.Pin, err)
	}
	in := &inputDriver{
		pin: pin, activeLow: e.Spec.ActiveLow, debounce: e.Spec.Debounce.Duration,
		observe: e.Observe, log: e.Log, press: press,
	}
	in.on = in.level()
	return in, onOff(in.on), nil
}
