package state

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/hashicorp/memberlist"
)

// run owns the protocol's timing: it feeds the Election the received
// messages, membership changes, this board's report every heartbeat and a
// tick every Timing.Tick, and carries out what it returns.
func (c *Cluster) run(ctx context.Context) {
	ticker := time.NewTicker(c.timing.Tick)
	defer ticker.Stop()
	var nextReport time.Time
	var last viewKey
	for {
		var acts []Action
		var err error
		var kind MsgType
		select {
		case <-ctx.Done():
			return
		case in := <-c.inbox:
			kind = in.m.Type()
			if err = c.fromMember(in.m); err == nil {
				acts, err = c.safely(func(now time.Time) ([]Action, error) { return c.e.ReceiveVersion(now, in.m, in.v) })
			}
		case ev := <-c.mem.events:
			acts, err = c.safely(func(time.Time) ([]Action, error) {
				if ev.up {
					c.e.MemberJoined(ev.name)
				} else {
					c.e.MemberLeft(ev.name)
				}
				return nil, nil
			})
		case now := <-ticker.C:
			var rep *ReportMsg
			var stats ClassStats
			if !now.Before(nextReport) {
				nextReport = now.Add(c.timing.Heartbeat - c.timing.Tick/2)
				r := c.report()
				rep = &r
				stats = c.stats()
			}
			acts, err = c.safely(func(now time.Time) ([]Action, error) {
				var acts []Action
				if rep != nil {
					c.e.SetStats(stats)
					acts = c.e.Local(now, *rep)
				}
				return append(acts, c.e.Tick(now)...), nil
			})
		}
		if err != nil {
			if errors.Is(err, ErrPeersDiffer) {
				c.refused("peers")
			}
			c.refused(kind.String())
			c.logger.Debug("message refused", "type", kind, "err", err)
		} else if kind != 0 {
			c.m.received.WithLabelValues(kind.String()).Inc()
		}
		c.do(acts)
		last = c.notify(last)
	}
}

// safely calls fn with the Election locked, turning a panic into an error
// so one bad event cannot stop the cluster.
func (c *Cluster) safely(fn func(now time.Time) ([]Action, error)) (acts []Action, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			c.logger.Error("cluster: panic in the protocol", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("state: panic: %v", r)
		}
	}()
	return fn(time.Now())
}

// report samples this board for its heartbeat report. A panicking Local
// gives a "down" report rather than stopping the cluster; a panicking
// Load costs only the load figures (sent as 0), never the board.
func (c *Cluster) report() (r ReportMsg) {
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("cluster: panic in Local", "panic", p)
			r = ReportMsg{HTTP: c.http, Runstate: Down, Simulated: c.cfg.Simulated}
		}
	}()
	rs := c.local.Runstate()
	if !rs.Valid() {
		c.warn(fmt.Sprintf("Local reports %s: sent as down", rs))
		rs = Down
	}
	inflight := max(c.local.InFlight(), 0)
	r = ReportMsg{HTTP: c.httpAddr(), InFlight: uint32(inflight), Completed: c.local.Completed(),
		Capacity: uint32(max(c.cfg.Capacity, 0)), Weight: uint32(max(c.cfg.Weight, 0)), Runstate: rs, Simulated: c.cfg.Simulated}
	r.SetFullLoad(c.sampleLoad())
	if cp, ok := c.local.(Capacitor); ok && cp.Capacity() > 0 {
		r.Capacity = uint32(cp.Capacity())
	}
	if cr, ok := c.local.(Credentialer); ok {
		r.Creds = cr.Creds()
	}
	return r
}

// sampleLoad is Local.Load, or no load (0s) when it panics: a figure this
// board cannot read must not take it out of the cluster. The first panic
// is logged; later ones are not, so the log is not flooded each heartbeat.
func (c *Cluster) sampleLoad() (l Load) {
	defer func() {
		if p := recover(); p != nil {
			if !c.loadPanicked.Swap(true) {
				c.logger.Warn("cluster: panic sampling this board's load: reported as 0 from now on while it lasts (logged once)", "panic", p)
			}
			l = Load{}
		}
	}()
	return c.local.Load()
}

