package hal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
)

// Options are what New needs besides the Config.
type Options struct {
	// Board to open devices on; nil opens the one Config asks for with
	// OpenBoard (an error when it cannot). Devices.Close
	// closes a board it opened itself, never one passed in.
	Board Board
	// Registerer receives the per-device metrics; nil registers none.
	Registerer *promx.Registry
	Logger     *slog.Logger
	// Now stamps snapshots; nil is time.Now.
	Now func() time.Time
	// Poll, when positive, reads every device of a Polled driver (the
	// sensors) this often, so state changes flow without requests; a
	// device's own DeviceSpec.Poll overrides it.
	Poll time.Duration
}

// Devices is every device of the boot config as this board sees it: the
// ones wired to it (node = this board or "any"), opened and running, and the
// ones wired elsewhere, known by name and board so callers can be told where
// they live. Safe for concurrent use.
type Devices struct {
	self      string
	board     Board
	ownsBoard bool
	log       *slog.Logger
	now       func() time.Time
	metrics   *metrics

	order  []string           // every device name, config order
	local  map[string]*Device // wired to this board
	remote map[string]Snapshot

	subs      subscribers
	period    time.Duration // Options.Poll
	runMu     sync.Mutex    // guards the three below
	closed    bool
	stopRun   context.CancelFunc // ends a Run in progress
	runDone   chan struct{}      // closed when that Run has returned
	holdMu    sync.Mutex
	held      chan struct{} // Hold: closed by Release; nil: not held
	seq       seqClock      // Seq of the commands on restorable outputs
	closeOnce sync.Once
	closeErr  error
}

// New opens the devices of cfg that are wired to this board. It fails with
// SpecErrors, naming each device, key and reason, when a spec is invalid
// (see CheckSpecs), a pin does not exist or is used twice, a bus cannot be
// opened or an interlock is impossible; devices already opened are closed
// again.
func New(cfg Config, opts Options) (*Devices, error) {
	ds := &Devices{
		self: cfg.Node, board: opts.Board, log: opts.Logger, now: opts.Now,
		local: map[string]*Device{}, remote: map[string]Snapshot{},
		metrics: newMetrics(opts.Registerer), period: opts.Poll,
	}
	if ds.log == nil {
		ds.log = slog.Default()
	}
	if ds.now == nil {
		ds.now = time.Now
	}
	if ds.board == nil {
		b, err := OpenBoard(cfg)
		if err != nil {
			return nil, err
		}
		ds.board, ds.ownsBoard = b, true
	}
	ds.log.Debug("hal: board", "kind", ds.board.Kind())
	var latency time.Duration
	if cfg.Sim != nil {
		latency = cfg.Sim.DeviceLatency
	}

	var errs SpecErrors
	fail := func(err error) {
		var se *SpecError
		if !errors.As(err, &se) {
			se = &SpecError{Index: -1, Err: err}
		}
		errs = append(errs, se)
	}
	pins := map[string]string{}  // pin -> device
	addrs := map[string]string{} // bus/address -> device
	for i, spec := range cfg.Devices {
		ds.order = append(ds.order, spec.Name)
		node := spec.Node
		if node == "" {
			node = ds.self
		}
		if !spec.local(ds.self) {
			ds.remote[spec.Name] = Snapshot{Name: spec.Name, Driver: spec.Driver, Node: node, State: StateRemote, Unit: spec.Units}
			continue
		}
		n := len(errs)
		drv := checkSpec(spec, true, badFunc(&errs, i, spec))
		if len(errs) > n {
			continue
		}
		bad := badFunc(&errs, i, spec)
		if spec.Pin != "" && !drv.Simulated {
			keys := pinKeys(spec)
			if other, used := firstUsed(pins, keys); used {
				bad("pin", "pin %s is already used by device %q", spec.Pin, other)
				continue
			}
			for _, k := range keys {
				pins[k] = spec.Name
			}
		}
		if drv.Needs == NeedsBus {
			k := spec.Bus + "/" + spec.Address
			if other, used := addrs[k]; used {
				bad("address", "address %s on bus %q is already used by device %q", spec.Address, spec.Bus, other)
				continue
			}
			addrs[k] = spec.Name
		}
		d := &Device{name: spec.Name, driverName: spec.Driver, driver: drv, node: node, ds: ds, mu: newGate(), min: spec.Min, max: spec.Max, poll: spec.Poll,
			restore: RestoreMode(spec, drv) == RestoreLast}
		simulated := ds.board.Kind() == BoardSim || drv.Simulated
		if simulated {
			d.latency = latency
		}
		d.snap = Snapshot{Name: spec.Name, Driver: spec.Driver, Node: node, State: StateUnknown, Unit: spec.Units, Simulated: simulated}
		env := &Env{Spec: spec, index: i, Board: ds.board, Log: ds.log.With("device", spec.Name), Observe: d.observe}
		inst, r, err := safeOpen(drv.Open, env)
		if err != nil {
			fail(err)
			continue
		}
		d.drv = inst
		d.snap.State, d.snap.Value, d.snap.Values, d.snap.Updated = r.State, r.Value, r.Values, ds.now()
		if r.Unit != "" {
			d.snap.Unit = r.Unit
		}
		ds.local[spec.Name] = d
	}
	if len(errs) == 0 {
		ds.interlock(cfg.Devices, fail)
	}
	if len(errs) > 0 {
		ds.closeDevices()
		if ds.ownsBoard {
			_ = ds.board.Close()
		}
		return nil, errs
	}
	return ds, nil
}

