package hal

import (
	"context"
	"time"
)

// Run reads every sensor of a Polled driver each Options.Poll until ctx
// ends or Close is called, so snapshots (and the /events stream) follow
// the sensors without a client asking. Without Poll it only waits. It
// returns nil; New starts nothing, Run is the devices' one loop.
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
	defer func() {
		cancel()
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
