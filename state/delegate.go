package state

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/memberlist"
)

// delegate is the Cluster's memberlist Delegate, EventDelegate and
// ConflictDelegate. memberlist calls it from its own goroutines: each
// method copies what it needs and hands it to the run goroutine without
// blocking; a full inbox drops the message with a count.
type delegate struct{ c *Cluster }

var (
	_ memberlist.Delegate         = (*delegate)(nil)
	_ memberlist.EventDelegate    = (*delegate)(nil)
	_ memberlist.ConflictDelegate = (*delegate)(nil)
)

// NodeMeta advertises the highest protocol version this board may be
// sent (metaMagic, version): its Config.ProtocolVersion, 4 at most without
// a certificate (a version-5 message is sealed for its receiver's key). A
// board that heard only an older message of this one (it was of the last
// build before a restart) so sends it the newest both speak at once.
// Builds before version 5 send no meta. The HTTP address travels in the
// reports. After those two bytes come the board's nearest client networks
// (003's scheme 3, clientnets.go), which older builds do not read.
func (d *delegate) NodeMeta(limit int) []byte {
	if d.c.seal.lastBuild {
		return nil
	}
	meta := []byte{metaMagic, d.c.seal.proto}
	if tail := d.c.near.tail(); len(meta)+len(tail) <= limit {
		meta = append(meta, tail...) // older builds read the first two bytes only
	}
	return meta
}

// metaMagic opens this build's node meta.
const metaMagic = 0xE5

// metaVersion reads a member's node meta: the version it reads, 0 if none.
func metaVersion(meta []byte) uint8 {
	if len(meta) >= 2 && meta[0] == metaMagic {
		return meta[1]
	}
	return 0
}

// NotifyMsg decodes and checks a message (memberlist reuses b after we
// return): a signed one against its sender's gossip key, an unsigned one
// against whether its sender signs (invariant 11). Intros are taken here.
func (d *delegate) NotifyMsg(b []byte) {
	c := d.c
	c.m.bytes.WithLabelValues("received").Add(len(b))
	m, s, err := decodeSealed(b)
	lastBuildRefuses := err == nil && d.c.seal.lastBuild && b[1] >= ProtocolVersionSigned
	if lastBuildRefuses {
		err = fmt.Errorf("state: unknown message: %w %d (this build speaks 1..4)", ErrVersion, b[1])
	}
	if err != nil {
		kind := "unknown"
		if len(b) > 0 && !lastBuildRefuses { // the last build fails the decode, so counts the type as unknown
			kind = MsgType(b[0]).String()
		}
		c.refused(kind)
		c.logger.Debug("gossip message refused", "err", err)
		return
	}
	v := b[1]
	if r, ok := m.(*RelayMsg); ok {
		d.takeRelay(r, b) // checked against its origin's signature, not a seal (relaywire.go)
		return
	}
	if err := c.revokedSender(m); err != nil { // revoked.go
		c.refused("revoked")
		c.logger.Debug("gossip message refused", "err", err)
		return
	}
	if err := c.seal.keys.Check(m, v, s, c.clock.Now()); err != nil { // certificates judged in cluster time (docs/DESIGN.md, Time)
		if errors.Is(err, errIntroLater) { // rate-limited, not refused: checked when it comes again
			c.refused("later")
			c.sendIntro(sender(m), true)
			c.logger.Debug("cluster: intro deferred", "from", sender(m), "err", err)
			return
		}
		c.refused(m.Type().String())
		switch {
		case errors.Is(err, errUnsigned):
			c.refused("unsigned")
		case errors.Is(err, errReplay):
			c.refused("replay")
		default:
			c.refused("signature")
		}
		if errors.Is(err, errAskIntro) {
			c.sendIntro(sender(m), true)
		}
		if errors.Is(err, errUnsigned) {
			// a board of a build that does not seal (a rolling upgrade, or
			// one rolled back: its join, without version-5 meta, may come
			// after this), or someone using its name: its certificate, over
			// TLS, tells which (docs/DESIGN.md, invariant 11)
			hint := ""
			if r, ok := m.(*ReportMsg); ok {
				hint = r.HTTP
			}
			c.askSealing(sender(m), hint)
			if !c.askedLoud(sender(m)) {
				c.logger.Debug("cluster: unsigned gossip held back until the board answers over HTTPS whether it seals", "from", sender(m), "err", err)
				return
			}
			err = fmt.Errorf("%w; it says over HTTPS that it seals, or does not answer there: someone else using its name, or its HTTPS is unreachable (a board rolled back to a build that does not seal is taken again once its certificate says so; it keeps hearing the master)", err)
		}
		c.warnAuth(sender(m), err)
		return
	}
	if in, ok := m.(*IntroMsg); ok {
		c.m.received.WithLabelValues(m.Type().String()).Inc()
		switch {
		case c.seal.keys.Unready(in.Name):
			// a new key that asked for ours: ours goes now, before anything
			// sealed for it (Tag waits for Introduced), and whatever its meta
			// says so far (a verified intro is of a build that reads them);
			// at most once per introCheckGap, as new keys are checked
			c.introNow(in.Name)
		case in.Want:
			c.sendIntro(in.Name, false)
		}
		return
	}
	d.enqueue(m, v)
}

