package state

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/memberlist"
)

// A relayed cluster is one whose table may not fit one packet (invariant
// 8): there the master's messages are not sent to every board but handed
// to gossip, each board passing each one on to a few others
// (docs/DESIGN.md, Gossip, "Relayed clusters"; docs/NOTES.md, "Beyond 68
// boards").

// RelayMsg carries one board's message (Inner, encoded at version 4) in a
// relayed cluster, as the board that wrote it (Origin) sent it and every
// board passes it on unchanged. Boot and Seq tell Origin's runs and
// messages apart: a board takes each (Origin, Boot, Seq) once. Sig is
// Origin's certificate key's signature of relayDigest when Origin has a
// board certificate (invariant 11): a relayer cannot forge or alter what
// it passes on. Sent at version 4, unsealed: the same bytes go to every
// board.
type RelayMsg struct {
	Origin string
	Boot   uint64 // Origin's run: its intro's Boot when it signs
	Seq    uint64 // Origin's relayed messages, from 1 in each run
	Inner  []byte
	Sig    []byte
}

// DeltaMsg is the rows of the master's table that changed at Version
// (relayed clusters): Hash is the whole table's at Version (TableHash), so
// a follower whose rows add up to another table notices at the next
// digest. Stats, when not nil, are the master's class stats, changed.
type DeltaMsg struct {
	Epoch     uint64
	Master    string
	Version   uint64
	Hash      uint32
	PeersHash uint32
	Rows      Rows
	Stats     ClassStats
}

func (m *RelayMsg) validate() error {
	if err := validName(m.Origin); err != nil {
		return fmt.Errorf("origin: %w", err)
	}
	switch {
	case m.Seq == 0:
		return errors.New("relay: sequence 0")
	case len(m.Inner) < headerLen+1 || len(m.Inner) > MaxPacket:
		return fmt.Errorf("relay: a message of %d bytes", len(m.Inner))
	case len(m.Sig) > 160:
		return fmt.Errorf("relay: a signature of %d bytes", len(m.Sig))
	}
	return nil
}

func (m *DeltaMsg) validate() error {
	t := TableMsg{Epoch: m.Epoch, Master: m.Master, Rows: m.Rows, Stats: m.Stats}
	return t.validate()
}

// relayDigest is what Origin's certificate key signs: the message and
// where it stands among Origin's.
func relayDigest(origin string, boot, seq uint64, inner []byte) []byte {
	h := sha256.New()
	h.Write([]byte("ews relay v4\x00"))
	h.Write([]byte(origin))
	h.Write([]byte{0})
	h.Write(binary.BigEndian.AppendUint64(nil, boot))
	h.Write(binary.BigEndian.AppendUint64(nil, seq))
	h.Write(inner)
	return h.Sum(nil)
}

// Relay sizes. memberlist piggybacks user broadcasts on its gossip
// packets of UDPBufferSize (MaxPacket) bytes, less its compound header (2),
// the AES-GCM overhead (29) and 3 bytes per message; a RelayMsg adds its
// origin, run, sequence and signature to the message it carries.
const (
	gcmOverhead   = 29                          // memberlist's AES-GCM: version byte, nonce, tag
	relayPacket   = MaxPacket - 2 - gcmOverhead // what one gossip packet has for broadcasts
	relayPerMsg   = 3                           // memberlist's framing of each
	relayEnvelope = 2 + 1 + 1 + maxNameLen + 9 + 9 + 3 + 2 + 80
	// maxRelayInner is the largest message a RelayMsg carries: one
	// packet, whatever else memberlist piggybacks.
	maxRelayInner = relayPacket - relayPerMsg - relayEnvelope
	// RetransmitMult is memberlist's: each board passes a relayed message
	// on RetransmitMult·⌈log10(n+1)⌉ times (16 at 1,024 boards).
	RetransmitMult = 4
	// maxRelayQueue bounds a board's queue of messages to pass on.
	maxRelayQueue = 4096
)

