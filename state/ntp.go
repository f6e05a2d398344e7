package state

import (
	"context"
	"time"
)

// The master follows an NTP server when [cluster] ntp names one
// (docs/DESIGN.md, Time): its correction becomes the server's offset, and
// the followers follow the master's corrected clock as always.

// NTPEvery is how often the master asks its time source; after a failure
// it asks again after ntpRetry.
const (
	NTPEvery = 64 * time.Second
	ntpRetry = 8 * time.Second
	ntpCheck = time.Second // how often the loop looks whether this board is master
)

// ntpLoop asks Config.TimeSource while this board is master, until ctx
// ends.
func (c *Cluster) ntpLoop(ctx context.Context) {
	t := time.NewTicker(ntpCheck)
	defer t.Stop()
	var next time.Time // monotonic: when to ask next; zero: at once
	synced := false
	for {
		if c.IsMaster() && !time.Now().Before(next) {
			d, from, err := c.cfg.TimeSource()
			switch {
			case err != nil:
				next = time.Now().Add(ntpRetry)
				if synced {
					c.logger.Warn("clock: the NTP servers do not answer: cluster time runs on", "err", err)
				}
				c.logger.Debug("clock: ntp", "err", err)
				synced = false
			default:
				next = time.Now().Add(NTPEvery)
				if old := c.clock.Correction(); !c.clock.Measured() || (d-old).Abs() >= clockSteady {
					c.clock.SetCorrection(d)
				}
				if !synced {
					c.logger.Info("clock: cluster time follows NTP", "server", from, "offset", d.Round(time.Millisecond))
				}
				synced = true
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
