//go:build !lite

package state

import (
	"bytes"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/ews-firmware/ews/state/nearnet"
	"github.com/ews-firmware/ews/state/row"
)

// 003's scheme 3 (§3.2, the dynamic proximity table): each board measures
// its round trip to the client networks it serves (node/clientrtt) and
// publishes its nearest ones in its memberlist node meta, after the
// protocol version (delegate.NodeMeta): memberlist gossips a changed meta
// to every member, and builds that read only the version ignore the rest,
// so no protocol version is needed. The gossip key protects it as it does
// the membership; a report is not sealed, so a holder of the key could
// misstate a board's distances (it could as well drop its messages). The
// lite build leaves it out (clientnets_lite.go): it has 6 KB of code to
// spare before its file grows a 64 KiB segment.

// nearMeta is this board's measurement, its published tail and every
// board's nets.
type nearMeta struct {
	meter nearnet.Meter
	mu    sync.Mutex
	own   []byte // this board's encoded nets (nearnet.Encode)
	table nearnet.Table
}

// ClientMeter is where this board's round trips to its clients are taken
// (node/clientrtt.Listen) before SetClientNets publishes the nearest.
func (c *Cluster) ClientMeter() *nearnet.Meter { return &c.near.meter }

func (n *nearMeta) tail() []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.own
}

// fromMeta takes a member's nets from its node meta; a malformed report is
// refused (logged) and the last good one kept.
func (n *nearMeta) fromMeta(log *slog.Logger, name string, meta []byte) {
	if len(meta) < 2 || meta[0] != metaMagic {
		n.table.Set(name, nil)
		return
	}
	nets, err := nearnet.Decode(meta[2:])
	if err != nil {
		log.Warn("state: a board's client networks refused", "board", name, "err", err)
		return
	}
	if problems := n.table.Set(name, nets); len(problems) > 0 {
		log.Warn("state: a board's client networks were cleaned", "board", name, "sent", len(nets), "problems", problems)
	}
}

// SetClientNets publishes this board's nearest client networks (at most
// nearnet.MaxNets): the master's dynamic table takes them, and gossip
// carries them to the others when they changed (a node meta update).
func (c *Cluster) SetClientNets(nets []nearnet.Net) {
	tail := nearnet.Encode(nets)
	c.near.mu.Lock()
	same := bytes.Equal(tail, c.near.own)
	c.near.own = tail
	c.near.mu.Unlock()
	if same {
		return
	}
	c.near.table.Set(c.self.Name, nets) // this board's own: Publish sends none it would clean
	if ml := c.mem.ml.Load(); ml != nil {
		if err := ml.UpdateNode(time.Second); err != nil {
			c.logger.Debug("state: client networks not gossiped yet", "err", err)
		}
	}
}

// ClientRTT is board's reported round trip to client's network (the
// dispatcher's sched.Options.ClientRTT); ok false when the board did not
// report that network among its nearest.
func (c *Cluster) ClientRTT(board string, client netip.Addr) (time.Duration, bool) {
	return c.near.table.RTT(board, client)
}

// markClientNets sets each row's client_nets from the boards' reports.
func (c *Cluster) markClientNets(rows []Board) {
	for i := range rows {
		for _, n := range c.near.table.Nets(rows[i].Name) {
			rows[i].ClientNets = append(rows[i].ClientNets, row.ClientNet{Net: n.Prefix.String(), RTTMs: float64(n.RTT.Microseconds()) / 1000})
		}
	}
}
