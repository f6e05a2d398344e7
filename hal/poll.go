package hal

import (
	"context"
	"sync"
	"time"
)

// Run watches the inputs (each Instance that is a Runner) and reads every
// sensor of a Polled driver each Options.Poll, until ctx ends or Close is
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
	if ds.period <= 0 {
		<-ctx.Done()
		return nil
	}
	ds.poll(ctx, ds.period)
	return nil
}

// poll reads the Polled devices each period until ctx ends.
func (ds *Devices) poll(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, name := range ds.order {
			d, ok := ds.local[name]
			if !ok || !d.driver.Polled {
				continue
			}
			func() {
				defer func() {
					if v := recover(); v != nil {
						ds.log.Error("hal: poll panicked", "device", name, "panic", v)
					}
				}()
				// a failure shows in the device's state; nothing more to do here
				_, _ = ds.Do(ctx, name, Action{Kind: Read})
			}()
			if ctx.Err() != nil {
				return
			}
		}
	}
}
