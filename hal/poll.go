package hal

import (
	"context"
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
	ds.stopRun, ds.runDone, ds.runCtx = cancel, done, ctx
	set := ds.devices()
	for _, name := range set.order {
		if d, ok := set.local[name]; ok {
			ds.startWatch(d)
		}
	}
	ds.runMu.Unlock()
	defer func() {
		cancel()
		ds.runMu.Lock()
		var ws []*watcher
		for _, d := range ds.devices().local {
			if d.watch != nil {
				ws = append(ws, d.watch)
				d.watch = nil
			}
		}
		ds.stopRun, ds.runCtx = nil, nil
		ds.runMu.Unlock()
		for _, w := range ws {
			<-w.done
		}
		close(done)
	}()
	for ds.poll(ctx, ds.pollPeriods(ds.period)) { // Apply changed the devices: their periods again
	}
	return nil
}

// watcher is one input's watch loop (a Runner instance) under Run.
type watcher struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startWatch starts d's watch loop, when its driver has one and Run runs;
// the caller holds runMu.
func (ds *Devices) startWatch(d *Device) {
	r, ok := d.drv.(Runner)
	if !ok || ds.runCtx == nil || d.watch != nil {
		return
	}
	ctx, cancel := context.WithCancel(ds.runCtx)
	w := &watcher{cancel: cancel, done: make(chan struct{})}
	d.watch = w
	go func() {
		defer close(w.done)
		_ = r.Run(ctx)
	}()
}

// stopWatch ends d's watch loop and waits for it.
func (ds *Devices) stopWatch(d *Device) {
	ds.runMu.Lock()
	w := d.watch
	d.watch = nil
	ds.runMu.Unlock()
	if w != nil {
		w.cancel()
		<-w.done
	}
}

// pollPeriods is each Polled device's read period: its spec's Poll, else
// the default (Options.Poll); devices with neither are not polled.
func (ds *Devices) pollPeriods(def time.Duration) map[string]time.Duration {
	out := map[string]time.Duration{}
	set := ds.devices()
	for _, name := range set.order {
		d, ok := set.local[name]
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

// poll reads every sensor of a Polled driver at its period until ctx ends
// (false) or Apply changed the devices (true), so snapshots (and the
// /events stream) follow the sensors without a client asking.
func (ds *Devices) poll(ctx context.Context, periods map[string]time.Duration) bool {
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
			return false
		case <-ds.reload:
			return true
		case <-t.C:
		}
		now := time.Now()
		for _, name := range ds.devices().order {
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
				return false
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
