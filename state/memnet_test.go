package state

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// simNet is an in-memory network of Elections driven by a fake clock: every
// message goes through Encode/Decode and arrives at the next step, one tick
// later, unless the link is cut or the packet lost (loss). Every UDP packet
// is checked against the MTU (MaxPacket, memberlist's framing and AES-GCM
// overhead included); a relayed cluster's gossip is relaynet_test.go's.
type simNet struct {
	t      *testing.T
	now    time.Time
	timing Timing
	peers  []Peer
	nodes  []*simNode
	cut    map[[2]string]bool // from, to
	warns  []string
	// cpu, when not nil, adds up the thread CPU each board's step took
	// (decode, protocol, encode of what it sends); see threadCPU.
	cpu     map[string]time.Duration
	sent    map[MsgType]int // messages delivered, by type
	bytes   map[string]int  // bytes sent, by sender (one copy per receiver)
	packets map[string]int  // messages sent, by sender (one per receiver)
	dual    int             // consecutive steps with two masters that hear each other
	// rng draws lost packets and gossip targets (seeded: runs repeat).
	rng *rand.Rand
	// loss is the share of UDP packets lost (0: none).
	loss float64
	// tcp counts bytes sent over TCP (full tables past one packet), by sender.
	tcp map[string]int
	// maxUDP is the largest UDP packet sent, as on the wire.
	maxUDP int
}

type simNode struct {
	name     string
	e        *Election
	up       bool
	inbox    [][]byte
	nextRep  time.Time
	inFlight uint32
	runstate Runstate
	creds    uint64   // ReportMsg.Creds
	events   []Action // BecameMaster, SteppedDown, Followed
	// speaks is the highest protocol version the board's build reads (0:
	// ProtocolVersionUnsigned: the Election's tests run unsigned, as a
	// board without a certificate does; signatures are ident_test.go's);
	// it sends at it too, as an older build would.
	speaks uint8
	load   WireLoad // in its reports
	// relayed clusters (relaynet_test.go): the board's gossip queue, its
	// run and its last relayed message's sequence number
	q    *relayQueue
	boot uint64
	seq  uint64
}

// version is the highest protocol version n reads and sends.
func (n *simNode) version() uint8 {
	if n.speaks == 0 {
		return ProtocolVersionUnsigned
	}
	return n.speaks
}

var fastTiming = Timing{Heartbeat: 100 * time.Millisecond, TMax: time.Second, TThreshold: 500 * time.Millisecond, Tick: 20 * time.Millisecond}

func newSimNet(t *testing.T, n int, timing Timing) *simNet {
	s := &simNet{t: t, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), timing: timing, cut: map[[2]string]bool{},
		sent: map[MsgType]int{}, bytes: map[string]int{}, packets: map[string]int{}, tcp: map[string]int{},
		rng: rand.New(rand.NewPCG(uint64(n), 7))}
	for i := range n {
		name := fmt.Sprintf("ews%d", i+1)
		s.peers = append(s.peers, Peer{Rank: i, Name: name, Addr: fmt.Sprintf("10.0.0.%d:7946", i+1)})
		s.nodes = append(s.nodes, &simNode{name: name})
	}
	return s
}

func (s *simNet) node(name string) *simNode {
	for _, n := range s.nodes {
		if n.name == name {
			return n
		}
	}
	s.t.Fatalf("no node %q", name)
	return nil
}

// start boots a board: it reports joining first, running after.
func (s *simNet) start(names ...string) {
	for _, name := range names {
		n := s.node(name)
		e, err := NewElection(name, s.peers, s.timing, s.now)
		if err != nil {
			s.t.Fatal(err)
		}
		e.Proto = n.version()
		n.e, n.up, n.inbox, n.nextRep, n.runstate, n.inFlight = e, true, nil, s.now, Joining, 0
		if e.Relay {
			s.join(n)
		}
	}
}

func (s *simNet) kill(names ...string) {
	for _, name := range names {
		n := s.node(name)
		n.up, n.e, n.inbox = false, nil, nil
	}
}

// partition cuts every link between the groups.
func (s *simNet) partition(groups ...[]string) {
	for i, a := range groups {
		for j, b := range groups {
			if i == j {
				continue
			}
			for _, x := range a {
				for _, y := range b {
					s.cut[[2]string{x, y}] = true
				}
			}
		}
	}
}

func (s *simNet) heal() { s.cut = map[[2]string]bool{} }

// send delivers m as Cluster.send does: to each board at the highest
// version both speak, as far as the sender knows the receiver's.
func (s *simNet) send(from string, to string, m Message) {
	src := s.node(from)
	var encoded [ProtocolVersionMax + 1][]byte
	for _, n := range s.nodes {
		if n.name == from || !n.up || (to != "" && n.name != to) || s.cut[[2]string{from, n.name}] {
			continue
		}
		v := min(src.e.Proto, src.version())
		if pv := src.e.PeerVersion(n.name); pv != 0 {
			v = min(v, pv)
		}
		if encoded[v] == nil {
			b, err := EncodeVersion(m, v)
			if errors.Is(err, ErrVersion) {
				continue
			}
			if err != nil {
				s.t.Fatalf("%s: encode %s: %v", from, m.Type(), err)
			}
			encoded[v] = b
		}
		b := encoded[v]
		s.sent[m.Type()]++
		s.bytes[from] += len(b)
		s.packets[from]++
		if wire := len(b) + 1 + gcmOverhead; wire > MaxPacket { // memberlist's user-message byte
			if _, table := m.(*TableMsg); !table || to == "" {
				s.t.Fatalf("%s: a %s of %d bytes to %q: over one packet (%d)", from, m.Type(), wire, to, MaxPacket)
			}
			s.tcp[from] += len(b) // memberlist's SendReliable: one board's full table
			n.inbox = append(n.inbox, b)
			continue
		}
		if !s.udp(len(b) + 1 + gcmOverhead) {
			continue
		}
		n.inbox = append(n.inbox, b)
	}
}

