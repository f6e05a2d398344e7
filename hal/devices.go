package hal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ews-firmware/ews/internal/config"
)

// Options are what New needs besides the config.
type Options struct {
	// Board to open devices on; nil picks one with OpenBoard. Devices.Close
	// closes a board it opened itself, never one passed in.
	Board Board
	// Registerer receives the per-device metrics; nil registers none.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	// Now stamps snapshots; nil is time.Now.
	Now func() time.Time
	// Poll, when positive, reads every sensor (bmxx80, ds18b20, sim-sensor,
	// modbus-register) this often, so state changes flow without requests.
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
	stopPoll  context.CancelFunc
	pollDone  chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// New opens the devices of cfg that are wired to this board. It fails, naming
// each device, pin and reason (file:line when cfg came from a file), when a
// pin does not exist or is used twice, a bus cannot be opened or an interlock
// is impossible; devices already opened are closed again.
func New(cfg *config.Config, opts Options) (*Devices, error) {
	ds := &Devices{
		self: cfg.Node.Name, board: opts.Board, log: opts.Logger, now: opts.Now,
		local: map[string]*Device{}, remote: map[string]Snapshot{},
		metrics: newMetrics(opts.Registerer),
	}
	if ds.log == nil {
		ds.log = slog.Default()
	}
	if ds.now == nil {
		ds.now = time.Now
	}
	if ds.board == nil {
		ds.board, ds.ownsBoard = OpenBoard(cfg, ds.log), true
	}
	var latency time.Duration
	if cfg.Sim != nil {
		latency = cfg.Sim.DeviceLatency.Duration
	}

	var errs config.Errors
	fail := func(err error) {
		var ce *config.Error
		if errors.As(err, &ce) {
			errs = append(errs, ce)
		} else {
			errs = append(errs, &config.Error{File: cfg.Path, Msg: err.Error()})
		}
	}
	pins := map[string]string{}  // pin -> device
	addrs := map[string]string{} // bus/address -> device
	for i, dc := range cfg.Devices {
		ds.order = append(ds.order, dc.Name)
		node := dc.Node
		if node == "" {
			node = ds.self
		}
		if node != ds.self && node != "any" {
			ds.remote[dc.Name] = Snapshot{Name: dc.Name, Driver: dc.Driver, Node: node, State: StateRemote, Unit: dc.Units}
			continue
		}
		key := fmt.Sprintf("device[%d]", i)
		if dc.Pin != "" && !isSim(dc.Driver) {
			if other, used := pins[dc.Pin]; used {
				fail(cfg.Errorf(key+".pin", "device %q: pin %s is already used by device %q", dc.Name, dc.Pin, other))
				continue
			}
			pins[dc.Pin] = dc.Name
		}
		if dc.Driver == "bmxx80" || dc.Driver == "ds18b20" {
			k := dc.Bus + "/" + dc.Address
			if other, used := addrs[k]; used {
				fail(cfg.Errorf(key+".address", "device %q: address %s on bus %q is already used by device %q", dc.Name, dc.Address, dc.Bus, other))
				continue
			}
			addrs[k] = dc.Name
		}
		open, ok := openers[dc.Driver]
		if !ok {
			fail(cfg.Errorf(key+".driver", "device %q: unknown driver %q", dc.Name, dc.Driver))
			continue
		}
		d := &Device{name: dc.Name, driverName: dc.Driver, node: node, ds: ds, mu: newGate(), min: dc.Min, max: dc.Max}
		if ds.board.Kind() == "sim" || isSim(dc.Driver) {
			d.latency = latency
		}
		d.snap = Snapshot{Name: dc.Name, Driver: dc.Driver, Node: node, State: StateUnknown, Unit: dc.Units}
		env := &openEnv{cfg: dc, key: key, root: cfg, board: ds.board, log: ds.log.With("device", dc.Name), observe: d.observe}
		drv, r, err := safeOpen(open, env)
		if err != nil {
			fail(err)
			continue
		}
		d.drv = drv
		d.snap.State, d.snap.Value, d.snap.Values, d.snap.Updated = r.state, r.value, r.values, ds.now()
		if r.unit != "" {
			d.snap.Unit = r.unit
		}
		ds.local[dc.Name] = d
	}
	if len(errs) == 0 {
		ds.interlock(cfg, fail)
	}
	if len(errs) > 0 {
		ds.closeDevices()
		if ds.ownsBoard {
			_ = ds.board.Close()
		}
		return nil, errs
	}
	if opts.Poll > 0 {
		var ctx context.Context
		ctx, ds.stopPoll = context.WithCancel(context.Background())
		ds.pollDone = make(chan struct{})
		go ds.poll(ctx, opts.Poll)
	}
	return ds, nil
}

func safeOpen(open opener, e *openEnv) (drv driver, r reading, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = e.errorf("driver", "driver panicked while opening: %v", v)
		}
	}()
	return open(e)
}

// interlock links the devices of each interlock = [...] both ways and gives
// each linked group one lock, so no two of them are ever on at once.
func (ds *Devices) interlock(cfg *config.Config, fail func(error)) {
	for i, dc := range cfg.Devices {
		d, ok := ds.local[dc.Name]
		if !ok || len(dc.Interlock) == 0 {
			continue
		}
		key := fmt.Sprintf("device[%d].interlock", i)
		for _, other := range dc.Interlock {
			p, ok := ds.local[other]
			switch {
			case other == dc.Name:
				fail(cfg.Errorf(key, "device %q: cannot interlock with itself", dc.Name))
			case !ok:
				if r, remote := ds.remote[other]; remote {
					fail(cfg.Errorf(key, "device %q: interlock partner %q is wired to board %q; both must be on one board", dc.Name, other, r.Node))
				} else {
					fail(cfg.Errorf(key, "device %q: interlock names unknown device %q", dc.Name, other))
				}
			case !isOutput(dc.Driver) || !isOutput(p.driverName):
				fail(cfg.Errorf(key, "device %q: interlock needs two outputs, %q is %s", dc.Name, other, p.driverName))
			default:
				d.partners = appendOnce(d.partners, p)
				p.partners = appendOnce(p.partners, d)
				ds.mergeLocks(d, p)
				if d.Snapshot().State == StateOn && p.Snapshot().State == StateOn {
					fail(cfg.Errorf(key, "device %q: interlocked with %q but both start on", dc.Name, other))
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
	if !d.drv.supports(a.Kind) {
		return d.Snapshot(), fmt.Errorf("hal: device %q (%s): %w: %s", name, d.driverName, ErrUnsupported, a.Kind)
	}
	if a.Kind == Set && ((d.min != nil && a.Value < *d.min) || (d.max != nil && a.Value > *d.max)) {
		return d.Snapshot(), fmt.Errorf("hal: device %q: %w: %v out of range %s", name, ErrBadValue, a.Value, span(d.min, d.max))
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
			if _, err := p.run(ctx, Action{Kind: TurnOff}); err != nil {
				return d.Snapshot(), &DriverError{Device: name, Err: fmt.Errorf("interlock: turn off %q first: %w", p.name, err)}
			}
		}
	}
	return d.run(ctx, a)
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

// Close writes each output's on_stop state, stops the input watchers, ends
// every subscription and closes a board New opened. It waits for running
// operations to finish; later calls return the first result.
func (ds *Devices) Close() error {
	ds.closeOnce.Do(func() {
		if ds.stopPoll != nil {
			ds.stopPoll()
			<-ds.pollDone
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
			if err := d.drv.close(); err != nil {
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