// pinKeys are the board resources a device's pin takes: the pin, and for
// a pwm device its PWM channel too, so GPIO18 and PWM0 (one channel on a
// Pi) cannot both be opened.
func pinKeys(s DeviceSpec) []string {
	keys := []string{s.Pin}
	if c, ok := parsePWMPin(s.Pin); ok && s.Driver == "pwm" {
		keys = append(keys, c.String())
	}
	return keys
}

func firstUsed(pins map[string]string, keys []string) (string, bool) {
	for _, k := range keys {
		if other, used := pins[k]; used {
			return other, true
		}
	}
	return "", false
}

func safeOpen(open func(*Env) (Instance, Reading, error), e *Env) (inst Instance, r Reading, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = e.Errorf("driver", "driver panicked while opening: %v", v)
		}
	}()
	return open(e)
}

// interlock links the devices of each interlock = [...] both ways and gives
// each linked group one lock, so no two of them are ever on at once.
func (ds *Devices) interlock(specs []DeviceSpec, fail func(err error)) {
	for i, spec := range specs {
		d, ok := ds.local[spec.Name]
		if !ok || len(spec.Interlock) == 0 {
			continue
		}
		bad := func(format string, args ...any) {
			fail(&SpecError{Index: i, Device: spec.Name, Key: "interlock", Err: fmt.Errorf(format, args...)})
		}
		for _, other := range spec.Interlock {
			p, ok := ds.local[other]
			switch {
			case other == spec.Name:
				bad("cannot interlock with itself")
			case !ok:
				if r, remote := ds.remote[other]; remote {
					bad("interlock partner %q is wired to board %q; both must be on one board", other, r.Node)
				} else {
					bad("interlock names unknown device %q", other)
				}
			case !d.driver.Output || !p.driver.Output:
				bad("interlock needs two outputs, %q is %s", other, p.driverName)
			default:
				d.partners = appendOnce(d.partners, p)
				p.partners = appendOnce(p.partners, d)
				ds.mergeLocks(d, p)
				if d.Snapshot().State == StateOn && p.Snapshot().State == StateOn {
					bad("interlocked with %q but both start on", other)
				}
			}
		}
	}
}

func appendOnce(list []*Device, d *Device) []*Device {
	for _, x := range list {
		if x == d {
			return list
		}
	}
	return append(list, d)
}

// mergeLocks makes every device holding a's or b's lock share one lock.
func (ds *Devices) mergeLocks(a, b *Device) {
	if a.mu == b.mu {
		return
	}
	old := b.mu
	for _, d := range ds.local {
		if d.mu == old {
			d.mu = a.mu
		}
	}
}

