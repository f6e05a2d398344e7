package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// MsgType is the first byte of every message. ONLY APPEND TO THIS LIST:
// the numbers are on the wire, and a board running an older build must keep
// reading the types it knows.
type MsgType uint8

const (
	tableMsgType    MsgType = iota + 1 // master -> all: the table
	reportMsgType                      // board -> all: its in-flight count, runstate, load
	stepDownMsgType                    // master -> all: it gives up mastership (shutdown)
	peerListMsgType                    // board -> board: its peer list, sent when the hashes differ
	digestMsgType                      // master -> all (version 4): epoch, version and hash of the table, on heartbeats without a change
	tableReqMsgType                    // board -> master (version 4): send me the table (a digest named one this board lacks)
	introMsgType                       // board -> board (version 5): its certificate and the gossip key it signs with (ident.go)
	relayMsgType                       // any -> any (version 4, relayed clusters): a board's message passed on by gossip, signed by that board (relay.go)
	deltaMsgType                       // master -> all, relayed (version 4): the rows that changed at a table version (relay.go)
)

var msgTypeNames = map[MsgType]string{
	tableMsgType:    "table",
	reportMsgType:   "report",
	stepDownMsgType: "stepdown",
	peerListMsgType: "peerlist",
	digestMsgType:   "digest",
	tableReqMsgType: "tablereq",
	introMsgType:    "intro",
	relayMsgType:    "relay",
	deltaMsgType:    "delta",
}

func (t MsgType) String() string {
	if n, ok := msgTypeNames[t]; ok {
		return n
	}
	return "unknown"
}

