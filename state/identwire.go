package state

import (
	"context"
	"errors"
	"maps"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
)

// introOut is an intro to send to board to; want asks for its intro back.
type introOut struct {
	to   string
	want bool
}

// introGap is the least time between two intros to one board: a flood of
// messages this board cannot check (forged, or of a board that restarted)
// costs its real sender one intro per gap.
const introGap = 100 * time.Millisecond

// sendIntro queues this board's intro for board to; it never blocks (it
// is called from memberlist's callbacks) and does nothing for a board that
// signs nothing.
func (c *Cluster) sendIntro(to string, want bool) {
	if c.seal.gkey == nil || to == "" || to == c.self.Name {
		return
	}
	select {
	case c.seal.introOut <- introOut{to: to, want: want}:
	default:
	}
}

// introLoop sends the queued intros, at most one per board per introGap:
// by UDP when it fits a packet, else over memberlist's TCP stream.
func (c *Cluster) introLoop(ctx context.Context) {
	last := map[string]time.Time{}
	for {
		var out introOut
		select {
		case <-ctx.Done():
			return
		case out = <-c.seal.introOut:
		}
		if !c.seal.keys.isPeer(out.to) || time.Since(last[out.to]) < introGap {
			continue
		}
		if c.memberVersions()[out.to] < ProtocolVersionSigned {
			continue // a board of a build before version 5 (no meta): it cannot read an intro
		}
		last[out.to] = time.Now()
		b, err := c.seal.gkey.Intro(out.want)
		if err != nil {
			c.logger.Error("cluster: encode this board's intro", "err", err)
			continue
		}
		if err := c.sendRaw(out.to, b); err != nil {
			c.logger.Debug("send intro", "to", out.to, "err", err)
			continue
		}
		c.seal.keys.Introduced(out.to)
		c.m.sent.WithLabelValues(introMsgType.String()).Inc()
		c.m.bytes.WithLabelValues("sent").Add(len(b))
	}
}

// introNow sends this board's intro to board to at once, from the
// receiving goroutine, and then lets messages be sealed for it.
func (c *Cluster) introNow(to string) {
	b, err := c.seal.gkey.Intro(false)
	if err != nil {
		c.logger.Error("cluster: encode this board's intro", "err", err)
		return
	}
	if err := c.sendRaw(to, b); err != nil {
		c.logger.Debug("send intro", "to", to, "err", err)
		c.sendIntro(to, false) // introLoop tries again
		return
	}
	c.seal.keys.Introduced(to)
	c.m.sent.WithLabelValues(introMsgType.String()).Inc()
	c.m.bytes.WithLabelValues("sent").Add(len(b))
}

// sendRaw sends an encoded message to board to at the address the
// membership knows it by, else its configured literal IP.
func (c *Cluster) sendRaw(to string, b []byte) error {
	addr, ok := c.addrOf(to, c.memberAddrs())
	if !ok {
		return errors.New("state: no address")
	}
	ml := c.mem.ml.Load()
	if ml == nil {
		return errors.New("state: gossip not started yet")
	}
	if len(b) <= MaxPacket {
		return ml.SendToAddress(memberlist.Address{Addr: addr, Name: to}, b)
	}
	host, sport, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(sport)
	if err != nil || perr != nil {
		return errors.New("state: bad address " + addr)
	}
	return ml.SendReliable(&memberlist.Node{Name: to, Addr: net.ParseIP(host), Port: uint16(port)}, b)
}

// memberVersions copies the versions members advertise (NodeMeta).
func (c *Cluster) memberVersions() map[string]uint8 {
	c.mem.mu.Lock()
	defer c.mem.mu.Unlock()
	return maps.Clone(c.mem.vers)
}

// logIdentity says once at start whether this board's gossip is signed,
// and later once when every peer signs.
func (c *Cluster) logIdentity() {
	if c.seal.gkey == nil {
		msg := "cluster: this board has no board certificate (a board bundle's cert): it seals no gossip and checks no seal, so any board holding the cluster key can speak for it; mint one with `ews cluster board`"
		if c.cfg.Insecure {
			c.logger.Info(msg)
		} else {
			c.logger.Warn(msg)
		}
		return
	}
	names := make([]string, len(c.peers))
	for i, p := range c.peers {
		names[i] = p.Name
	}
	c.seal.keys.OnAllSigning(names, func() {
		c.logger.Info("cluster: every board seals its gossip: unsigned messages are refused from now on")
	})
}

// warnAuth logs a refused signature: loudly, once a minute per board, when
// it is a sign of someone using the board's name (an unsigned message of a
// board that signs, a replay, an intro that does not verify); at debug
// when a fresh intro may cure it (a board that restarted, or whose intro
// has not arrived yet).
func (c *Cluster) warnAuth(name string, err error) {
	if errors.Is(err, errAskIntro) {
		c.logger.Debug("gossip message refused", "from", name, "err", err)
		return
	}
	c.seal.authLog.logf(c, name, err, "cluster: gossip message refused: it does not carry the seal of the board it names (someone using its name, a replay, or a certificate of another cluster)")
}