// Relayed reports whether a cluster of these boards relays: whether its
// table, sealed, with every figure at its widest as invariant 8 counts
// them (linknum and capacity 1,000, weight 100, loads at 999 per mille,
// ages of a minute, a day's run of sequence numbers), may be over one
// packet.
func Relayed(names []string) bool {
	t := TableMsg{Epoch: 1 << 40, Version: 1 << 40, PeersHash: ^uint32(0), Rows: make(Rows, len(names))}
	for i, n := range names {
		if len(n) > len(t.Master) {
			t.Master = n
		}
		t.Rows[i] = Row{Rank: uint16(i), Name: n, Linknum: 1000, Capacity: 1000, Weight: 100,
			Runstate: Overloaded, CPU: 999, Mem: 999, Net: 999, Disk: 999, AgeMs: 60000}
	}
	e := enc{}
	e.b = append(e.b, byte(tableMsgType), ProtocolVersionSigned)
	e.b = binary.AppendUvarint(e.b, 1<<20)
	encodeTable(&e, &t, tableFieldsV1)
	return len(e.b)+tagLen > MaxPacket
}

// relaySeen is what a board took of one origin's relayed messages: its
// run and a window of 64 sequence numbers (as GossipKeys takes sealed
// ones).
type relaySeen struct{ boot, top, seen uint64 }

// take records (boot, seq) and reports whether it is new: a later run
// starts afresh, an earlier one is refused.
func (w *relaySeen) take(boot, seq uint64) bool {
	switch {
	case boot < w.boot:
		return false
	case boot > w.boot:
		*w = relaySeen{boot: boot, top: seq, seen: 1}
		return true
	case seq > w.top:
		if d := seq - w.top; d < 64 {
			w.seen = w.seen<<d | 1
		} else {
			w.seen = 1
		}
		w.top = seq
		return true
	case w.top-seq >= 64:
		return false
	}
	bit := uint64(1) << (w.top - seq)
	if w.seen&bit != 0 {
		return false
	}
	w.seen |= bit
	return true
}

// relayQueue is a board's part in a relayed cluster: the messages it
// passes on, in memberlist's TransmitLimitedQueue (GetBroadcasts is the
// Delegate's), and what it has taken of each origin.
type relayQueue struct {
	q    memberlist.TransmitLimitedQueue
	mu   sync.Mutex
	seen map[string]*relaySeen
}

func newRelayQueue(numNodes func() int) *relayQueue {
	return &relayQueue{q: memberlist.TransmitLimitedQueue{NumNodes: numNodes, RetransmitMult: RetransmitMult}, seen: map[string]*relaySeen{}}
}

// taken reports whether m was taken here already (a copy: no need to
// check its signature again).
func (r *relayQueue) taken(m *RelayMsg) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.seen[m.Origin]
	if w == nil || m.Boot != w.boot {
		return w != nil && m.Boot < w.boot
	}
	if m.Seq > w.top {
		return false
	}
	return w.top-m.Seq >= 64 || w.seen&(1<<(w.top-m.Seq)) != 0
}

// fresh reports whether m is new here, and records it.
func (r *relayQueue) fresh(m *RelayMsg) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.seen[m.Origin]
	if w == nil {
		w = &relaySeen{}
		r.seen[m.Origin] = w
	}
	return w.take(m.Boot, m.Seq)
}

// push queues b, an encoded RelayMsg carrying a message of kind from
// origin, to be passed on. A newer digest or report of one origin
// replaces the older in the queue (named); deltas and step-downs each
// go on their own.
func (r *relayQueue) push(origin string, kind MsgType, b []byte) {
	switch kind {
	case digestMsgType, reportMsgType:
		r.q.QueueBroadcast(namedRelay{name: kind.String() + "/" + origin, b: b})
	default:
		r.q.QueueBroadcast(uniqueRelay{b: b})
	}
	if r.q.NumQueued() > maxRelayQueue {
		r.q.Prune(maxRelayQueue)
	}
}