// Protocol versions: the second byte of every message. A board sends
// Config.ProtocolVersion and accepts ProtocolVersionMin..ProtocolVersionMax.
// Fields are only ever appended to a message's array, so a newer message
// minus its new fields is the older one, and a decoder leaves fields an
// older sender did not write at their zero value. ONLY RAISE THESE.
//
//	1: the first protocol.
//	2: TableMsg.Stats, the master's queue stats per class.
//	3: ReportMsg.Creds, the fingerprint of the board's HTTP credentials;
//	   StepDownMsg.PeersHash: every message but the peer list itself
//	   carries the peer-list hash, and a board refuses one that differs;
//	   ReportMsg's raw load figures (DiskUsed … MemMB);
//	   ReportMsg.Simulated, the board runs on the simulated board.
//	4: DigestMsg and TableReqMsg: a master whose table did not change
//	   sends a digest on the heartbeat instead of the table, and a board
//	   that lacks the digest's version asks for the table. A board that
//	   speaks 1..3 gets full tables, each message encoded at its version.
//	5: board identity (ident.go, docs/DESIGN.md invariant 11): every
//	   version-5 message is sealed: type byte, version byte, uvarint
//	   sequence number, msgpack array, and a 16-byte tag of all before it
//	   (HMAC-SHA256 under the key the sender and this receiver share,
//	   from their X25519 gossip keys); IntroMsg carries a board's gossip
//	   key, endorsed by its board certificate from the cluster CA. "Signed"
//	   below means sealed so. The fields are version 4's. Compatibility
//	   rules, which a rolling upgrade from version 4 relies on:
//	   - a board with a board certificate (Config.Identity) advertises
//	     version 5 in its memberlist node meta and sends version 5 to every
//	     board that advertises it once it holds that board's key (from its
//	     intro), and version 4 or older, unsigned, to a board that
//	     advertises 4 or has no meta, at most the version of that board's
//	     last message. A board without meta (the last build, or one rolled
//	     back to it) is never sent version 5 nor an intro, whatever it sent
//	     before, and a push-pull of a board that signs carries nothing
//	     (memberlist does not say who the other side is; the last build
//	     refuses a state it cannot decode). Intros go to boards that
//	     advertise 5: on NotifyJoin, on NotifyUpdate when the meta turns
//	     to 5, and when a message cannot be sealed or checked;
//	   - it accepts an unsigned message (version 4 or older) naming board
//	     B until it has verified one signed message of B; from then on, for
//	     the rest of its run, it refuses unsigned messages naming B. Once
//	     every peer has signed, it so refuses every unsigned message;
//	   - nothing is sealed for a board whose new intro asked for ours
//	     until ours has gone to it (sent at once on receipt), so a sealed
//	     message never overtakes the intro it needs;
//	   - rollback: a board B seen signing that advertises no version 5 (its
//	     firmware trial failed and the A/B slot rolled it back to the last
//	     build) stays refused unsigned on gossip evidence, since its meta
//	     proves nothing (any board with the cluster key can gossip B's
//	     membership). It is sent version 4 and, where the others get a
//	     digest, the full table (its table requests are refused too): it
//	     hears the master and never makes itself master. Its membership
//	     without version 5, or any unsigned message naming it, makes the
//	     receiver ask B itself (askSeals; every 500 ms until B answers, then
//	     every 5 s at most): a TLS handshake with B's HTTPS offering
//	     SealsALPN and http/1.1, B's certificate checked against the
//	     cluster CA and named B. This build offers SealsALPN first, the
//	     last build only http/1.1; only B's certificate key completes the
//	     handshake. If B chose http/1.1, its unsigned messages are taken
//	     again (GossipKeys.Forget) until it seals again; SealsALPN or no
//	     answer changes nothing. Until B answers, its refused unsigned
//	     messages are logged at debug; once it says it seals (someone is
//	     using its name) or has not answered 3 times, loudly;
//	   - a member's advertised version is kept when it leaves: a sealing
//	     board shutting down still gets version 5 (version 4 would be
//	     refused there as unsigned); its next join or update says again;
//	   - a board without a certificate (insecure clusters, the demo,
//	     bundles older than version 3) advertises version 4, signs nothing
//	     and checks nothing: it has no key to be sealed for, nor a CA.
const (
	ProtocolVersionMin      uint8 = 1
	ProtocolVersionMax      uint8 = 5
	ProtocolVersionUnsigned uint8 = 4                  // the highest version without signatures: what Encode sends
	ProtocolVersionSigned   uint8 = 5                  // the first version whose messages are sealed (signed)
	ProtocolVersion               = ProtocolVersionMax // what a board with an identity sends
)

// Limits on what a decoder accepts; anything larger is refused unread.
const (
	MaxBoards     = 1024      // rows in a table, entries in a peer list
	MaxMessage    = 128 << 10 // bytes of one encoded message (a full table of a relayed cluster goes over TCP)
	MaxClasses    = 16        // entries of TableMsg.Stats
	MaxPacket     = 1400      // bytes of a table with stats: one UDP packet (invariant 8)
	maxNameLen    = 63        // a board name (config allows 63)
	maxAddrLen    = 262       // host (255) + ":" + port
	headerLen     = 2         // type byte + version byte
	tagLen        = 16        // HMAC-SHA256 tag closing a version-5 message (ident.go)
	maxCertLen    = 4096      // bytes of an IntroMsg's certificate
	neverHeardAge = ^uint32(0)
)

// Message is one of the messages boards exchange.
type Message interface {
	Type() MsgType
	validate() error
}

// TableMsg is the master's table, broadcast at least every heartbeat and
// after each change. Rank and name are enough to find a row's addresses in
// the receiver's own peer list; PeersHash tells whether that list matches.
type TableMsg struct {
	Epoch     uint64
	Master    string
	Version   uint64
	PeersHash uint32
	Rows      Rows
	// Stats (version 2) are the master's queue depths and dispatch counts
	// per class, sorted by class name, as of the heartbeat; every board's
	// /api/cluster shows them. Absent from version-1 tables.
	Stats ClassStats
}

// ClassStat is one class of the master's queue.
type ClassStat struct {
	Name       string
	Depth      uint32 // requests waiting now
	Dispatched uint64 // requests dispatched since this board became master
}

