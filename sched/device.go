package sched

import (
	"fmt"
	"time"

	"github.com/ews-firmware/ews/internal/devpath"
)

// Device-aware dispatch (docs/NOTES.md, Device-aware queueing): a request
// for a device takes a board slot only when the device can start it. Until
// then it waits in its class's queue, in a list per device lock, so a slot
// is never spent waiting for a busy device that pages and other devices
// could use.
// Reads of one device share one device read on the board (hal), so a read
// may start while other reads of the same device run, unless an action for
// that device waits (then the action goes first, in arrival order).

// Device is a device the master schedules for.
type Device struct {
	Name string
	// Concurrency is the operations the device runs at once (hal's
	// driver capability). Default 0 = 1.
	Concurrency int
	// Lock names the group whose operations share the device's places (an
	// interlock group, which hal runs one at a time). Default "" = the
	// device alone.
	Lock string
}

// DeviceOf names the device a request operates on and whether the action
// is a read (devpath.Of: the rule the bench's floor model shares).
func DeviceOf(method, path string) (name string, read bool) {
	return devpath.Of(method, path)
}

// devLock is one lock's places: a device, or an interlock group.
type devLock struct {
	conc    int       // operations at once
	busy    int       // running: actions, plus one per device whose reads run
	queued  int       // requests queued for it, every class
	actWait int       // of them, actions (reads may not join a read while one waits)
	freeAt  time.Time // when it last had a place free again (loadWait)
	last    int       // board index of the last operation started, -1 none (device_ahead.go)
	oneAt   time.Time // when it last came to one running operation (device_ahead.go)
	readers int       // of busy, devices whose reads run (device_ahead.go)
}

// devState is one device's running reads.
type devState struct {
	lock  int // index in Dispatcher.locks
	reads int // reads running; they share one device read
}

// setDevices builds the device table of NewDispatcher.
func (d *Dispatcher) setDevices(devs []Device) error {
	if len(devs) == 0 {
		return nil
	}
	d.devIdx = make(map[string]int, len(devs))
	locks := map[string]int{}
	for _, dv := range devs {
		if dv.Name == "" {
			return fmt.Errorf("sched: a device without a name")
		}
		if _, dup := d.devIdx[dv.Name]; dup {
			return fmt.Errorf("sched: device %q listed twice", dv.Name)
		}
		key := dv.Lock
		if key == "" {
			key = "\x00" + dv.Name // its own lock, never a group's name
		}
		li, ok := locks[key]
		if !ok {
			li = len(d.locks)
			locks[key] = li
			d.locks = append(d.locks, devLock{conc: max(dv.Concurrency, 1), last: -1})
		} else {
			d.locks[li].conc = min(d.locks[li].conc, max(dv.Concurrency, 1))
		}
		d.devIdx[dv.Name] = len(d.devs)
		d.devs = append(d.devs, devState{lock: li})
	}
	return nil
}

// device is the index of req's device, -1 when it names none the
// dispatcher knows.
func (d *Dispatcher) device(req *Request) int {
	if req.Device == "" || d.devIdx == nil {
		return -1
	}
	if i, ok := d.devIdx[req.Device]; ok {
		return i
	}
	return -1
}

// lockOf is the lock index of device di, -1 for none.
func (d *Dispatcher) lockOf(di int) int {
	if di < 0 {
		return -1
	}
	return d.devs[di].lock
}

// devFree says whether device di can start a request now (read: a read);
// true for no device.
func (d *Dispatcher) devFree(di int, read bool) bool {
	if di < 0 {
		return true
	}
	s := &d.devs[di]
	l := &d.locks[s.lock]
	if read && s.reads > 0 && l.actWait == 0 {
		return true // joins the read under way
	}
	return l.busy < l.conc
}

// devStart and devEnd count a request of device di starting (on board
// index bi) and ending.
func (d *Dispatcher) devStart(di int, read bool, bi int) {
	if di < 0 {
		return
	}
	s := &d.devs[di]
	l := &d.locks[s.lock]
	l.last = bi
	if read {
		s.reads++
		if s.reads > 1 {
			return
		}
		l.readers++
	}
	l.busy++
	if l.busy == 1 {
		l.oneAt = d.now()
	}
}

func (d *Dispatcher) devEnd(di int, read bool, now time.Time) {
	if di < 0 {
		return
	}
	s := &d.devs[di]
	if read {
		if s.reads == 0 {
			return
		}
		s.reads--
		if s.reads > 0 {
			return
		}
		if l := &d.locks[s.lock]; l.readers > 0 {
			l.readers--
		}
	}
	if l := &d.locks[s.lock]; l.busy > 0 {
		if l.busy == l.conc {
			l.freeAt = now
		}
		l.busy--
		if l.busy == 1 {
			l.oneAt = now
		}
	}
}

// loadWait is the part of w's wait that is the boards' load, what CoDel
// judges: all of it, less the time its device was busy (a busy device is
// not overload; the queue timeout bounds that wait). false: the device is
// busy now, the whole wait so far is the device's.
func (d *Dispatcher) loadWait(w *waiter, now time.Time) (time.Duration, bool) {
	if w.lock < 0 {
		return now.Sub(w.enq), true
	}
	f := d.locks[w.lock].freeAt
	if !d.devFree(w.dev, w.read) {
		if !d.aheadFree(w.dev, w.read, w.board) {
			return 0, false
		}
		f = d.locks[w.lock].oneAt // admitted ahead since
	}
	if f.After(w.enq) {
		return now.Sub(f), true
	}
	return now.Sub(w.enq), true
}

// busyDevices returns (tests), per device name with anything running or queued, its
// running operations (shared reads count once) and its queued requests.
func (d *Dispatcher) busyDevices() map[string][2]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string][2]int{}
	for name, i := range d.devIdx {
		l := d.locks[d.devs[i].lock]
		if l.busy > 0 || l.queued > 0 {
			out[name] = [2]int{l.busy, l.queued}
		}
	}
	return out
}
