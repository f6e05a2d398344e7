package state

import (
	"encoding/binary"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// Boards measure each other's clocks on memberlist's probes
// (docs/DESIGN.md, Time): the ack of every ping carries the acker's own
// clock (clock.Local), its correction to cluster time and whether it is
// master; the pinger takes offset = t3 + rtt/2 − t4, NTP's on-wire
// estimate with the ack's send time in the middle of the round trip. The
// probes run whether or not the sealed messages above them are accepted,
// so a board whose clock is too wrong to check its peers' certificates
// still learns the time from them.

// ackMagic and ackVersion open a clock ack payload; anything else (a
// build that sends none) is ignored.
const (
	ackMagic   = 0xC7
	ackVersion = 1
	ackLen     = 1 + 1 + 1 + 8 + 8
)

// Flags of a clock ack.
const (
	ackMaster   = 1 << 0 // the acker is master
	ackMeasured = 1 << 1 // the acker's correction was measured (it follows a master)
)

// clockSamples is how many offsets are kept per peer; the median is the
// offset (one late ack does not move it).
const clockSamples = 5

// peerClock is what this board measured of one peer's clock. Each
// sample is kept plus this board's own steps at the time it was taken
// (clock.Stepped), so a step of this board's clock does not move the
// median: offset and clusterOffset take the steps since back off.
type peerClock struct {
	samples  []time.Duration // the peer's Local minus this board's, latest last
	cluster  []time.Duration // the peer's cluster time (Local plus its correction) minus this board's Local
	rtts     []time.Duration // the round trips of the same acks, latest last
	rtt      time.Duration
	heard    time.Time // this board's monotonic time of the last ack
	master   bool      // the last ack said it is master
	measured bool      // … and that its correction was measured
}

// offset is the median of the samples, stepped is this board's
// clock.Stepped now.
func (p *peerClock) offset(stepped time.Duration) time.Duration { return median(p.samples) - stepped }

// clusterOffset is what this board's Local lacks of the peer's cluster
// time: the median of its acks' Local plus correction, each taken with
// the correction of the same ack, so a peer whose clock stepped (and whose
// correction took the step back) moves none of it.
func (p *peerClock) clusterOffset(stepped time.Duration) time.Duration {
	return median(p.cluster) - stepped
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// clocks holds the measured offsets; memberlist calls it from its own
// goroutines.
type clocks struct {
	mu    sync.Mutex
	peers map[string]*peerClock
	// stepped is this board's clock.Stepped (nil: never stepped).
	stepped func() time.Duration
}

func (k *clocks) steps() time.Duration {
	if k.stepped == nil {
		return 0
	}
	return k.stepped()
}

// pinger is the Cluster's memberlist PingDelegate.
type pinger struct{ c *Cluster }

var _ memberlist.PingDelegate = (*pinger)(nil)

// AckPayload is this board's clock as its acks carry it.
func (p pinger) AckPayload() []byte {
	c := p.c
	b := make([]byte, 0, ackLen)
	var flags byte
	if c.IsMaster() {
		flags |= ackMaster
	}
	if c.clock.Measured() {
		flags |= ackMeasured
	}
	return clockAck(b, flags, c.clock.Local(), c.clock.Correction())
}

// clockAck appends an ack payload to b.
func clockAck(b []byte, flags byte, local time.Time, corr time.Duration) []byte {
	b = append(b, ackMagic, ackVersion, flags)
	b = binary.BigEndian.AppendUint64(b, uint64(local.UnixNano()))
	return binary.BigEndian.AppendUint64(b, uint64(corr))
}

// NotifyPingComplete records other's offset from its ack and sets this
// board's correction to cluster time.
func (p pinger) NotifyPingComplete(other *memberlist.Node, rtt time.Duration, payload []byte) {
	t4 := p.c.clock.Local()
	if other == nil || len(payload) < ackLen || payload[0] != ackMagic || payload[1] != ackVersion {
		return
	}
	t3 := time.Unix(0, int64(binary.BigEndian.Uint64(payload[3:])))
	corr := time.Duration(int64(binary.BigEndian.Uint64(payload[11:])))
	p.c.clocks.record(other.Name, t3.Add(rtt/2).Sub(t4), rtt, payload[2], corr, time.Now())
	p.c.correctClock()
}

// record adds one sample of name's offset.
func (k *clocks) record(name string, off, rtt time.Duration, flags byte, corr time.Duration, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.peers == nil {
		k.peers = map[string]*peerClock{}
	}
	pc := k.peers[name]
	if pc == nil {
		pc = &peerClock{}
		k.peers[name] = pc
	}
	st := k.steps()
	pc.samples = append(pc.samples, off+st)
	if len(pc.samples) > clockSamples {
		pc.samples = pc.samples[1:]
	}
	pc.cluster = append(pc.cluster, off+corr+st)
	if len(pc.cluster) > clockSamples {
		pc.cluster = pc.cluster[1:]
	}
	pc.rtts = append(pc.rtts, rtt)
	if len(pc.rtts) > clockSamples {
		pc.rtts = pc.rtts[1:]
	}
	pc.rtt, pc.heard = rtt, now
	pc.master, pc.measured = flags&ackMaster != 0, flags&ackMeasured != 0
}

// clockFresh is how long an ack's claims (master, measured) count.
const clockFresh = 5 * time.Second

// ClockOffsets is each peer's clock minus this board's, as measured
// (RTT-corrected); a peer not measured yet is missing.
func (c *Cluster) ClockOffsets() map[string]time.Duration {
	c.clocks.mu.Lock()
	defer c.clocks.mu.Unlock()
	out := make(map[string]time.Duration, len(c.clocks.peers))
	st := c.clocks.steps()
	for name, pc := range c.clocks.peers {
		out[name] = pc.offset(st)
	}
	return out
}

// rttFresh is how long a peer's measured round trip counts after its last
// ack: a few probe rounds, so a peer that went quiet is not ranked near.
const rttFresh = 30 * time.Second

// PeerRTT is the median round trip of this board's last probe acks from
// name (learned proximity, docs/NOTES.md, Policies); ok is false when
// name was not heard within rttFresh.
func (c *Cluster) PeerRTT(name string) (rtt time.Duration, ok bool) {
	c.clocks.mu.Lock()
	defer c.clocks.mu.Unlock()
	pc := c.clocks.peers[name]
	if pc == nil || len(pc.rtts) == 0 || time.Since(pc.heard) > rttFresh {
		return 0, false
	}
	s := slices.Clone(pc.rtts)
	slices.Sort(s)
	return s[len(s)/2], true
}

// correctClock sets the board clock's correction to cluster time, the
// master's corrected clock (its Local plus its own correction, which its
// acks carry): the master is the lowest-ranked of this view's master and
// the boards whose acks say they are master (a board whose clock is too
// wrong to accept its peers' certificates hears no table, may think
// itself master, and learns the time from the acks); with none, a peer
// that follows one. The master itself keeps the correction it had, so
// cluster time carries on across a takeover instead of jumping to the new
// master's own clock. Nothing measured: the correction stays.
func (c *Cluster) correctClock() {
	d, ok := c.clockCorrection(time.Now())
	if !ok {
		return
	}
	// the median moves by a few ms from probe to probe: leave cluster time
	// steady unless it moved more (durations read off it stay true)
	if old := c.clock.Correction(); c.clock.Measured() && (d-old).Abs() < clockSteady {
		return
	}
	c.clock.SetCorrection(d)
}

// clockSteady is the change of the measured correction that moves cluster
// time.
const clockSteady = 10 * time.Millisecond

// clockCorrection is correctClock's decision at monotonic time now; false:
// keep the correction.
func (c *Cluster) clockCorrection(now time.Time) (time.Duration, bool) {
	master, _, _ := c.Master()
	selfMaster := master == c.self.Name
	c.clocks.mu.Lock()
	defer c.clocks.mu.Unlock()
	best, bestRank := "", len(c.peers)
	for _, p := range c.peers {
		pc := c.clocks.peers[p.Name]
		claims := p.Name == master && (selfMaster || pc != nil)
		if p.Name != c.self.Name && pc != nil && pc.master && now.Sub(pc.heard) < clockFresh {
			claims = true
		}
		if claims && p.Rank < bestRank {
			best, bestRank = p.Name, p.Rank
		}
	}
	switch {
	case best == c.self.Name:
		return 0, false
	case best != "":
		return c.clocks.peers[best].clusterOffset(c.clocks.steps()), true
	}
	for _, p := range c.peers {
		if pc := c.clocks.peers[p.Name]; pc != nil && pc.measured && now.Sub(pc.heard) < clockFresh {
			return pc.clusterOffset(c.clocks.steps()), true
		}
	}
	return 0, false
}
