package hal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/internal/reqtrace"
	"github.com/ews-firmware/ews/internal/sandbox"
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
	// Programs is the box the command devices' programs run in (node
	// gives the CGI programs' user and limits); nil: sandbox.Own(), as
	// ews itself with the default limits and a clean environment.
	Programs *sandbox.Box
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
	programs  *sandbox.Box // where command devices run their programs

	set     atomic.Pointer[deviceSet] // the devices now (set.go); Apply swaps it
	latency time.Duration             // [sim] device_latency, for the devices Apply opens
	applyMu sync.Mutex                // one Apply at a time, never with Close
	reload  chan struct{}             // Apply changed the set: Run re-reads its polls

	subs      subscribers
	period    time.Duration // Options.Poll
	runMu     sync.Mutex    // guards the four below and each Device's watch
	closed    bool
	stopRun   context.CancelFunc // ends a Run in progress
	runDone   chan struct{}      // closed when that Run has returned
	runCtx    context.Context    // that Run's context: input watchers run under it
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
		metrics: newMetrics(opts.Registerer), period: opts.Poll, reload: make(chan struct{}, 1),
		programs: opts.Programs,
	}
	if ds.programs == nil {
		ds.programs = sandbox.Own()
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
	if cfg.Sim != nil {
		ds.latency = cfg.Sim.DeviceLatency
	}

	var errs SpecErrors
	fail := func(err error) { errs = append(errs, asSpecError(err)) }
	set := newDeviceSet()
	taken := newResources()
	for i, spec := range cfg.Devices {
		set.order = append(set.order, spec.Name)
		if !wiredHere(spec, ds.self) {
			set.remote[spec.Name] = ds.remoteSnapshot(spec)
			continue
		}
		d, err := ds.open(spec, i, taken)
		if err != nil {
			fail(err)
			continue
		}
		set.local[spec.Name] = d
	}
	if len(errs) == 0 {
		ds.interlock(set, cfg.Devices, nil, fail)
	}
	if len(errs) > 0 {
		closeAll(set)
		if ds.ownsBoard {
			_ = ds.board.Close()
		}
		return nil, errs
	}
	ds.set.Store(set)
	return ds, nil
}

func asSpecError(err error) *SpecError {
	var se *SpecError
	if !errors.As(err, &se) {
		se = &SpecError{Index: -1, Err: err}
	}
	return se
}

func (ds *Devices) remoteSnapshot(spec DeviceSpec) Snapshot {
	return Snapshot{Name: spec.Name, Driver: spec.Driver, Node: nodeOf(spec, ds.self), State: StateRemote, Unit: spec.Units}
}

// resources are the pins and bus addresses the open devices take.
type resources struct{ pins, addrs map[string]string } // pin or bus/address -> device

func newResources() resources {
	return resources{pins: map[string]string{}, addrs: map[string]string{}}
}