// stats samples the master's queue for its next table: nil while the
// Local runs no queue (not master). A panicking Queuer gives no stats.
func (c *Cluster) stats() (out ClassStats) {
	if c.queuer == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("cluster: panic in a queue stats callback", "panic", p)
			out = nil
		}
	}()
	depth, dispatched, ok := c.queuer.QueueStats()
	if !ok {
		return nil
	}
	return MakeClassStats(depth, dispatched)
}

// do carries out the Election's actions.
func (c *Cluster) do(acts []Action) {
	for _, a := range acts {
		switch a.Kind {
		case Broadcast:
			c.send(a.Msg, "")
		case SendTo:
			c.send(a.Msg, a.To)
		case Gossip, GossipAll:
			c.gossip(a.Msg, a.Kind == GossipAll, a.Also)
		case BecameMaster:
			if a.Reason != "standalone" {
				c.m.takeovers.Inc()
			}
			c.logger.Info("became master", "epoch", a.Epoch, "reason", a.Reason)
		case SteppedDown:
			c.logger.Warn("stepped down", "epoch", a.Epoch, "new_master", a.Master, "reason", a.Reason)
		case Followed:
			c.logger.Info("following master", "master", a.Master, "epoch", a.Epoch)
		case Warn:
			c.warn(a.Reason)
		}
	}
	c.mu.Lock()
	name, epoch := c.e.Master()
	t, _ := c.e.Table()
	c.mu.Unlock()
	c.m.epoch.Set(float64(epoch))
	c.m.version.Set(float64(t.Version))
	if name == c.self.Name {
		c.m.isMaster.Set(1)
	} else {
		c.m.isMaster.Set(0)
	}
}

// warn logs a loud problem (peer lists differ, a duplicate name) at most
// once a minute per text.
func (c *Cluster) warn(reason string) {
	now := time.Now()
	if t, ok := c.warned[reason]; ok && now.Sub(t) < time.Minute {
		return
	}
	if len(c.warned) > 256 {
		clear(c.warned)
	}
	c.warned[reason] = now
	c.logger.Error("cluster: "+reason, "board", c.self.Name)
}

// send encodes m once and sends it to every other configured board, or to
// the one named to: at the address membership knows it by, else at its
// configured address when that is a literal IP (no DNS in the protocol's
// path). Sending past the membership means a partition heals as soon as
// packets flow again, without waiting for a re-join.
func (c *Cluster) send(m Message, to string) {
	if c.mem.ml.Load() == nil {
		return
	}
	members, metas := c.memberAddrs(), c.memberVersions()
	_, digest := m.(*DigestMsg)
	var table []byte // the table instead of a digest, for a board rolled back (rolledBack)
	c.mu.Lock()
	vs := make([]uint8, len(c.peers))
	for i, p := range c.peers {
		vs[i] = c.e.PeerVersion(p.Name)
		if digest && table == nil && p.Name != c.self.Name && (to == "" || p.Name == to) && c.rolledBack(p.Name, metas) {
			t, _ := c.e.Table()
			table, _ = EncodeVersion(&t, ProtocolVersionUnsigned)
		}
	}
	c.mu.Unlock()
	var encoded [ProtocolVersionMax + 1][]byte
	for i, p := range c.peers {
		if p.Name == c.self.Name || (to != "" && p.Name != to) {
			continue
		}
		if digest && table != nil && c.rolledBack(p.Name, metas) {
			c.sendTo(p.Name, members, tableMsgType, table)
			continue
		}
		// each board gets the message at the highest version both speak
		// (what it advertises, else what it last sent), so a board of an
		// older build keeps reading tables; version 5 is signed, and only
		// a board that advertises it is sent it: one without node meta
		// runs a build before version 5 (the last build, or a board rolled
		// back to it after it signed), whatever it sent before
		v := c.seal.proto
		if a := metas[p.Name]; a != 0 {
			v = min(v, max(a, ProtocolVersionMin))
		} else if vs[i] != 0 {
			v = min(v, max(vs[i], ProtocolVersionMin), ProtocolVersionUnsigned)
		}
		if encoded[v] == nil {
			var b []byte
			var err error
			if v >= ProtocolVersionSigned {
				b, err = c.seal.keys.Body(m) // one sequence number, a tag per board below
			} else {
				b, err = EncodeVersion(m, v)
			}
			if errors.Is(err, ErrVersion) {
				continue // a digest for a board that speaks no digests: it gets the table
			}
			if err != nil {
				c.logger.Error("cluster: encode", "err", err)
				return
			}
			encoded[v] = b
		}
		b := encoded[v]
		if v >= ProtocolVersionSigned {
			var err error
			if b, err = c.seal.keys.Tag(b, p.Name); err != nil {
				if metas[p.Name] >= ProtocolVersionSigned {
					c.sendIntro(p.Name, true) // no key of it yet: trade intros
				}
				continue // (a board not heard yet may be of the last build: it gets nothing until it is)
			}
		}
		c.sendTo(p.Name, members, m.Type(), b)
	}
}

