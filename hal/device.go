package hal

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/clock"
)

// Device is one opened device. Operations on it (and on the devices it is
// interlocked with, which share its lock) run one at a time, or as many at
// once as its driver's Concurrency; concurrent reads share one (read.go).
// Its snapshot is readable at any moment without waiting for them.
type Device struct {
	name, driverName, node string
	ds                     *Devices
	spec                   DeviceSpec // as opened: Apply reopens it when the config's differs
	watch                  *watcher   // its input watcher while Run runs; under ds.runMu
	driver                 *Driver
	drv                    Instance
	latency                time.Duration
	partners               []*Device     // interlock
	mu                     gate          // shared by an interlock group
	closed                 bool          // under mu
	min, max               *float64      // accepted range for set
	poll                   time.Duration // Polled drivers: read period; 0 = Options.Poll
	restore                bool          // restore = "last" (RestoreMode)
	commanded              bool          // a command ran since New; under mu
	reads                  reads         // concurrent reads share one (read.go)

	smu  sync.Mutex
	snap Snapshot
}

// Snapshot returns the device's last known state.
func (d *Device) Snapshot() Snapshot {
	d.smu.Lock()
	defer d.smu.Unlock()
	return d.snap
}

// turnsOn reports whether a would leave the device on.
func (d *Device) turnsOn(a Action) bool {
	switch a.Kind {
	case TurnOn, Pulse:
		return true
	case Set:
		return a.Value > 0
	case Toggle:
		return d.Snapshot().State != StateOn
	}
	return false
}

// run performs a; the caller holds d.mu. stamp, when set, marks the
// snapshot (a restore); nil stamps a command's Seq on a restorable output.
func (d *Device) run(ctx context.Context, a Action, stamp func(*Snapshot)) (snap Snapshot, err error) {
	start, clockStart := time.Now(), d.ds.now()
	var r Reading
	func() {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("driver panicked: %v", v)
				d.ds.log.Error("hal: driver panicked", "device", d.name, "action", a.Kind, "panic", v)
			}
		}()
		if err = clock.Sleep(ctx, d.latency); err == nil {
			r, err = d.drv.Do(ctx, a)
		}
	}()
	// the caller's mistake, or the caller gone: not the device's failure
	caller := errors.Is(err, ErrBadValue) || errors.Is(err, ErrUnsupported) ||
		(ctx.Err() != nil && errors.Is(err, ctx.Err()))
	d.ds.metrics.observe(d.name, a.Kind.String(), time.Since(start), err != nil && !caller)
	switch {
	case caller:
		return d.Snapshot(), fmt.Errorf("hal: device %q: %w", d.name, err)
	case err != nil:
		d.setError(err)
		return d.Snapshot(), &DriverError{Device: d.name, Err: err}
	}
	if a.Kind == Read {
		d.reads.measured(d.ds.now().Sub(clockStart))
	}
	if stamp == nil && a.Kind != Read && d.driver.Restores {
		d.commanded = true
		stamp = d.command
	}
	return d.set(r, stamp), nil
}

// observe records a reading the driver saw on its own (an input edge).
func (d *Device) observe(r Reading) { d.set(r, nil) }

// set records r; stamp, when set, changes the snapshot under the same lock.
func (d *Device) set(r Reading, stamp func(*Snapshot)) Snapshot {
	d.smu.Lock()
	old := d.snap
	d.snap.State, d.snap.Value, d.snap.Unit, d.snap.Values = r.State, r.Value, r.Unit, r.Values
	d.snap.Error = ""
	d.snap.Updated = d.ds.now()
	if stamp != nil {
		stamp(&d.snap)
	}
	s := d.snap
	d.smu.Unlock()
	if changed(old, s) {
		d.ds.changed(s)
	}
	return s
}

func (d *Device) setError(err error) {
	d.smu.Lock()
	old := d.snap
	d.snap.State, d.snap.Error, d.snap.Updated = StateError, err.Error(), d.ds.now()
	s := d.snap
	d.smu.Unlock()
	if changed(old, s) {
		d.ds.changed(s)
	}
}

// changed: what subscribers hear about. Not Seq alone: a command that
// leaves the device as it was (an interlock partner already off) is no
// event; the next change carries the newer Seq.
func changed(a, b Snapshot) bool {
	return a.State != b.State || a.Error != b.Error || a.Unit != b.Unit || a.Restored != b.Restored ||
		!reflect.DeepEqual(a.Value, b.Value) || !reflect.DeepEqual(a.Values, b.Values)
}

// gate is a lock a waiter can give up on: a caller whose request ends stops
// waiting for a long pulse on the same device. It has as many places as
// the device runs operations at once (one unless its driver says more).
type gate chan struct{}

func newGate(n int) gate { return make(gate, max(n, 1)) }

// lockAll takes every place of the gate (Close: nothing else runs).
func (g gate) lockAll() {
	for range cap(g) {
		g <- struct{}{}
	}
}

func (g gate) unlockAll() {
	for range cap(g) {
		<-g
	}
}

// lock takes the gate or returns ctx's error.
func (g gate) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case g <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g gate) unlock() { <-g }