// open checks spec (the i-th device of the config) and opens it on this
// board, taking its pin and bus address in taken; the error is a
// *SpecError or SpecErrors naming the device.
func (ds *Devices) open(spec DeviceSpec, i int, taken resources) (*Device, error) {
	var errs SpecErrors
	bad := badFunc(&errs, i, spec)
	drv := checkSpec(spec, true, bad)
	if len(errs) > 0 {
		return nil, errs
	}
	if spec.Pin != "" && !drv.Simulated {
		keys := pinKeys(spec)
		if other, used := firstUsed(taken.pins, keys); used {
			bad("pin", "pin %s is already used by device %q", spec.Pin, other)
			return nil, errs
		}
		for _, k := range keys {
			taken.pins[k] = spec.Name
		}
	}
	if drv.Needs == NeedsBus {
		k := spec.Bus + "/" + spec.Address
		if other, used := taken.addrs[k]; used {
			bad("address", "address %s on bus %q is already used by device %q", spec.Address, spec.Bus, other)
			return nil, errs
		}
		taken.addrs[k] = spec.Name
	}
	node := nodeOf(spec, ds.self)
	d := &Device{name: spec.Name, driverName: spec.Driver, driver: drv, node: node, ds: ds, spec: spec, mu: newGate(Concurrency(spec)), min: spec.Min, max: spec.Max, poll: spec.Poll.Duration,
		restore: RestoreMode(spec, drv) == RestoreLast}
	d.reads.maxAge = -1
	if spec.MaxAge != nil {
		d.reads.maxAge = spec.MaxAge.Duration
	}
	simulated := ds.board.Kind() == BoardSim || drv.Simulated
	if simulated {
		d.latency = ds.latency
	}
	d.snap = Snapshot{Name: spec.Name, Driver: spec.Driver, Node: node, State: StateUnknown, Unit: spec.Units, Simulated: simulated}
	env := &Env{Spec: spec, index: i, Board: ds.board, Log: ds.log.With("device", spec.Name), Observe: d.observe, Programs: ds.programs}
	inst, r, err := safeOpen(drv.Open, env)
	if err != nil {
		taken.release(spec.Name)
		return nil, err
	}
	d.drv = inst
	d.snap.State, d.snap.Value, d.snap.Values, d.snap.Updated = r.State, r.Value, r.Values, ds.now()
	if r.Unit != "" {
		d.snap.Unit = r.Unit
	}
	return d, nil
}

