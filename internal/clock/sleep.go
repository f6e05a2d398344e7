package clock

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends, whichever is first, and returns ctx's
// error when it ended first (at once when d is not positive).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