// ClassStats is a bounded list: its decoder refuses more than MaxClasses.
type ClassStats []ClassStat

// Row is one board in the table.
type Row struct {
	Rank     uint16
	Name     string
	Linknum  uint32
	Capacity uint32
	Weight   uint32
	Runstate Runstate
	CPU      uint16 // load per mille, flat rather than a nested array: one byte less per row
	Mem      uint16
	Net      uint16
	Disk     uint16
	AgeMs    uint32 // ms since the master last heard the board when it sent the table; MaxUint32: never
}

// Rows is a bounded list of rows: its decoder refuses more than MaxBoards.
type Rows []Row

// ReportMsg is one board's own view of itself, sent to every board each
// heartbeat. InFlight is the truth for the board's linknum (invariant 3).
type ReportMsg struct {
	Name      string
	Epoch     uint64 // epoch of the master this board follows (0: none yet)
	HTTP      string // host:port clients and the master reach this board's HTTP on
	InFlight  uint32
	Completed uint64
	Capacity  uint32
	Weight    uint32
	Runstate  Runstate
	CPU       uint16 // load per mille
	Mem       uint16
	Net       uint16
	Disk      uint16
	PeersHash uint32
	// Creds (version 3) fingerprints the board's HTTP credentials (see
	// Config.Creds): boards whose fingerprint differs from the master's
	// refuse the requests it forwards. 0: unknown (older build, insecure).
	Creds uint64
	// Version 3: the raw load figures the papers' formulas need (Load).
	DiskUsed uint16 // per mille of the root file system's space
	NetPPS   uint32 // packets/s
	DiskOps  uint32 // disk operations/s
	CPUMHz   uint32 // static cpu capacity
	MemMB    uint32 // static memory size
	// Simulated (version 3): the board's devices drive no hardware
	// (node.board = "sim" or a [sim] table); /api/cluster shows it. One
	// byte; absent (false) from older reports.
	Simulated bool
}

// StepDownMsg tells every board that Name gives up the mastership of Epoch
// (graceful shutdown), so the next board takes over without waiting tmax.
type StepDownMsg struct {
	Name  string
	Epoch uint64
	// PeersHash (version 3) is the sender's peer-list hash; 0 from older
	// senders, which do not carry it.
	PeersHash uint32
}

// PeerListMsg carries a board's configured peer list ("name=host:port" in
// rank order) to a board whose reports show a different PeersHash, so both
// can log both lists.
type PeerListMsg struct {
	Name  string
	Peers Strings
}

// DigestMsg (version 4) is what the master sends on a heartbeat when its
// table has not changed since it last sent it: a follower that holds
// Version with Hash is current; one that does not sends a TableReqMsg.
// Any message of the master proves it alive, a digest included.
type DigestMsg struct {
	Epoch     uint64
	Master    string
	Version   uint64
	Hash      uint32 // TableHash of the table the master last sent
	PeersHash uint32
}

// TableReqMsg (version 4) asks the master for its table: the sender holds
// Epoch/Version (0/0: none) and saw a digest naming another.
type TableReqMsg struct {
	Name      string
	Epoch     uint64
	Version   uint64
	PeersHash uint32
}

// Strings is a bounded list of strings: its decoder refuses more than MaxBoards.
type Strings []string

func (*TableMsg) Type() MsgType    { return tableMsgType }
func (*ReportMsg) Type() MsgType   { return reportMsgType }
func (*StepDownMsg) Type() MsgType { return stepDownMsgType }
func (*PeerListMsg) Type() MsgType { return peerListMsgType }
func (*DigestMsg) Type() MsgType   { return digestMsgType }
func (*TableReqMsg) Type() MsgType { return tableReqMsgType }
func (*IntroMsg) Type() MsgType    { return introMsgType }
func (*RelayMsg) Type() MsgType    { return relayMsgType }
func (*DeltaMsg) Type() MsgType    { return deltaMsgType }

