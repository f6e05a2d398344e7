package hal

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
)

// Applied is what Apply did on this board, each list in config order.
type Applied struct {
	Opened    []string          // added here, or reopened with a changed spec
	Closed    []string          // removed from the config or wired elsewhere now (on_stop written)
	Failed    map[string]string // device -> why its driver did not open here; it shows state "error"
	Unchanged int               // devices of this board left open as they were
}

// Changed reports whether Apply touched any device of this board.
func (a Applied) Changed() bool { return len(a.Opened)+len(a.Closed)+len(a.Failed) > 0 }

// ErrApplyClosed: Apply after Close.
var ErrApplyClosed = errors.New("hal: devices closed")

// Apply makes cfg.Devices the device set while the board runs
// (docs/NOTES.md "Configuration store"): a device of this board that is new,
// or whose spec changed, is opened (a changed one closed first); one that
// left the config, or is wired to another board now, is closed, its on_stop
// written; the others stay open, untouched. An interlock group with any
// member opened or closed is reopened whole, so no open device's lock
// changes under a running action. A device that does not open (a pin taken,
// a driver that fails) is reported in Failed and shows state "error" with
// the reason; the rest apply. Requests read the set without a lock: they
// see the old set or the new one, and an action on a device closed under
// it gets ErrClosed. cfg.Node, Board and Sim are the board's own and are
// not changed. Apply waits for running operations of the devices it closes.
func (ds *Devices) Apply(cfg Config) (Applied, error) {
	ds.applyMu.Lock()
	defer ds.applyMu.Unlock()
	ds.runMu.Lock()
	closed := ds.closed
	ds.runMu.Unlock()
	if closed {
		return Applied{}, ErrApplyClosed
	}
	old := ds.devices()
	want := map[string]DeviceSpec{}
	for _, s := range cfg.Devices {
		want[s.Name] = s
	}
	// reopen: devices of this board to open anew; the old ones of the
	// same names (and those that left) are closed first
	reopen := map[string]bool{}
	for _, s := range cfg.Devices {
		if !wiredHere(s, ds.self) {
			continue
		}
		d, open := old.local[s.Name]
		if !open || !reflect.DeepEqual(d.spec, s) {
			reopen[s.Name] = true
		}
	}
	var leaving []string // open now, not to be open after
	for name := range old.local {
		if s, ok := want[name]; !ok || !wiredHere(s, ds.self) {
			leaving = append(leaving, name)
		}
	}
	groupsWhole(old, cfg.Devices, ds.self, reopen, leaving)

	next := newDeviceSet()
	res := Applied{Failed: map[string]string{}}
	taken := newResources()
	var toClose []*Device
	for name, d := range old.local {
		if reopen[name] || slices.Contains(leaving, name) {
			toClose = append(toClose, d)
			continue
		}
		next.local[name] = d
		for _, k := range pinKeysOf(d) {
			taken.pins[k] = name
		}
		if d.driver.Needs == NeedsBus {
			taken.addrs[d.spec.Bus+"/"+d.spec.Address] = name
		}
	}
	// close first: a changed device's pin, or a removed one's, is free
	// for what opens next
	slices.SortFunc(toClose, func(a, b *Device) int { return slices.Index(old.order, a.name) - slices.Index(old.order, b.name) })
	for _, d := range toClose {
		ds.stopWatch(d)
		if err := d.close(); err != nil {
			ds.log.Warn("hal: close", "device", d.name, "err", err)
		}
		if _, still := want[d.name]; !still || !wiredHere(want[d.name], ds.self) {
			res.Closed = append(res.Closed, d.name)
		}
	}
	for i, s := range cfg.Devices {
		next.order = append(next.order, s.Name)
		switch {
		case !wiredHere(s, ds.self):
			next.remote[s.Name] = ds.remoteSnapshot(s)
		case reopen[s.Name]:
			d, err := ds.open(s, i, taken)
			if err != nil {
				ds.failed(next, res, s, err)
				continue
			}
			next.local[s.Name] = d
			res.Opened = append(res.Opened, s.Name)
		default:
			res.Unchanged++
		}
	}
	var lerrs []error
	ds.interlock(next, cfg.Devices, reopen, func(err error) { lerrs = append(lerrs, err) })
	for _, err := range lerrs {
		se := asSpecError(err)
		if d, ok := next.local[se.Device]; ok {
			_ = d.close()
			delete(next.local, se.Device)
			res.Opened = slices.DeleteFunc(res.Opened, func(n string) bool { return n == se.Device })
		}
		ds.failed(next, res, want[se.Device], err)
	}
	ds.set.Store(next)
	ds.runMu.Lock()
	for _, name := range res.Opened {
		ds.startWatch(next.local[name])
	}
	ds.runMu.Unlock()
	select {
	case ds.reload <- struct{}{}:
	default:
	}
	if len(res.Failed) == 0 {
		res.Failed = nil
	}
	return res, nil
}

// failed records in set that spec's driver did not open here, and why.
func (ds *Devices) failed(set *deviceSet, res Applied, spec DeviceSpec, err error) {
	msg := err.Error()
	var se *SpecError
	if errors.As(err, &se) && se.Err != nil {
		msg = fmt.Sprintf("%s: %v", se.Key, se.Err)
	}
	res.Failed[spec.Name] = msg
	set.failed[spec.Name] = Snapshot{Name: spec.Name, Driver: spec.Driver, Node: nodeOf(spec, ds.self), State: StateError,
		Unit: spec.Units, Updated: ds.now(), Error: "not open on " + ds.self + ": " + msg}
	ds.log.Error("hal: device did not open; the other devices run", "device", spec.Name, "err", msg)
}

// pinKeysOf is what an open device's pin takes (pinKeys), none for a
// simulated driver.
func pinKeysOf(d *Device) []string {
	if d.spec.Pin == "" || d.driver.Simulated {
		return nil
	}
	return pinKeys(d.spec)
}

// groupsWhole adds to reopen every device of this board that shares an
// interlock group, in the old set or the new config, with one that is
// reopened or leaving, until none is left out.
func groupsWhole(old *deviceSet, specs []DeviceSpec, self string, reopen map[string]bool, leaving []string) {
	touched := map[string]bool{}
	for n := range reopen {
		touched[n] = true
	}
	for _, n := range leaving {
		touched[n] = true
	}
	links := map[string][]string{}
	link := func(a, b string) { links[a] = append(links[a], b); links[b] = append(links[b], a) }
	for _, d := range old.local {
		for _, p := range d.partners {
			link(d.name, p.name)
		}
	}
	local := map[string]bool{}
	for _, s := range specs {
		if wiredHere(s, self) {
			local[s.Name] = true
			for _, o := range s.Interlock {
				link(s.Name, o)
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for n := range touched {
			for _, o := range links[n] {
				if !touched[o] {
					touched[o], changed = true, true
				}
			}
		}
	}
	for n := range touched {
		if local[n] {
			reopen[n] = true
		}
	}
}
