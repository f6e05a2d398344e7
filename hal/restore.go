package hal

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Restore modes of a device (DeviceSpec.Restore).
const (
	RestoreLast    = "last"    // bring back the state the cluster remembers
	RestoreInitial = "initial" // write initial at start and keep it
)

// RestoreMode is what a device does when its board restarts: its restore
// key, or by default RestoreLast for a driver that Restores wired to one
// board, else RestoreInitial. A value that is neither is returned as is
// (CheckSpecs refuses it).
func RestoreMode(s DeviceSpec, d *Driver) string {
	if s.Restore != "" {
		return s.Restore
	}
	if d != nil && d.Restores && s.Node != "any" {
		return RestoreLast
	}
	return RestoreInitial
}

// checkRestore checks the restore key against the driver.
func checkRestore(s DeviceSpec, d *Driver, bad func(key, format string, args ...any)) {
	switch s.Restore {
	case "", RestoreInitial:
	case RestoreLast:
		switch {
		case !d.Restores:
			bad("restore", "driver %s has no state to restore; want restore = \"initial\" or none", s.Driver)
		case s.Node == "any":
			bad("restore", "restore = \"last\" needs a device wired to one board (node = \"any\" has a copy on every board)")
		}
	default:
		bad("restore", "%q: want last or initial", s.Restore)
	}
}

// Errors of Restore.
var (
	// ErrCommanded: a command ran on the device since the board started;
	// its state is newer than anything remembered elsewhere.
	ErrCommanded = errors.New("a command ran since start")
	// ErrNotRestorable: the device is not an output with restore = "last".
	ErrNotRestorable = errors.New("not restored (restore = \"initial\", or not an output)")
	// ErrOlder: the remembered state is not newer than the device's own.
	ErrOlder = errors.New("remembered state is not newer")
)

// Restorable returns the snapshots of this board's devices with restore =
// "last", in config order.
func (ds *Devices) Restorable() []Snapshot {
	var out []Snapshot
	set := ds.devices()
	for _, name := range set.order {
		if d, ok := set.local[name]; ok && d.restore {
			out = append(out, d.Snapshot())
		}
	}
	return out
}

// Hold makes Do wait (up to its ctx) until Release, so a board that
// restarts brings its outputs back (Restore) before it serves actions.
func (ds *Devices) Hold() {
	ds.holdMu.Lock()
	defer ds.holdMu.Unlock()
	if ds.held == nil {
		ds.held = make(chan struct{})
	}
}

// Holding reports whether Do waits for Release.
func (ds *Devices) Holding() bool {
	ds.holdMu.Lock()
	defer ds.holdMu.Unlock()
	return ds.held != nil
}

// Release lets the actions Hold kept waiting run. Safe to call more than
// once, and without Hold.
func (ds *Devices) Release() {
	ds.holdMu.Lock()
	defer ds.holdMu.Unlock()
	if ds.held != nil {
		close(ds.held)
		ds.held = nil
	}
}

// wait blocks while the devices are held, up to ctx.
func (ds *Devices) wait(ctx context.Context) error {
	ds.holdMu.Lock()
	held := ds.held
	ds.holdMu.Unlock()
	if held == nil {
		return nil
	}
	select {
	case <-held:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Restore writes the remembered state of from (a snapshot this board
// published before it restarted, as another board kept it) back to the
// device called from.Name, and stamps the device with from.Seq and the
// restored mark. It is the only way a state older than the board's start
// reaches a device, and it refuses, without touching the device:
//   - a device that is not local, not restorable or has restore = "initial"
//     (ErrNotRestorable);
//   - a device on which a command ran since New (ErrCommanded): whatever the
//     cluster remembers is at most as new as that command;
//   - a remembered Seq not above the device's own (ErrOlder).
//
// Restore does not wait for Release; it waits for the device's lock up to ctx.
func (ds *Devices) Restore(ctx context.Context, from Snapshot) (Snapshot, error) {
	d, ok := ds.devices().local[from.Name]
	if !ok || !d.restore {
		return Snapshot{}, fmt.Errorf("hal: restore %q: %w", from.Name, ErrNotRestorable)
	}
	a, err := restoreAction(d, from)
	if err != nil {
		return d.Snapshot(), err
	}
	if err := d.mu.lock(ctx); err != nil {
		return d.Snapshot(), fmt.Errorf("hal: restore %q: busy: %w", from.Name, err)
	}
	defer d.mu.unlock()
	switch {
	case d.closed:
		return d.Snapshot(), fmt.Errorf("hal: restore %q: %w", from.Name, ErrClosed)
	case d.commanded:
		return d.Snapshot(), fmt.Errorf("hal: restore %q: %w", from.Name, ErrCommanded)
	case from.Seq <= d.Snapshot().Seq:
		return d.Snapshot(), fmt.Errorf("hal: restore %q: seq %d, device at %d: %w", from.Name, from.Seq, d.Snapshot().Seq, ErrOlder)
	}
	ds.seq.observe(from.Seq)
	ctx = context.WithoutCancel(ctx)
	if len(d.partners) > 0 && d.turnsOn(a) {
		for _, p := range d.partners {
			if p.Snapshot().State == StateOn {
				// the remembered states cannot both be on (the interlock
				// held when they were commanded); the partner's own
				// restore comes later, or it keeps its newer command
				return d.Snapshot(), &DriverError{Device: from.Name, Err: fmt.Errorf("restore: interlock partner %q is on", p.name)}
			}
		}
	}
	return d.run(ctx, a, func(s *Snapshot) { s.Seq, s.Restored = from.Seq, true })
}

// restoreAction is the action that writes from's state: set for a number
// (a pwm duty; switches report true/false), else turn_on or turn_off.
func restoreAction(d *Device, from Snapshot) (Action, error) {
	if v, ok := from.Value.(float64); ok && d.driver.Accepts(Set) {
		return Action{Kind: Set, Value: v}, nil
	}
	switch from.State {
	case StateOn:
		return Action{Kind: TurnOn}, nil
	case StateOff:
		return Action{Kind: TurnOff}, nil
	}
	return Action{}, fmt.Errorf("hal: restore %q: remembered state %q is neither on nor off", from.Name, from.State)
}

// command stamps a command's snapshot: the next Seq, not restored.
func (d *Device) command(s *Snapshot) {
	s.Seq, s.Restored = d.ds.seq.next(s.Seq, d.ds.now().UnixMilli()), false
}

// seqClock hands out command versions: a hybrid clock, the wall clock in
// milliseconds unless that is not above the last version handed out (or
// restored), then one more. So versions grow on one board whatever its
// clock does, and across restarts they grow with the wall clock (boards
// keep NTP time, as the dispatch marks already need).
type seqClock struct {
	mu   sync.Mutex
	last uint64
}

// next is a version above prev (the device's own) and every earlier one.
func (c *seqClock) next(prev uint64, nowMs int64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := max(c.last, prev) + 1
	if nowMs > 0 && uint64(nowMs) > v {
		v = uint64(nowMs)
	}
	c.last = v
	return v
}

// observe makes later versions exceed v (a restored one).
func (c *seqClock) observe(v uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = max(c.last, v)
}