// minVersion is the first protocol version that has message type t.
func minVersion(t MsgType) uint8 {
	switch t {
	case digestMsgType, tableReqMsgType, relayMsgType, deltaMsgType:
		return 4
	case introMsgType:
		return ProtocolVersionSigned
	}
	return 1
}

// sender is the board a message says it comes from.
func sender(m Message) string {
	switch m := m.(type) {
	case *TableMsg:
		return m.Master
	case *ReportMsg:
		return m.Name
	case *StepDownMsg:
		return m.Name
	case *PeerListMsg:
		return m.Name
	case *DigestMsg:
		return m.Master
	case *TableReqMsg:
		return m.Name
	case *IntroMsg:
		return m.Name
	case *RelayMsg:
		return m.Origin
	case *DeltaMsg:
		return m.Master
	}
	return ""
}

// ErrVersion is wrapped by Decode when the version byte is out of range.
var ErrVersion = errors.New("unsupported protocol version")

// Encode writes m as type byte, version byte, msgpack array, at
// ProtocolVersionUnsigned: the newest version that needs no signature.
func Encode(m Message) ([]byte, error) { return EncodeVersion(m, ProtocolVersionUnsigned) }

// EncodeVersion writes m at protocol version v, leaving out the fields v
// does not have, so boards that speak only v can read it. A table whose
// stats would take it over MaxPacket goes without them. Version 5 needs
// the sender's and the receiver's gossip keys: see GossipKeys.Seal.
func EncodeVersion(m Message, v uint8) ([]byte, error) {
	if v >= ProtocolVersionSigned && v <= ProtocolVersionMax {
		return nil, fmt.Errorf("state: encode %s: %w %d: version %d messages are sealed (GossipKeys.Seal)", m.Type(), ErrVersion, v, ProtocolVersionSigned)
	}
	return encode(m, v, 0)
}

// encode writes m at version v; from version 5 seq follows the header and
// tagLen bytes are kept free for the tag (the caller appends it).
func encode(m Message, v uint8, seq uint64) ([]byte, error) {
	if v < ProtocolVersionMin || v > ProtocolVersionMax {
		return nil, fmt.Errorf("state: encode %s: %w %d (this build speaks %d..%d)", m.Type(), ErrVersion, v, ProtocolVersionMin, ProtocolVersionMax)
	}
	if v < minVersion(m.Type()) {
		return nil, fmt.Errorf("state: encode %s: %w %d (a %s needs version %d)", m.Type(), ErrVersion, v, m.Type(), minVersion(m.Type()))
	}
	trailer := 0
	if v >= ProtocolVersionSigned {
		trailer = tagLen
	}
	e := enc{b: make([]byte, 0, 64+trailer)}
	e.b = append(e.b, byte(m.Type()), v)
	if v >= ProtocolVersionSigned {
		e.b = binary.AppendUvarint(e.b, seq)
	}
	encodeBody(&e, m, v)
	if t, ok := m.(*TableMsg); ok && len(t.Stats) > 0 && len(e.b)+trailer > MaxPacket {
		// The stats are a display; the rows must reach every board in one packet.
		c := *t
		c.Stats = nil
		return encode(&c, v, seq)
	}
	if len(e.b)+trailer > MaxMessage {
		return nil, fmt.Errorf("state: encode %s: %d bytes, over the %d-byte limit", m.Type(), len(e.b), MaxMessage)
	}
	return e.b, nil
}

// Decode reads one message. Garbage, truncated, oversized, unknown-type and
// wrong-version input is refused with an error; it never panics. A
// version-5 message's tag is read, not checked (GossipKeys.Check).
func Decode(b []byte) (Message, error) {
	m, _, err := DecodeVersion(b)
	return m, err
}