// GetBroadcasts is memberlist's Delegate.GetBroadcasts.
func (r *relayQueue) GetBroadcasts(overhead, limit int) [][]byte {
	return r.q.GetBroadcasts(overhead, limit)
}

type namedRelay struct {
	name string
	b    []byte
}

func (n namedRelay) Invalidates(b memberlist.Broadcast) bool {
	o, ok := b.(namedRelay)
	return ok && o.name == n.name
}
func (n namedRelay) Name() string    { return n.name }
func (n namedRelay) Message() []byte { return n.b }
func (n namedRelay) Finished()       {}

type uniqueRelay struct{ b []byte }

func (uniqueRelay) Invalidates(memberlist.Broadcast) bool { return false }
func (uniqueRelay) UniqueBroadcast()                      {}
func (u uniqueRelay) Message() []byte                     { return u.b }
func (uniqueRelay) Finished()                             {}

// wrapRelay encodes m as origin's relayed message number seq of run boot,
// signed with sign when not nil.
func wrapRelay(origin string, boot, seq uint64, m Message, sign func(digest []byte) ([]byte, error)) ([]byte, error) {
	inner, err := EncodeVersion(m, ProtocolVersionUnsigned)
	if err != nil {
		return nil, err
	}
	if len(inner) > maxRelayInner {
		return nil, fmt.Errorf("state: relay %s: %d bytes, over the %d a relayed message may carry", m.Type(), len(inner), maxRelayInner)
	}
	r := RelayMsg{Origin: origin, Boot: boot, Seq: seq, Inner: inner}
	if sign != nil {
		if r.Sig, err = sign(relayDigest(origin, boot, seq, inner)); err != nil {
			return nil, fmt.Errorf("state: relay %s: sign: %w", m.Type(), err)
		}
	}
	return EncodeVersion(&r, ProtocolVersionUnsigned)
}

// unwrapRelay decodes the message r carries, which must be Origin's own.
func unwrapRelay(r *RelayMsg) (Message, error) {
	if r.Inner[1] > ProtocolVersionUnsigned {
		return nil, fmt.Errorf("state: relayed message of %s at version %d: %w", r.Origin, r.Inner[1], ErrVersion)
	}
	m, err := Decode(r.Inner)
	if err != nil {
		return nil, err
	}
	switch m.(type) {
	case *RelayMsg, *IntroMsg, *TableMsg, *TableReqMsg, *PeerListMsg:
		return nil, fmt.Errorf("state: a %s is never relayed (from %s)", m.Type(), r.Origin)
	}
	if s := sender(m); s != r.Origin {
		return nil, fmt.Errorf("state: relayed %s of %s names %q", m.Type(), r.Origin, s)
	}
	return m, nil
}

// chunkDelta splits rows into deltas of at most maxRelayInner bytes each
// (the first with stats, when they fit); no rows and no stats: none.
func chunkDelta(head DeltaMsg, rows Rows, stats ClassStats) []*DeltaMsg {
	var out []*DeltaMsg
	base := func() int {
		d := head
		b, _ := EncodeVersion(&d, ProtocolVersionUnsigned)
		return len(b) + 3 // the rows' array header at its widest
	}()
	if stats != nil {
		var e enc
		encodeStats(&e, stats)
		if base+len(e.b) > maxRelayInner {
			stats = nil // a display: the rows must go (as a table drops them, invariant 8)
		}
	}
	cur := head
	cur.Stats = stats
	size := base
	if stats != nil {
		var e enc
		encodeStats(&e, stats)
		size += len(e.b)
	}
	for i := range rows {
		var e enc
		encodeRow(&e, &rows[i])
		if len(cur.Rows) > 0 && size+len(e.b) > maxRelayInner {
			c := cur
			out = append(out, &c)
			cur, size = head, base
		}
		cur.Rows = append(cur.Rows, rows[i])
		size += len(e.b)
	}
	if len(cur.Rows) > 0 || cur.Stats != nil {
		out = append(out, &cur)
	}
	return out
}