// release frees what device name took.
func (r resources) release(name string) {
	for _, m := range []map[string]string{r.pins, r.addrs} {
		for k, v := range m {
			if v == name {
				delete(m, k)
			}
		}
	}
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
// each linked group one lock, so no two of them are ever on at once. only,
// when set, limits it to those devices (the ones Apply opened: a group is
// reopened whole, so no open device's lock changes under it).
func (ds *Devices) interlock(set *deviceSet, specs []DeviceSpec, only map[string]bool, fail func(err error)) {
	for i, spec := range specs {
		d, ok := set.local[spec.Name]
		if !ok || len(spec.Interlock) == 0 || (only != nil && !only[spec.Name]) {
			continue
		}
		bad := func(format string, args ...any) {
			fail(&SpecError{Index: i, Device: spec.Name, Key: "interlock", Err: fmt.Errorf(format, args...)})
		}
		for _, other := range spec.Interlock {
			p, ok := set.local[other]
			switch {
			case other == spec.Name:
				bad("cannot interlock with itself")
			case !ok:
				if r, remote := set.remote[other]; remote {
					bad("interlock partner %q is wired to board %q; both must be on one board", other, r.Node)
				} else if _, failed := set.failed[other]; failed {
					bad("interlock partner %q did not open", other)
				} else {
					bad("interlock names unknown device %q", other)
				}
			case !d.driver.Output || !p.driver.Output:
				bad("interlock needs two outputs, %q is %s", other, p.driverName)
			default:
				d.partners = appendOnce(d.partners, p)
				p.partners = appendOnce(p.partners, d)
				mergeLocks(set, d, p)
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
func mergeLocks(set *deviceSet, a, b *Device) {
	if a.mu == b.mu {
		return
	}
	if cap(a.mu) > 1 { // a group runs one operation at a time
		one := newGate(1)
		for _, d := range set.local {
			if d.mu == a.mu {
				d.mu = one
			}
		}
	}
	old := b.mu
	for _, d := range set.local {
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
	if a.Kind == Read {
		return d.read(ctx) // shared with concurrent reads, or a young reading
	}
	if err := ds.wait(ctx); err != nil {
		return d.Snapshot(), fmt.Errorf("hal: device %q: restoring outputs: %w", name, err)
	}
	s, _, err := d.exclusive(ctx, a)
	return s, err
}

// exclusive waits for a place on the device (ctx bounds the wait) and runs
// a there; started says a reached the device.
func (d *Device) exclusive(ctx context.Context, a Action) (s Snapshot, started bool, err error) {
	if err := d.mu.lock(ctx); err != nil {
		return d.Snapshot(), false, fmt.Errorf("hal: device %q: busy: %w", d.name, err)
	}
	defer d.mu.unlock()
	reqtrace.Mark(ctx, reqtrace.Lock)
	defer reqtrace.Mark(ctx, reqtrace.Done)
	if d.closed {
		return d.Snapshot(), true, fmt.Errorf("hal: device %q: %w", d.name, ErrClosed)
	}
	// once started, an action runs to its end: a relay pulse is not cut
	// short because the client went away
	ctx = context.WithoutCancel(ctx)
	if len(d.partners) > 0 && d.turnsOn(a) {
		for _, p := range d.partners {
			if _, err := p.run(ctx, Action{Kind: TurnOff}, nil); err != nil {
				return d.Snapshot(), true, &DriverError{Device: d.name, Err: fmt.Errorf("interlock: turn off %q first: %w", p.name, err)}
			}
		}
	}
	s, err = d.run(ctx, a, nil)
	return s, true, err
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
	set := ds.devices()
	if d, ok := set.local[name]; ok {
		return d, nil
	}
	if r, ok := set.remote[name]; ok {
		return nil, &RemoteError{Device: name, Node: r.Node}
	}
	if f, ok := set.failed[name]; ok {
		return nil, &DriverError{Device: name, Err: errors.New(f.Error)}
	}
	return nil, fmt.Errorf("hal: device %q: %w", name, ErrNotFound)
}

// List returns every device of the config in config order; those wired to
// another board have state "remote" and their board in node; those whose
// driver did not open here have state "error" and the reason.
func (ds *Devices) List() []Snapshot {
	set := ds.devices()
	out := make([]Snapshot, 0, len(set.order))
	for _, name := range set.order {
		out = append(out, set.snapshot(name))
	}
	return out
}

// snapshot is the named device's state as List shows it.
func (s *deviceSet) snapshot(name string) Snapshot {
	if d, ok := s.local[name]; ok {
		return d.Snapshot()
	}
	if f, ok := s.failed[name]; ok {
		return f
	}
	return s.remote[name]
}

// Local returns only the devices this board drives (its own and the
// node = "any" ones), in config order: what other boards mirror. A device
// whose driver did not open here is among them, in state "error": the
// other boards show why.
func (ds *Devices) Local() []Snapshot {
	set := ds.devices()
	out := make([]Snapshot, 0, len(set.local)+len(set.failed))
	for _, name := range set.order {
		if _, remote := set.remote[name]; !remote {
			out = append(out, set.snapshot(name))
		}
	}
	return out
}

// IsLocal reports whether this board drives the named device.
func (ds *Devices) IsLocal(name string) bool {
	_, ok := ds.devices().local[name]
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
		ds.applyMu.Lock() // no Apply under way, and none after
		defer ds.applyMu.Unlock()
		ds.runMu.Lock()
		ds.closed = true
		stop, done := ds.stopRun, ds.runDone
		ds.runMu.Unlock()
		if stop != nil {
			stop()
			<-done
		}
		ds.closeErr = closeAll(ds.devices())
		ds.subs.close()
		if ds.ownsBoard {
			ds.closeErr = errors.Join(ds.closeErr, ds.board.Close())
		}
	})
	return ds.closeErr
}

// closeAll closes every open device of set, in config order.
func closeAll(set *deviceSet) error {
	var errs []error
	for _, name := range set.order {
		if d, ok := set.local[name]; ok {
			errs = append(errs, d.close())
		}
	}
	return errors.Join(errs...)
}

// close waits for the device's running operations, then closes its driver
// (which writes on_stop). Later operations get ErrClosed.
func (d *Device) close() error {
	d.mu.lockAll()
	defer d.mu.unlockAll()
	if d.closed {
		return nil
	}
	d.closed = true
	if err := d.drv.Close(); err != nil {
		return fmt.Errorf("hal: close device %q: %w", d.name, err)
	}
	return nil
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