// DecodeVersion is Decode that also returns the protocol version the
// message was encoded at: the highest its sender speaks (or is set to).
func DecodeVersion(b []byte) (Message, uint8, error) {
	m, _, err := decodeSealed(b)
	if err != nil {
		return nil, 0, err
	}
	return m, b[1], nil
}

// seal is what closes a version-5 message: its sequence number, its tag
// and the bytes the tag covers (a slice of the input).
type seal struct {
	seq    uint64
	tag    []byte
	signed []byte
}

// decodeSealed is Decode that also returns a version-5 message's seal
// (zero for older versions).
func decodeSealed(b []byte) (Message, seal, error) {
	if len(b) < headerLen+1 {
		return nil, seal{}, fmt.Errorf("state: message of %d bytes is too short", len(b))
	}
	var s seal
	if b[1] >= ProtocolVersionSigned && b[1] <= ProtocolVersionMax {
		t := MsgType(b[0])
		if len(b) < headerLen+1+tagLen+1 {
			return nil, seal{}, fmt.Errorf("state: %s message of %d bytes is too short for version %d (sequence, body and a %d-byte tag)", t, len(b), b[1], tagLen)
		}
		seq, n := binary.Uvarint(b[headerLen : len(b)-tagLen])
		if n <= 0 {
			return nil, seal{}, fmt.Errorf("state: %s message: bad sequence number", t)
		}
		s = seal{seq: seq, tag: b[len(b)-tagLen:], signed: b[:len(b)-tagLen]}
		m, err := decode(b, b[headerLen+n:len(b)-tagLen])
		return m, s, err
	}
	m, err := decode(b, b[headerLen:])
	return m, s, err
}

// decode reads the message b whose msgpack array is body.
func decode(b, body []byte) (Message, error) {
	if len(b) > MaxMessage {
		return nil, fmt.Errorf("state: message of %d bytes is over the %d-byte limit", len(b), MaxMessage)
	}
	t, v := MsgType(b[0]), b[1]
	if v < ProtocolVersionMin || v > ProtocolVersionMax {
		return nil, fmt.Errorf("state: %s message: %w %d (this build speaks %d..%d)", t, ErrVersion, v, ProtocolVersionMin, ProtocolVersionMax)
	}
	if v < minVersion(t) {
		return nil, fmt.Errorf("state: %s message at version %d: %w (a %s needs version %d)", t, v, ErrVersion, t, minVersion(t))
	}
	var m Message
	switch t {
	case tableMsgType:
		m = new(TableMsg)
	case reportMsgType:
		m = new(ReportMsg)
	case stepDownMsgType:
		m = new(StepDownMsg)
	case peerListMsgType:
		m = new(PeerListMsg)
	case digestMsgType:
		m = new(DigestMsg)
	case tableReqMsgType:
		m = new(TableReqMsg)
	case introMsgType:
		m = new(IntroMsg)
	case relayMsgType:
		m = new(RelayMsg)
	case deltaMsgType:
		m = new(DeltaMsg)
	default:
		return nil, fmt.Errorf("state: unknown message type %d", b[0])
	}
	if len(body) == 0 {
		return nil, fmt.Errorf("state: %s message without a body", t)
	}
	d := dec{b: body}
	if err := decodeBody(&d, m, v); err != nil {
		return nil, fmt.Errorf("state: decode %s: %w", t, err)
	}
	if rest := len(d.b) - d.off; rest != 0 {
		return nil, fmt.Errorf("state: decode %s: %d trailing bytes", t, rest)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("state: decode %s: %w", t, err)
	}
	return m, nil
}

