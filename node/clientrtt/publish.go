package clientrtt

import (
	"context"
	"time"

	"github.com/ews-firmware/ews/state/nearnet"
)

// Publish hands m's nearest networks (nearnet.MaxNets) to set every
// interval until ctx ends; set is state.Cluster.SetClientNets, which
// gossips them only when they changed. Quantize keeps a round trip's
// jitter from changing them every time.
func Publish(ctx context.Context, m *nearnet.Meter, interval time.Duration, set func([]nearnet.Net)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			set(Quantize(m.Best(nearnet.MaxNets, now)))
		}
	}
}

// Quantize rounds each round trip to a step of 1 ms up to 16 ms, above
// that to a power-of-two number of milliseconds between a sixteenth and an
// eighth of it (at most about 6 % off, so a change of a few percent
// publishes nothing); never below 1 ms (a LAN's round trips are all near).
func Quantize(nets []nearnet.Net) []nearnet.Net {
	for i := range nets {
		step := time.Millisecond
		for step*16 <= nets[i].RTT {
			step *= 2
		}
		nets[i].RTT = max(nets[i].RTT.Round(step), time.Millisecond)
	}
	return nets
}