func (d *delegate) enqueue(m Message, v uint8) {
	select {
	case d.c.inbox <- received{m: m, v: v}:
	default:
		d.c.refused("overflow")
	}
}

// GetBroadcasts gives memberlist a relayed cluster's messages to pass on
// (relaywire.go); elsewhere none: tables and reports go out directly.
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	if d.c.relay.q == nil {
		return nil
	}
	return d.c.relay.q.GetBroadcasts(overhead, limit)
}

// LocalState gives a joining board the master's table at once, when this
// board signs nothing. A board that signs gives nothing: memberlist does
// not say who the other side of a push-pull is, and a board of the last
// build (no node meta) refuses anything it cannot decode (an intro, a
// version-5 message) while it takes an empty state; an unsigned table
// would be refused by the boards that saw this one sign. Boards that sign
// trade intros when they see each other's meta (NotifyJoin,
// NotifyUpdate), and the table comes with the next heartbeat.
func (d *delegate) LocalState(join bool) []byte {
	c := d.c
	if c.seal.gkey != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.e.IsMaster() {
		return nil
	}
	t, _ := c.e.Table()
	b, err := EncodeVersion(&t, c.cfg.ProtocolVersion)
	if err != nil {
		return nil
	}
	return b
}

// MergeRemoteState takes the other side's table, if it sent one.
func (d *delegate) MergeRemoteState(b []byte, join bool) {
	if len(b) == 0 {
		return
	}
	d.NotifyMsg(b)
}

func (d *delegate) NotifyJoin(n *memberlist.Node) {
	d.setAddr(n.Name, n.Address())
	d.setMeta(n.Name, n.Meta)
	if metaVersion(n.Meta) >= ProtocolVersionSigned && n.Name != d.c.self.Name {
		d.c.sendIntro(n.Name, true) // a board that signs: trade keys now
	}
	d.askIfRolledBack(n)
	d.member(n.Name, true)
	d.c.logger.Debug("member joined", "name", n.Name, "addr", n.Address())
}

// NotifyLeave keeps the member's advertised version: a board that leaves
// (a restart) still reads what it read until it is gone, and one that
// comes back says again on its join or update (a rolled-back board
// without meta then gets version 4).
func (d *delegate) NotifyLeave(n *memberlist.Node) {
	d.setAddr(n.Name, "")
	d.member(n.Name, false)
	d.c.logger.Info("member left or died", "name", n.Name, "addr", n.Address())
}

func (d *delegate) NotifyUpdate(n *memberlist.Node) {
	d.setAddr(n.Name, n.Address())
	if d.setMeta(n.Name, n.Meta) && n.Name != d.c.self.Name {
		d.c.sendIntro(n.Name, true) // it restarted into a build that signs: trade keys now
	}
	d.askIfRolledBack(n)
}

// askIfRolledBack asks a member seen sealing that advertises no version 5
// whether it was rolled back, before its unsigned messages arrive.
func (d *delegate) askIfRolledBack(n *memberlist.Node) {
	if n.Name != d.c.self.Name && metaVersion(n.Meta) < ProtocolVersionSigned && d.c.seal.keys.Signs(n.Name) {
		d.c.askSealing(n.Name, "")
	}
}

// setMeta records the version a member advertises (nil meta: none), and
// reports whether it now advertises signing where it did not before.
func (d *delegate) setMeta(name string, meta []byte) (startsSigning bool) {
	c := d.c
	c.mem.mu.Lock()
	defer c.mem.mu.Unlock()
	c.near.fromMeta(c.logger, name, meta)
	v := metaVersion(meta)
	startsSigning = v >= ProtocolVersionSigned && c.mem.vers[name] < ProtocolVersionSigned
	if v != 0 {
		c.mem.vers[name] = v
	} else {
		delete(c.mem.vers, name)
	}
	return startsSigning
}

// setAddr records a member's address ("" removes it). memberlist calls the
// event methods with its node lock held, so reading n here is safe.
func (d *delegate) setAddr(name, addr string) {
	c := d.c
	c.mem.mu.Lock()
	defer c.mem.mu.Unlock()
	if addr == "" {
		if _, ok := c.mem.addrs[name]; ok {
			if c.mem.left == nil || len(c.mem.left) > 256 {
				c.mem.left = map[string]time.Time{}
			}
			c.mem.left[name] = time.Now()
		}
		delete(c.mem.addrs, name)
	} else {
		c.mem.addrs[name] = addr
		delete(c.mem.left, name)
	}
}

func (d *delegate) member(name string, up bool) {
	select {
	case d.c.mem.events <- memberEvent{name: name, up: up}:
	default:
	}
}

// NotifyConflict: two boards claim the same name. Logged loudly; memberlist
// keeps the first one.
func (d *delegate) NotifyConflict(existing, other *memberlist.Node) {
	d.c.logger.Error("cluster: two boards with the same name", "name", existing.Name,
		"existing", existing.Address(), "other", other.Address())
}
