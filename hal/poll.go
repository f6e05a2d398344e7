package hal

import (
	"context"
	"sync"
	"time"
)

// Run watches the inputs (each Instance that is a Runner) and reads every
// sensor of a Polled driver at its own period (DeviceSpec.Poll, else
// Options.Poll), until ctx ends or Close is
// called, so snapshots (and the /events stream) follow the devices without
// a client asking. It returns nil. New starts nothing: until Run, a
// device changes only when it is told to.
func (ds *Devices) Run(ctx context.Context) error {
	ds.runMu.Lock()
	if ds.closed || ds.stopRun != nil {
		ds.runMu.Unlock()
		return nil // closed, or another Run polls already
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	ds.stopRun, ds.runDone = cancel, done
	ds.runMu.Unlock()
	var watchers sync.WaitGroup
	for _, name := range ds.order {
		if d, ok := ds.local[name]; ok {
			if r, ok := d.drv.(Runner); ok {
				watchers.Go(func() { _ = r.Run(ctx) })
			}
		}
	}
	defer func() {
		cancel()
		watchers.Wait()
		ds.runMu.Lock()
		ds.stopRun = nil
		ds.runMu.Unlock()
		close(done)
	}()
	periods := ds.pollPeriods(ds.period)
	if len(periods) == 0 {
		<-ctx.Done()
		return nil
	}
	ds.poll(ctx, periods)
	return nil
}

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