// udp checks a UDP packet of size bytes (as on the wire) against the MTU
// and reports whether it arrives.
func (s *simNet) udp(size int) bool {
	if size > MaxPacket {
		s.t.Fatalf("a UDP packet of %d bytes, over the MTU (%d)", size, MaxPacket)
	}
	s.maxUDP = max(s.maxUDP, size)
	return s.loss == 0 || s.rng.Float64() >= s.loss
}

func (s *simNet) do(n *simNode, acts []Action) {
	for _, a := range acts {
		switch a.Kind {
		case Broadcast:
			s.send(n.name, "", a.Msg)
		case SendTo:
			s.send(n.name, a.To, a.Msg)
		case Gossip, GossipAll:
			s.gossip(n, a.Msg, a.Kind == GossipAll, a.Also)
		case Warn:
			s.warns = append(s.warns, n.name+": "+a.Reason)
		default:
			n.events = append(n.events, a)
		}
	}
}

// step advances the clock one tick: every live board reads its inbox,
// reports when its heartbeat is due, and ticks.
func (s *simNet) step() {
	s.now = s.now.Add(s.timing.Tick)
	for _, n := range s.nodes {
		if !n.up {
			continue
		}
		if s.cpu != nil {
			t0 := threadCPU()
			s.stepNode(n)
			s.cpu[n.name] += threadCPU() - t0
			continue
		}
		s.stepNode(n)
	}
	s.spread()
	s.checkOneMasterPerSide()
}

// stepNode is one board's part of a step.
func (s *simNet) stepNode(n *simNode) {
	in := n.inbox
	n.inbox = nil
	for _, b := range in {
		if b[1] > n.version() {
			continue // an older build refuses it unread
		}
		m, v, err := DecodeVersion(b)
		if err != nil {
			s.t.Fatalf("%s: decode: %v", n.name, err)
		}
		if r, ok := m.(*RelayMsg); ok {
			if m = s.relayed(n, r, b); m == nil {
				continue
			}
		}
		acts, _ := n.e.ReceiveVersion(s.now, m, v)
		s.do(n, acts)
	}
	if !s.now.Before(n.nextRep) {
		n.nextRep = s.now.Add(s.timing.Heartbeat)
		rep := ReportMsg{InFlight: n.inFlight, Capacity: 4, Weight: 1, Runstate: n.runstate, Creds: n.creds}
		rep.SetLoad(n.load)
		s.do(n, n.e.Local(s.now, rep))
		if n.runstate == Joining {
			n.runstate = Running
		}
	}
	s.do(n, n.e.Tick(s.now))
}

// checkOneMasterPerSide: two boards that hear each other are not both
// master for longer than a heartbeat and two ticks (the next table must
// come, arrive, and the loser step down at once).
func (s *simNet) checkOneMasterPerSide() {
	dual := false
	defer func() {
		if !dual {
			s.dual = 0
			return
		}
		if s.dual++; s.dual > int(s.timing.Heartbeat/s.timing.Tick)+2 {
			s.t.Fatalf("%v: two masters that hear each other for %d ticks: %v", s.now, s.dual, s.masters())
		}
	}()
	var masters []*simNode
	for _, n := range s.nodes {
		if n.up && n.e.IsMaster() {
			masters = append(masters, n)
		}
	}
	for _, a := range masters {
		for _, b := range masters {
			if a == b {
				continue
			}
			if !s.cut[[2]string{a.name, b.name}] && !s.cut[[2]string{b.name, a.name}] {
				dual = true
			}
		}
	}
}

func (s *simNet) run(d time.Duration) {
	for end := s.now.Add(d); s.now.Before(end); {
		s.step()
	}
}

// runUntil steps until cond holds and returns how long it took; it fails
// the test after limit.
func (s *simNet) runUntil(what string, limit time.Duration, cond func() bool) time.Duration {
	s.t.Helper()
	start := s.now
	for !cond() {
		if s.now.Sub(start) > limit {
			s.t.Fatalf("%s: not within %v; masters %v", what, limit, s.masters())
		}
		s.step()
	}
	return s.now.Sub(start)
}

// masters lists "name@epoch" of each live board that believes it is master.
func (s *simNet) masters() []string {
	var out []string
	for _, n := range s.nodes {
		if n.up && n.e.IsMaster() {
			out = append(out, fmt.Sprintf("%s@%d", n.name, n.e.Epoch()))
		}
	}
	return out
}

// agreed reports whether every live board follows master at epoch.
func (s *simNet) agreed(master string, epoch uint64) bool {
	for _, n := range s.nodes {
		if !n.up {
			continue
		}
		if m, e := n.e.Master(); m != master || e != epoch {
			return false
		}
	}
	return len(s.masters()) == 1
}

func (s *simNet) row(viewer, board string) Board {
	s.t.Helper()
	v := s.node(viewer).e.View(s.now)
	n, ok := v.Node(board)
	if !ok {
		s.t.Fatalf("%s's view has no row %s", viewer, board)
	}
	return n
}

func (s *simNet) warned(sub string) bool {
	for _, w := range s.warns {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// warnedBy reports whether board name logged a warning containing sub.
func (s *simNet) warnedBy(name, sub string) bool {
	for _, w := range s.warns {
		if strings.HasPrefix(w, name+": ") && strings.Contains(w, sub) {
			return true
		}
	}
	return false
}