// Do runs action a on the device called name and returns its state after.
// ctx bounds the wait for the device (another operation may hold it); once
// started, the action runs to its end whatever happens to ctx.
// Errors: ErrNotFound, *RemoteError (wired to another board), ErrUnsupported,
// ErrBadValue, ErrClosed, ctx's error while another operation holds the
// device (each wrapped in a message naming the device), or a
// *DriverError when the hardware failed; the device is then in state
// "error" until an operation succeeds.
func (ds *Devices) Do(ctx context.Context, name string, a Action) (Snapshot, error) {
	d, err := ds.device(name)
	if err != nil {
		return Snapshot{}, err
	}
	if !d.driver.Accepts(a.Kind) {
		return d.Snapshot(), fmt.Errorf("hal: device %q (%s): %w: %s", name, d.driverName, ErrUnsupported, a.Kind)
	}
	if a.Kind == Set && ((d.min != nil && a.Value < *d.min) || (d.max != nil && a.Value > *d.max)) {
		return d.Snapshot(), fmt.Errorf("hal: device %q: %w: %v out of range %s", name, ErrBadValue, a.Value, span(d.min, d.max))
	}
	if err := ds.wait(ctx); err != nil {
		return d.Snapshot(), fmt.Errorf("hal: device %q: restoring outputs: %w", name, err)
	}
	if err := d.mu.lock(ctx); err != nil {
		return d.Snapshot(), fmt.Errorf("hal: device %q: busy: %w", name, err)
	}
	defer d.mu.unlock()
	if d.closed {
		return d.Snapshot(), fmt.Errorf("hal: device %q: %w", name, ErrClosed)
	}
	// once started, an action runs to its end: a relay pulse is not cut
	// short because the client went away
	ctx = context.WithoutCancel(ctx)
	if len(d.partners) > 0 && d.turnsOn(a) {
		for _, p := range d.partners {
			if _, err := p.run(ctx, Action{Kind: TurnOff}, nil); err != nil {
				return d.Snapshot(), &DriverError{Device: name, Err: fmt.Errorf("interlock: turn off %q first: %w", p.name, err)}
			}
		}
	}
	return d.run(ctx, a, nil)
}

// Get returns the state of the device called name; a device wired to another
// board gives a *RemoteError.
func (ds *Devices) Get(name string) (Snapshot, error) {
	d, err := ds.device(name)
	if err != nil {
		return Snapshot{}, err
	}
	return d.Snapshot(), nil
}

func (ds *Devices) device(name string) (*Device, error) {
	if d, ok := ds.local[name]; ok {
		return d, nil
	}
	if r, ok := ds.remote[name]; ok {
		return nil, &RemoteError{Device: name, Node: r.Node}
	}
	return nil, fmt.Errorf("hal: device %q: %w", name, ErrNotFound)
}

// List returns every device of the config in config order; those wired to
// another board have state "remote" and their board in node.
func (ds *Devices) List() []Snapshot {
	out := make([]Snapshot, 0, len(ds.order))
	for _, name := range ds.order {
		if d, ok := ds.local[name]; ok {
			out = append(out, d.Snapshot())
		} else {
			out = append(out, ds.remote[name])
		}
	}
	return out
}

// Local returns only the devices this board drives (its own and the
// node = "any" ones), in config order: what other boards mirror.
func (ds *Devices) Local() []Snapshot {
	out := make([]Snapshot, 0, len(ds.local))
	for _, name := range ds.order {
		if d, ok := ds.local[name]; ok {
			out = append(out, d.Snapshot())
		}
	}
	return out
}

// IsLocal reports whether this board drives the named device.
func (ds *Devices) IsLocal(name string) bool {
	_, ok := ds.local[name]
	return ok
}

// Board returns the board the devices run on.
func (ds *Devices) Board() Board { return ds.board }

// Self returns this board's name.
func (ds *Devices) Self() string { return ds.self }

func (ds *Devices) changed(s Snapshot) {
	if n := ds.subs.publish(s); n > 0 {
		ds.log.Warn("hal: dropped slow state subscribers", "count", n)
	}
}

// Close ends Run, writes each output's on_stop state, stops the input watchers, ends
// every subscription and closes a board New opened. It waits for running
// operations to finish; later calls return the first result.
func (ds *Devices) Close() error {
	ds.closeOnce.Do(func() {
		ds.runMu.Lock()
		ds.closed = true
		stop, done := ds.stopRun, ds.runDone
		ds.runMu.Unlock()
		if stop != nil {
			stop()
			<-done
		}
		ds.closeErr = ds.closeDevices()
		ds.subs.close()
		if ds.ownsBoard {
			ds.closeErr = errors.Join(ds.closeErr, ds.board.Close())
		}
	})
	return ds.closeErr
}

func (ds *Devices) closeDevices() error {
	var errs []error
	for _, name := range ds.order {
		d, ok := ds.local[name]
		if !ok {
			continue
		}
		_ = d.mu.lock(context.Background())
		if !d.closed {
			d.closed = true
			if err := d.drv.Close(); err != nil {
				errs = append(errs, fmt.Errorf("hal: close device %q: %w", name, err))
			}
		}
		d.mu.unlock()
	}
	return errors.Join(errs...)
}

func span(lo, hi *float64) string {
	f := func(p *float64, def string) string {
		if p == nil {
			return def
		}
		return fmt.Sprint(*p)
	}
	return f(lo, "-inf") + " … " + f(hi, "+inf")
}
