package hal

import (
	"context"
	"time"
)

// poll reads every sensor of a Polled driver each period until ctx ends, so snapshots
// (and the /events stream) follow the sensors without a client asking.
func (ds *Devices) poll(ctx context.Context, period time.Duration) {
	defer close(ds.pollDone)
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
