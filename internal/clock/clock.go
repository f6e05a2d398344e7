// Package clock is a board's one wall clock: the host's time, a fixed offset ([sim] clock_offset) and the correction to cluster time.
package clock

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// Clock is the board's clock, shared by every component that reads wall
// time (docs/DESIGN.md, Time). Two readings:
//   - Local is what the board itself would read from its RTC: the base
//     clock plus Offset (a simulated board's [sim] clock_offset; 0 on a
//     real board). Heartbeats carry it, so boards measure each other.
//   - Now is cluster time: Local plus the correction the state package
//     measured against the master (SetCorrection). Marks, seals,
//     certificates, rules, history and audit read it.
//
// Durations are unaffected: both readings keep the base clock's monotonic
// reading, and timers are the base clock's. Clock implements
// clockwork.Clock, whose Now is cluster time. Safe for concurrent use.
type Clock struct {
	clockwork.Clock
	offset atomic.Int64 // nanoseconds Local runs ahead of the base clock
	corr   atomic.Int64 // nanoseconds added to Local to get cluster time
	steps  atomic.Int64 // nanoseconds Local was stepped by in all (SetOffset)
	floor  atomic.Int64 // unix nanoseconds: no true time is earlier; 0 none
	set    atomic.Bool  // a correction was measured (SetCorrection)
}

var _ clockwork.Clock = (*Clock)(nil)

// New returns the board clock over base (nil: the real clock), running
// offset ahead of it (negative: behind).
func New(base clockwork.Clock, offset time.Duration) *Clock {
	if base == nil {
		base = clockwork.NewRealClock()
	}
	c := &Clock{Clock: base}
	c.offset.Store(int64(offset))
	return c
}

// Real is the clock of a board without offset: tests and tools.
func Real() *Clock { return New(nil, 0) }

// Offset is the fixed offset of Local from the base clock.
func (c *Clock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// SetOffset steps Local to run offset off the base clock from now on: a
// simulated board's clock jumping while it runs, as a real board's does
// when its RTC is set by hand. Cluster time does not jump with it: the
// correction takes the step back at once, as a measurement would after
// it, so marks, seals and certificates are judged as before (cluster time
// moves only by measurement: the master's clock, or NTP on the master).
// Stepped counts the step, for the samples measured against the old
// Local (state's clock samples).
func (c *Clock) SetOffset(offset time.Duration) {
	step := int64(offset) - c.offset.Swap(int64(offset))
	c.corr.Add(-step)
	c.steps.Add(step)
}

// Stepped is how far Local was stepped in all since the clock was made:
// an offset measured against Local at an earlier Stepped s0 is off by
// Stepped() - s0 now.
func (c *Clock) Stepped() time.Duration { return time.Duration(c.steps.Load()) }

// Local is the board's own wall clock, uncorrected.
func (c *Clock) Local() time.Time { return c.Clock.Now().Add(c.Offset()) }

// Now is cluster time: Local corrected.
func (c *Clock) Now() time.Time { return c.Local().Add(c.Correction()) }

// Since is the cluster time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is the cluster time left until t.
func (c *Clock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// Correction is what Now adds to Local.
func (c *Clock) Correction() time.Duration { return time.Duration(c.corr.Load()) }

// Measured reports whether a correction was set from a measurement.
func (c *Clock) Measured() bool { return c.set.Load() }

// SetCorrection makes Now run d ahead of Local (the measured offset of
// cluster time, the master's clock, from this board's).
func (c *Clock) SetCorrection(d time.Duration) {
	c.corr.Store(int64(d))
	c.set.Store(true)
}

// SetFloor records a time no true time can be earlier than (this
// build's commit, the minting of the board's own certificate). While no
// correction was measured and Local is earlier, the board knows its clock
// is wrong: Now starts from the floor instead. It reports whether it
// did.
func (c *Clock) SetFloor(t time.Time) bool {
	if t.IsZero() {
		return false
	}
	for {
		old := c.floor.Load()
		if old >= t.UnixNano() || c.floor.CompareAndSwap(old, t.UnixNano()) {
			break
		}
	}
	f := time.Unix(0, c.floor.Load())
	if c.set.Load() || !c.Local().Before(f) {
		return false
	}
	c.corr.Store(int64(f.Sub(c.Local())))
	return true
}

// Wrong reports whether Local is earlier than the floor: this board's
// own clock cannot be right.
func (c *Clock) Wrong() bool {
	f := c.floor.Load()
	return f != 0 && c.Local().UnixNano() < f
}

// Floor tells c a time no true time is earlier than (what names it); a
// clock earlier than it is wrong, and the board says so and counts from
// the floor until it measured the master's (docs/DESIGN.md, Time).
func (c *Clock) Floor(floor time.Time, what string, log *slog.Logger) {
	if c.SetFloor(floor) {
		log.Warn("clock: this board's clock is earlier than "+what+", so it is wrong: cluster time starts there until the master's clock is measured (docs/guide/time.md)",
			"clock", c.Local().UTC().Format(time.RFC3339), "floor", floor.UTC().Format(time.RFC3339))
	}
}
