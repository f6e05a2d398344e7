package hal

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Driver is one kind of device. Each drv_*.go registers its drivers from an
// init function, so adding a driver is one file (plus its test): New, the
// config check, the poller and the interlock rules all read this record.
type Driver struct {
	// Name is the value of a device's driver key ("gpio-out").
	Name string
	// Open opens a device on e.Board and returns it with its first reading.
	// Keys have passed Check (and Needs) before Open runs. Required.
	Open func(e *Env) (Instance, Reading, error)
	// Check reports, without hardware, what is wrong with the driver's own
	// keys of s by calling bad once per problem. local says s is wired to the
	// board that checks it (so a program it runs can be looked up here).
	// nil: the driver has no keys beyond Needs.
	Check func(s DeviceSpec, local bool, bad func(key, format string, args ...any))
	// Actions are the kinds the driver accepts; Do refuses any other with
	// ErrUnsupported before the driver sees it.
	Actions []Kind
	// Output: the device turns off (TurnOff), so it may be interlocked.
	Output bool
	// Restores: an output whose whole state is on/off or a value that a
	// turn_on, turn_off or set writes back, so the cluster may restore it
	// after a restart (restore = "last", the default for these drivers).
	Restores bool
	// Polled: a sensor whose value changes on its own and whose read has no
	// side effect; Options.Poll reads it periodically.
	Polled bool
	// Needs is the board resource the device must name.
	Needs Needs
	// Simulated: the device needs no board resource (a sim-* driver runs on
	// a pin of its own); [sim] device_latency applies to it on any board.
	Simulated bool
	// Concurrency is how many operations one device of the driver runs at
	// once (a network device that takes parallel requests). Default 0 = 1:
	// one at a time, which every built-in driver needs. The master's
	// scheduler holds the requests beyond it in its queue (docs/NOTES.md
	// "Device-aware queueing").
	Concurrency int
}

// Concurrency is the operations s's device runs at once: its driver's
// Concurrency, 1 for an unknown driver or an interlocked output (an
// interlock group shares one lock).
func Concurrency(s DeviceSpec) int {
	d := lookup(s.Driver)
	if d == nil || d.Concurrency <= 1 || len(s.Interlock) > 0 {
		return 1
	}
	return d.Concurrency
}

// Needs is the board resource a driver's device must name.
type Needs uint8

// What a device must name.
const (
	NeedsNothing Needs = iota
	NeedsPin           // DeviceSpec.Pin; no two devices of a board share one
	NeedsBus           // DeviceSpec.Bus (I²C, 1-wire); bus and address unique
)

// Instance is one opened device. The Device around it serialises calls, so
// an Instance needs no lock of its own except for state its own goroutines
// touch.
type Instance interface {
	// Do performs a (one of the driver's Actions) and returns the reading
	// afterwards. An error wrapping ErrBadValue or ErrUnsupported is the
	// caller's fault; any other is the hardware's.
	Do(ctx context.Context, a Action) (Reading, error)
	// Close writes the shutdown state and releases the hardware (a Runner's
	// Run has ended first).
	Close() error
}

// Runner may be implemented by an Instance with work of its own, such as
// an input's edge watcher: Devices.Run runs it until its context ends
// (Open starts no goroutine). Run returns nil then.
type Runner interface {
	Run(ctx context.Context) error
}

var registry struct {
	sync.RWMutex
	drivers map[string]*Driver
}

// Register adds d to the drivers New and CheckSpecs know. It panics, like
// database/sql.Register, when d has no name or Open, or its name is taken:
// both are programming errors found at start.
func Register(d Driver) {
	if d.Name == "" || d.Open == nil {
		panic(fmt.Sprintf("hal: Register driver %q: needs a Name and Open", d.Name))
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.drivers == nil {
		registry.drivers = map[string]*Driver{}
	}
	if _, dup := registry.drivers[d.Name]; dup {
		panic(fmt.Sprintf("hal: Register driver %q twice", d.Name))
	}
	d.Actions = slices.Clone(d.Actions)
	registry.drivers[d.Name] = &d
}

// LookupDriver returns the driver registered as name.
func LookupDriver(name string) (Driver, bool) {
	registry.RLock()
	defer registry.RUnlock()
	d, ok := registry.drivers[name]
	if !ok {
		return Driver{}, false
	}
	return *d, true
}

// DriverNames lists the registered drivers, sorted by name.
func DriverNames() []string {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Sorted(maps.Keys(registry.drivers))
}

func lookup(name string) *Driver {
	registry.RLock()
	defer registry.RUnlock()
	return registry.drivers[name]
}

// Accepts reports whether the driver takes action kind k.
func (d *Driver) Accepts(k Kind) bool { return slices.Contains(d.Actions, k) }
