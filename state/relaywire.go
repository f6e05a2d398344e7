package state

import (
	"bytes"
	"errors"
	"slices"
	"time"

	"github.com/hashicorp/memberlist"
)

// The Cluster's side of a relayed cluster (relay.go): its own messages go
// to the relay queue, which memberlist drains through
// Delegate.GetBroadcasts on every gossip interval, and a relayed message
// it takes is queued again to be passed on.

// gossip queues this board's own m to be relayed, and sends the relayed
// message at once to the boards named in also, or to every board with all
// (each then passes it on).
func (c *Cluster) gossip(m Message, all bool, also []string) {
	if c.relay.q == nil {
		c.send(m, "") // not a relayed cluster: every board directly
		return
	}
	boot := c.relay.boot
	var sign func([]byte) ([]byte, error)
	if c.seal.gkey != nil {
		boot, sign = c.seal.gkey.Boot(), c.seal.gkey.signRelay
	}
	seq := c.relay.seq.Add(1)
	b, err := wrapRelay(c.self.Name, boot, seq, m, sign)
	if err != nil {
		c.logger.Error("cluster: relay", "type", m.Type(), "err", err)
		return
	}
	c.relay.q.fresh(&RelayMsg{Origin: c.self.Name, Boot: boot, Seq: seq})
	c.relay.q.push(c.self.Name, m.Type(), b)
	c.m.sent.WithLabelValues(m.Type().String()).Inc()
	if !all && len(also) == 0 {
		return
	}
	members := c.memberAddrs()
	for _, p := range c.peers {
		if p.Name != c.self.Name && (all || slices.Contains(also, p.Name)) {
			c.sendTo(p.Name, members, relayMsgType, b)
		}
	}
}

// takeRelay checks a relayed message (its origin's signature, its run,
// whether it is new), passes it on and hands what it carries to the
// protocol. b is memberlist's buffer, reused after NotifyMsg returns.
func (d *delegate) takeRelay(r *RelayMsg, b []byte) {
	c := d.c
	if c.relay.q == nil {
		c.refused("relay")
		c.logger.Debug("gossip message refused", "err", "a relayed message in a cluster that does not relay", "from", r.Origin)
		return
	}
	if r.Origin == c.self.Name || c.relay.q.taken(r) {
		return // our own, or a copy: most of what gossip brings
	}
	if err := c.revokedSender(r); err != nil {
		c.refused("revoked")
		c.logger.Debug("gossip message refused", "err", err)
		return
	}
	if err := c.seal.keys.CheckRelay(r, c.clock.Now()); err != nil {
		c.refused("relay")
		if errors.Is(err, errAskIntro) {
			c.sendIntro(r.Origin, true)
		}
		c.warnAuth(r.Origin, err)
		return
	}
	m, err := unwrapRelay(r)
	if err != nil {
		c.refused("relay")
		c.logger.Debug("gossip message refused", "err", err)
		return
	}
	if !c.relay.q.fresh(r) {
		return
	}
	c.relay.q.push(r.Origin, m.Type(), bytes.Clone(b))
	d.enqueue(m, r.Inner[1])
}

// sendLarge sends b, over one packet (a relayed cluster's full table), to
// the member named to over memberlist's TCP stream.
func (c *Cluster) sendLarge(ml *memberlist.Memberlist, to string, b []byte) error {
	for _, n := range ml.Members() {
		if n.Name == to {
			return ml.SendReliable(n, b)
		}
	}
	return errors.New("state: not a member")
}

// overPacket: b would not fit one UDP packet as memberlist sends a user
// message (a type byte and the AES-GCM overhead added).
func overPacket(b []byte) bool { return len(b)+1+gcmOverhead > MaxPacket }

// relayGossipInterval is memberlist's GossipInterval in a relayed
// cluster: the protocol's tick, so a change crosses 1,024 boards in a
// few hundred milliseconds (docs/NOTES.md, "Beyond 68 boards").
func relayGossipInterval(hb time.Duration) time.Duration {
	return min(max(hb/4, 5*time.Millisecond), 50*time.Millisecond)
}
