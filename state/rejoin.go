package state

import (
	"context"
	"time"

	"github.com/ews-firmware/ews/internal/backoff"
)

// rejoin keeps every configured peer in the membership: memberlist alone
// never re-joins a board it declared dead after an outage (invariant 7).
// Each missing peer is joined with exponential backoff (tmax doubling to
// 10 tmax, within 2..30 s); changes are logged once: joined (the first
// time), missing, each new error, back.
func (c *Cluster) rejoin(ctx context.Context) {
	maxBackoff := min(max(10*c.timing.TMax, 2*time.Second), 30*time.Second)
	type peerState struct {
		present bool
		seen    bool // in the membership at least once since start
		next    time.Time
		retry   backoff.Backoff
		lastErr string
	}
	state := map[string]*peerState{}
	for _, p := range c.peers {
		if p.Name != c.self.Name {
			state[p.Name] = &peerState{present: true} // "missing" is logged only after a first miss
		}
	}
	check := time.NewTicker(min(c.timing.TMax, time.Second))
	defer check.Stop()
	first := true
	for {
		func() {
			defer func() {
				if r := recover(); r != nil {
					c.logger.Error("cluster: panic in the rejoin loop", "panic", r)
				}
			}()
			members := c.memberAddrs()
			now := time.Now()
			for _, p := range c.peers {
				st, ok := state[p.Name]
				if !ok {
					continue
				}
				if _, ok := members[p.Name]; ok {
					switch {
					case !st.seen:
						c.logger.Info("peer joined the membership", "peer", p.Name, "addr", p.Addr)
					case !st.present:
						c.logger.Info("peer is back in the membership", "peer", p.Name, "addr", p.Addr)
					}
					*st = peerState{present: true, seen: true}
					continue
				}
				if st.present {
					if !first {
						c.logger.Warn("peer missing from the membership; re-joining", "peer", p.Name, "addr", p.Addr)
					}
					st.present, st.next = false, now
					st.retry = backoff.Backoff{Min: c.timing.TMax, Max: maxBackoff}
				}
				if now.Before(st.next) || ctx.Err() != nil {
					continue
				}
				c.mem.joins.Add(1)
				_, err := c.mem.ml.Load().Join([]string{p.Addr})
				if err == nil {
					continue // present at the next check
				}
				if msg := err.Error(); msg != st.lastErr {
					st.lastErr = msg
					c.logger.Warn("cannot join peer; retrying with backoff", "peer", p.Name, "addr", p.Addr, "err", oneLine(msg))
				}
				st.next = now.Add(st.retry.Next())
			}
		}()
		first = false
		select {
		case <-ctx.Done():
			return
		case <-check.C:
		}
	}
}