// MakeClassStats merges the master's queue depths and dispatch counts into
// one list sorted by class name, at most MaxClasses long (the rest are left
// out of the table).
func MakeClassStats(depth map[string]int, dispatched map[string]uint64) ClassStats {
	names := make([]string, 0, max(len(depth), len(dispatched)))
	for k := range depth {
		names = append(names, k)
	}
	for k := range dispatched {
		if _, ok := depth[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	out := make(ClassStats, 0, min(len(names), MaxClasses))
	for _, n := range names {
		if len(out) == MaxClasses || n == "" || len(n) > maxNameLen {
			continue
		}
		out = append(out, ClassStat{Name: n, Depth: uint32(max(depth[n], 0)), Dispatched: dispatched[n]})
	}
	return out
}

// Maps returns the stats as /api/cluster shows them: class -> depth and
// class -> dispatched.
func (cs ClassStats) Maps() (map[string]int, map[string]uint64) {
	q, d := make(map[string]int, len(cs)), make(map[string]uint64, len(cs))
	for _, c := range cs {
		q[c.Name], d[c.Name] = int(c.Depth), c.Dispatched
	}
	return q, d
}

func validName(s string) error {
	if s == "" || len(s) > maxNameLen {
		return fmt.Errorf("bad board name of %d bytes", len(s))
	}
	return nil
}

func (m *TableMsg) validate() error {
	if err := validName(m.Master); err != nil {
		return fmt.Errorf("master: %w", err)
	}
	if m.Epoch == 0 {
		return errors.New("epoch 0")
	}
	for i, r := range m.Rows {
		if err := validName(r.Name); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
		if !r.Runstate.Valid() {
			return fmt.Errorf("row %q: bad runstate %d", r.Name, r.Runstate)
		}
		if !r.Wire().Valid() {
			return fmt.Errorf("row %q: load over 1000 per mille", r.Name)
		}
	}
	for i, c := range m.Stats {
		if c.Name == "" || len(c.Name) > maxNameLen {
			return fmt.Errorf("class stat %d: bad class name of %d bytes", i, len(c.Name))
		}
	}
	return nil
}

func (m *ReportMsg) validate() error {
	if err := validName(m.Name); err != nil {
		return err
	}
	if len(m.HTTP) > maxAddrLen {
		return fmt.Errorf("report %q: http address of %d bytes", m.Name, len(m.HTTP))
	}
	if !m.Runstate.Valid() {
		return fmt.Errorf("report %q: bad runstate %d", m.Name, m.Runstate)
	}
	if !m.Wire().Valid() || m.DiskUsed > 1000 {
		return fmt.Errorf("report %q: load over 1000 per mille", m.Name)
	}
	return nil
}

func (m *StepDownMsg) validate() error { return validName(m.Name) }

func (m *DigestMsg) validate() error {
	if err := validName(m.Master); err != nil {
		return fmt.Errorf("master: %w", err)
	}
	if m.Epoch == 0 {
		return errors.New("epoch 0")
	}
	return nil
}

func (m *TableReqMsg) validate() error { return validName(m.Name) }

func (m *PeerListMsg) validate() error {
	if err := validName(m.Name); err != nil {
		return err
	}
	for i, p := range m.Peers {
		if len(p) > maxNameLen+1+maxAddrLen {
			return fmt.Errorf("peer %d: %d bytes", i, len(p))
		}
	}
	return nil
}

// TableHash is the hash a digest carries: FNV-1a of the table's version-1
// fields with every row's AgeMs left out (ages move on every heartbeat;
// the stats are a display, and a table near MaxPacket goes without them).
// Master and follower hash the same fields, so a follower whose rows
// differ from the master's asks for the table.
func TableHash(t *TableMsg) uint32 {
	c := TableMsg{Epoch: t.Epoch, Master: t.Master, Version: t.Version, PeersHash: t.PeersHash, Rows: make(Rows, len(t.Rows))}
	for i, r := range t.Rows {
		r.AgeMs = 0
		c.Rows[i] = r
	}
	var e enc
	encodeTable(&e, &c, tableFieldsV1)
	h := fnv.New32a()
	h.Write(e.b)
	return h.Sum32()
}

// HashPeers is the hash of a peer list that reports carry, so boards notice
// when their configs disagree.
func HashPeers(peers []string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(strings.Join(peers, "\n")))
	return h.Sum32()
}
