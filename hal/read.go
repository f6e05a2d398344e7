package hal

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/reqtrace"
)

// DefaultMaxAgeShare is the share of a device's own read time that a
// reading may be old and still answer a read (DeviceSpec.MaxAge unset): a
// fresh read's value was taken somewhere during that read, so a reading a
// quarter of it old is as good as new to the caller. A 50 ms sensor
// answers from a reading up to 12.5 ms old. A device whose reads take
// under DefaultMaxAgeFloor (a GPIO line, µs) is always read: a reading
// kept that briefly would save nothing. The read time is the device's
// fastest successful read, on the devices' clock (Options.Now): a read
// slowed by a loaded machine measures the machine, and taken as the
// device's time it would answer a µs device's next reads from a cache.
const (
	DefaultMaxAgeShare = 4
	DefaultMaxAgeFloor = time.Millisecond
)

// Reads of one device share one device read: a read that arrives while
// another is under way waits for it and takes its result (a flight); one
// that arrives after may take the reading if it is at most max_age old.
// Actions never share: each runs on its own (Devices.Do).

// reads is a Device's shared-read state.
type reads struct {
	mu     sync.Mutex
	flight *readFlight   // the read under way, nil when none
	maxAge time.Duration // DeviceSpec.MaxAge; < 0 = unset: DefaultMaxAgeShare of took
	took   atomic.Int64  // the fastest successful read's duration, ns; 0 = none yet
}

// measured records a successful read that took took.
func (r *reads) measured(took time.Duration) {
	v := max(int64(took), 1) // 0 means none yet
	for old := r.took.Load(); old == 0 || v < old; old = r.took.Load() {
		if r.took.CompareAndSwap(old, v) {
			return
		}
	}
}

// readFlight is one device read and the callers that wait for it.
type readFlight struct {
	done    chan struct{} // closed when snap and err are set
	snap    Snapshot
	err     error
	started bool // the read reached the device (false: its caller left while waiting for the device)
}

// read is a Read on d: from a young enough reading, from the flight under
// way, or as a new flight that later reads join. ctx bounds the wait.
func (d *Device) read(ctx context.Context) (Snapshot, error) {
	for {
		d.reads.mu.Lock()
		if s, ok := d.young(); ok {
			d.reads.mu.Unlock()
			reqtrace.Mark(ctx, reqtrace.Cached)
			return s, nil
		}
		f := d.reads.flight
		if f == nil {
			f = &readFlight{done: make(chan struct{})}
			d.reads.flight = f
			d.reads.mu.Unlock()
			f.snap, f.started, f.err = d.exclusive(ctx, Action{Kind: Read})
			d.reads.mu.Lock()
			d.reads.flight = nil
			d.reads.mu.Unlock()
			close(f.done)
			return f.snap, f.err
		}
		d.reads.mu.Unlock()
		reqtrace.Mark(ctx, reqtrace.Joined)
		select {
		case <-f.done:
			if !f.started && ctx.Err() == nil {
				continue // the first caller gave up before the device was free: read on our own
			}
			reqtrace.Mark(ctx, reqtrace.Done)
			return f.snap, f.err
		case <-ctx.Done():
			return d.Snapshot(), fmt.Errorf("hal: device %q: busy: %w", d.name, ctx.Err())
		}
	}
}

// young returns the device's snapshot marked Cached when it is a reading
// (not an error, not unknown) at most max_age old.
func (d *Device) young() (Snapshot, bool) {
	limit := d.reads.maxAge
	if limit < 0 {
		limit = 0
		if took := time.Duration(d.reads.took.Load()); took >= DefaultMaxAgeFloor {
			limit = took / DefaultMaxAgeShare
		}
	}
	if limit <= 0 {
		return Snapshot{}, false
	}
	s := d.Snapshot()
	if s.Updated.IsZero() || s.State == StateError || s.State == StateUnknown {
		return Snapshot{}, false
	}
	if age := d.ds.now().Sub(s.Updated); age < 0 || age > limit {
		return Snapshot{}, false
	}
	s.Cached = true
	return s, true
}
