package state

import (
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

// NodeMeta is empty: the HTTP address travels in the reports.
func (d *delegate) NodeMeta(limit int) []byte { return nil }

// NotifyMsg decodes a message (memberlist reuses b after we return).
func (d *delegate) NotifyMsg(b []byte) {
	c := d.c
	c.m.bytes.WithLabelValues("received").Add(len(b))
	m, v, err := DecodeVersion(b)
	if err != nil {
		kind := "unknown"
		if len(b) > 0 {
			kind = MsgType(b[0]).String()
		}
		c.refused(kind)
		c.logger.Debug("gossip message refused", "err", err)
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

// GetBroadcasts is unused: tables and reports go out directly each heartbeat.
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }

// LocalState gives a joining board the master's table at once.
func (d *delegate) LocalState(join bool) []byte {
	c := d.c
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
	d.member(n.Name, true)
	d.c.logger.Debug("member joined", "name", n.Name, "addr", n.Address())
}

func (d *delegate) NotifyLeave(n *memberlist.Node) {
	d.setAddr(n.Name, "")
	d.member(n.Name, false)
	d.c.logger.Info("member left or died", "name", n.Name, "addr", n.Address())
}

func (d *delegate) NotifyUpdate(n *memberlist.Node) { d.setAddr(n.Name, n.Address()) }

// setAddr records a member's address ("" removes it). memberlist calls the
// event methods with its node lock held, so reading n here is safe.
func (d *delegate) setAddr(name, addr string) {
	c := d.c
	c.amu.Lock()
	defer c.amu.Unlock()
	if addr == "" {
		delete(c.addrs, name)
	} else {
		c.addrs[name] = addr
	}
}

func (d *delegate) member(name string, up bool) {
	select {
	case d.c.members <- memberEvent{name: name, up: up}:
	default:
	}
}

// NotifyConflict: two boards claim the same name. Logged loudly; memberlist
// keeps the first one.
func (d *delegate) NotifyConflict(existing, other *memberlist.Node) {
	d.c.logger.Error("cluster: two boards with the same name", "name", existing.Name,
		"existing", existing.Address(), "other", other.Address())
}
