package hal

import (
	"context"
	"time"
)

// pollPeriods is each Polled device's read period: its spec's Poll, else
// the default (Options.Poll); devices with neither are not polled.
func (ds *Devices) pollPeriods(def time.Duration) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, name := range ds.order {
		d, ok := ds.local[name]
		if !ok || !d.driver.Polled {
			continue
		}
		if p := d.poll; p > 0 {
			out[name] = p
		} else if def > 0 {
			out[name] = def
		}
	}
	return out
}

// poll reads every sensor of a Polled driver at its period until ctx ends,
// so snapshots (and the /events stream) follow the sensors without a
// client asking.
func (ds *Devices) poll(ctx context.Context, periods map[string]time.Duration) {
	defer close(ds.pollDone)
	start := time.Now()
	next := make(map[string]time.Time, len(periods))
	for name, p := range periods {
		next[name] = start.Add(p)
	}
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		due := start.Add(time.Hour)
		for _, at := range next {
			if at.Before(due) {
				due = at
			}
		}
		t.Reset(time.Until(due))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		for _, name := range ds.order {
			at, ok := next[name]
			if !ok || at.After(now) {
				continue
			}
			// the next read keeps the period's rhythm; a slow read skips
			// the reads it made late rather than catching up in a burst
			p := periods[name]
			for !at.After(now) {
				at = at.Add(p)
			}
			next[name] = at
			ds.pollOne(ctx, name)
			if ctx.Err() != nil {
				return
			}
		}
		start = now
	}
}

func (ds *Devices) pollOne(ctx context.Context, name string) {
	defer func() {
		if v := recover(); v != nil {
			ds.log.Error("hal: poll panicked", "device", name, "panic", v)
		}
	}()
	// a failure shows in the device's state; nothing more to do here
	_, _ = ds.Do(ctx, name, Action{Kind: Read})
}