// addrOf is where board to is sent to: the address the membership knows it
// by (members), else its configured literal IP.
func (c *Cluster) addrOf(to string, members map[string]string) (string, bool) {
	if addr, ok := members[to]; ok {
		return addr, true
	}
	addr, ok := c.literal[to]
	return addr, ok
}

// sendTo sends encoded message b of type kind to board to, at the address
// the membership knows it by (members), else its configured literal IP.
func (c *Cluster) sendTo(to string, members map[string]string, kind MsgType, b []byte) {
	addr, ok := c.addrOf(to, members)
	if !ok {
		return
	}
	ml := c.mem.ml.Load()
	if ml == nil {
		return
	}
	send := func() error { return ml.SendToAddress(memberlist.Address{Addr: addr, Name: to}, b) }
	if overPacket(b) {
		send = func() error { return c.sendLarge(ml, to, b) } // a relayed cluster's full table: TCP
	}
	if err := send(); err != nil {
		c.logger.Debug("send", "to", to, "type", kind, "err", err)
		return
	}
	c.m.sent.WithLabelValues(kind.String()).Inc()
	c.m.bytes.WithLabelValues("sent").Add(len(b))
}

// rolledBack reports whether board name was seen sealing in this run and
// now advertises no version 5 (metas): a board rolled back to a build
// before version 5 (a firmware trial that failed), or someone forging its
// membership. Its unsigned messages are refused (invariant 11), its table
// requests too, so it is sent the full table where the others get a
// digest: it keeps hearing the master and never makes itself master.
func (c *Cluster) rolledBack(name string, metas map[string]uint8) bool {
	return metas[name] < ProtocolVersionSigned && c.seal.keys.Signs(name)
}

// viewKey is what makes a view worth publishing.
type viewKey struct {
	epoch, version uint64
	master         string
	mismatch       uint64 // boards (by rank, first 64) marked auth_mismatch
}

// notify calls the OnChange subscribers when the view moved.
func (c *Cluster) notify(last viewKey) viewKey {
	c.mu.Lock()
	name, epoch := c.e.Master()
	t, _ := c.e.Table()
	k := viewKey{epoch: epoch, version: t.Version, master: name, mismatch: c.e.mismatches()}
	if k.master != last.master || k.epoch != last.epoch {
		defer c.correctClock() // a new master: follow its clock now, not at the next probe (clocks.go)
	}
	if k == last || len(c.subs) == 0 {
		c.mu.Unlock()
		return k
	}
	subs := make([]func(View), 0, len(c.subs))
	for _, fn := range c.subs {
		subs = append(subs, fn)
	}
	c.mu.Unlock()
	v := c.Snapshot()
	for _, fn := range subs {
		func() {
			defer func() {
				if r := recover(); r != nil {
					c.logger.Error("cluster: panic in an OnChange subscriber", "panic", r)
				}
			}()
			fn(v)
		}()
	}
	return k
}

// ReportNow applies this board's own report at once instead of at the
// next tick: the node calls it when it starts serving, so its row (HTTP
// address, runstate) is current before the first heartbeat.
func (c *Cluster) ReportNow() {
	r := c.report()
	c.mu.Lock()
	acts := c.e.Local(time.Now(), r)
	c.mu.Unlock()
	c.do(acts)
}
