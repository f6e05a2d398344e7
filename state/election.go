package state

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"time"
)

// Peer is one configured board: its rank (order in cluster.peers), name and
// gossip address.
type Peer struct {
	Rank int
	Name string
	Addr string
}

// Timing is the paper's protocol timing.
type Timing struct {
	Heartbeat  time.Duration // table and report period
	TMax       time.Duration // master silence before a takeover; also the listen time at start
	TThreshold time.Duration // board silence before it is down
	Tick       time.Duration // how often the driver calls Tick; changes are coalesced for this long
	Preempt    bool          // a lower-rank board takes mastership back
}

// ActionKind says what the driver must do with an Action.
type ActionKind uint8

const (
	Broadcast    ActionKind = iota // send Msg to every other board
	SendTo                         // send Msg to the board named To
	BecameMaster                   // this board claimed mastership (Epoch, Reason)
	SteppedDown                    // this board lost mastership to Master (Epoch, Reason)
	Followed                       // this board now follows Master (Epoch)
	Warn                           // log Reason loudly (peer list differs, duplicate name)
	Gossip                         // hand Msg, this board's own, to gossip: every board passes it on (relayed clusters, relay.go)
	GossipAll                      // Gossip, and send the same relayed message to every board at once (a claim)
)

// Action is one thing the Election asks its driver to do.
type Action struct {
	Kind   ActionKind
	Msg    Message
	To     string
	Epoch  uint64
	Master string
	Reason string
	// Also (Gossip) names boards the relayed message also goes to at
	// once, the same message, so their copies by gossip are dropped as
	// copies (relay.go).
	Also []string
}

// boardState is what this board knows of one peer from its reports.
type boardState struct {
	report    ReportMsg
	heard     time.Time // last message of any kind; zero: never
	hasReport bool
	gone      bool   // membership says it left or died
	peersHash uint32 // last hash warned about, to warn once per change
	// mismatchAt is when this board last refused a message of the peer
	// because its peer list differs; zero: never, or it agrees again.
	mismatchAt time.Time
	// proto is the protocol version of the peer's last accepted message;
	// 0: not heard yet.
	proto uint8
	// member: membership has seen it (MemberJoined), until MemberLeft.
	member bool
}

// MaxEpochJump bounds how far past the highest epoch this board has seen a
// claim may jump; a larger jump (a forged or corrupt epoch, which would
// make the next claim wrap) is refused and logged.
const MaxEpochJump = 1 << 20

// Election is the master election and the master's table as a pure state
// machine: the driver feeds it events with the current time and performs
// the actions it returns. It does no I/O and starts no goroutines; it is
// not safe for concurrent use (the driver owns it from one goroutine).
type Election struct {
	roster     // the boards as configured (roster.go)
	mastership // whom this board follows, or that it leads
	held       // the table as this board holds it
	relayRows  // in a relayed cluster, which rows this follower holds
	t          Timing

	boot    time.Time
	boards  []boardState // by rank
	stats   ClassStats   // the master's queue stats, sent with its next table
	stopped bool         // StepDown was called: the board is leaving, it claims nothing more
	reports int          // own reports fed by Local

	// HostOK, when set, accepts a report's HTTP host for a peer whose
	// configured gossip host differs (the driver checks the address the
	// membership knows the peer at). nil: only the configured host.
	HostOK func(name, host string) bool
	// Proto is the protocol version this board sends at
	// (Config.ProtocolVersion; NewElection sets ProtocolVersion). Below 4
	// it sends the full table every heartbeat, as before digests.
	Proto uint8
	// Relay: the cluster relays (NewElection sets Relayed(peers)): the
	// master's messages go to gossip, reports to the master (relay.go).
	Relay bool
	// lastMismatch is the latest boardState.mismatchAt: Mismatched is
	// empty without a look at every board when it is over tthreshold ago.
	lastMismatch time.Time
}

// mastership is whom this board follows (or that it leads), by which
// epoch, and since when.
type mastership struct {
	epoch        uint64 // epoch of the current master (ours when master)
	master       string // "" while none is known
	masterRank   int
	heardMaster  time.Time // last table from the current master
	followSince  time.Time // when this board last started following (or stepped down)
	maxEpochSeen uint64
	// tookDown is the current master's step-down this board took: a claim
	// within tmax of it has its cause, even when a table or digest the
	// master sent just before it arrives after it and makes it heard again.
	tookDown struct {
		name  string
		epoch uint64
		at    time.Time
	}
}

// held is the table as this board holds it: the master's latest (its own
// when master, as last sent in full), and when it was last sent or asked.
type held struct {
	table    TableMsg  // the master's latest table (ours when master: as last sent in full)
	tableAt  time.Time // when table was built or received
	hash     uint32    // TableHash(&table)
	lastSent time.Time // last table or digest sent (master)
	lastFull time.Time // last full table sent (master)
	lastReq  time.Time // last TableReqMsg sent (follower)
	// hashStale: the rows moved since hash was computed (applyDelta; a
	// follower needs it only when a digest comes).
	hashStale bool
}

// relayRows is, in a relayed cluster, which rows this follower holds:
// rowVer the table version at which each row (by rank) last changed as it
// holds it, lackSince when the master's digests began to name a table it
// lacks, good the last table version a digest confirmed it holds whole
// (it asks for the rows changed since).
type relayRows struct {
	rowVer    []uint64
	lackSince time.Time
	good      uint64
}

// fullTableEvery: a master whose table has not changed sends digests on
// its heartbeats and the full table only every this many heartbeats
// (fresh ages and loads inside loadDeadband for every board, and a
// repair for a follower whose table request was lost).
const fullTableEvery = 10

// loadDeadband: a row's load share must move by at least this many per
// mille from the table last sent to count as a change; smaller moves
// travel with the next periodic full table. A busy board's CPU share
// jitters on every sample, and without the band every heartbeat would be
// a change.
const loadDeadband = 50

// NewElection starts the machine at now. peers are in rank order and must
// include self. With self the only peer, it is master at once with epoch 1.
func NewElection(self string, peers []Peer, t Timing, now time.Time) (*Election, error) {
	ros, err := newRoster(self, peers)
	if err != nil {
		return nil, err
	}
	e := &Election{roster: ros, t: t, boot: now, mastership: mastership{masterRank: -1}, Proto: ProtocolVersion}
	if t.Tick <= 0 {
		e.t.Tick = t.Heartbeat / 5
	}
	r := e.self.Rank
	e.boards = make([]boardState, len(peers))
	e.boards[r].heard = now
	e.Relay = Relayed(names(peers))
	if len(peers) == 1 {
		e.claim(now, "standalone")
	}
	return e, nil
}

// PeersHash is the hash of this board's peer list, carried in its reports.
func (r *roster) PeersHash() uint32 { return r.peersHash }

// IsMaster reports whether this board is the master.
func (e *Election) IsMaster() bool { return e.master == e.self.Name }

// Master returns the current master's name ("" when none is known) and epoch.
func (e *Election) Master() (string, uint64) { return e.master, e.epoch }

// Epoch returns the current epoch.
func (m *mastership) Epoch() uint64 { return m.epoch }

// Table returns the latest table (built when master, received otherwise)
// and when it was built or received. The rows are shared: do not modify.
func (h *held) Table() (TableMsg, time.Time) { return h.table, h.tableAt }

// Report returns the last report of the named board and when it was heard.
func (e *Election) Report(name string) (ReportMsg, time.Time, bool) {
	r, ok := e.byName[name]
	if !ok || !e.boards[r].hasReport {
		return ReportMsg{}, time.Time{}, false
	}
	return e.boards[r].report, e.boards[r].heard, true
}

// SetStats gives the master's queue stats (see MakeClassStats) to
// the tables it sends from now on. They change with every request, so they
// do not count as a table change: they travel at the next heartbeat.
func (e *Election) SetStats(s ClassStats) { e.stats = s }

// alive reports whether this board believes peer rank r is up.
func (e *Election) alive(r int, now time.Time) bool {
	if r == e.self.Rank {
		return true
	}
	b := &e.boards[r]
	if b.gone {
		return false
	}
	if !b.heard.IsZero() && now.Sub(b.heard) <= e.t.TThreshold {
		return true
	}
	return e.Relay && e.relayAlive(r)
}

// lowestAlive returns the lowest rank believed alive, skipping skip (-1: none).
func (e *Election) lowestAlive(now time.Time, skip int) int {
	for r := range e.peers {
		if r != skip && e.alive(r, now) {
			return r
		}
	}
	return e.self.Rank
}

// Tick runs the timers: the master marks silent boards down and sends the
// table when it changed or a heartbeat has passed; a board that has not
// heard the master for tmax takes over if it is the lowest-rank live board.
func (e *Election) Tick(now time.Time) []Action {
	if e.stopped {
		return nil
	}
	if e.outvoted(now) {
		return e.standAside(now)
	}
	if e.IsMaster() {
		return e.masterTick(now)
	}
	if now.Sub(e.boot) < e.t.TMax {
		return nil // listen for tmax before claiming
	}
	if e.master == "" || now.Sub(e.heardMaster) >= e.t.TMax {
		skip := -1
		if e.master != "" {
			skip = e.masterRank
		}
		if e.lowestAlive(now, skip) == e.self.Rank {
			reason := "no master heard for tmax"
			if e.master == "" {
				reason = "no master heard since start"
			}
			return e.claim(now, reason)
		}
		return nil
	}
	if e.t.Preempt && e.self.Rank < e.masterRank && now.Sub(e.followSince) >= e.t.TMax &&
		e.lowestAlive(now, -1) == e.self.Rank {
		return e.claim(now, fmt.Sprintf("preempt: rank %d is below master %s's rank %d", e.self.Rank, e.master, e.masterRank))
	}
	return nil
}

func (e *Election) claim(now time.Time, reason string) []Action {
	next := max(e.epoch, e.maxEpochSeen)
	if next == ^uint64(0) {
		return []Action{{Kind: Warn, Reason: fmt.Sprintf("cannot claim mastership: epoch %d is the largest there is", next)}}
	}
	e.epoch = next + 1
	e.maxEpochSeen = e.epoch
	e.master, e.masterRank = e.self.Name, e.self.Rank
	e.heardMaster = now
	e.table = TableMsg{Epoch: e.epoch, Master: e.self.Name, Version: e.table.Version + 1, PeersHash: e.peersHash}
	e.lastSent = now
	// from the boards' reports, never from the old table
	return append([]Action{{Kind: BecameMaster, Epoch: e.epoch, Master: e.self.Name, Reason: reason}}, e.sendTable(now, e.rows(now))...)
}

// Mismatched lists the peers whose messages this board refused within
// tthreshold because their peer lists differ from this board's.
func (e *Election) Mismatched(now time.Time) []string {
	if e.lastMismatch.IsZero() || now.Sub(e.lastMismatch) > e.t.TThreshold {
		return nil
	}
	var out []string
	for r := range e.boards {
		if at := e.boards[r].mismatchAt; !at.IsZero() && now.Sub(at) <= e.t.TThreshold {
			out = append(out, e.peers[r].Name)
		}
	}
	return out
}

// outvoted reports whether more live peers disagree with this board's peer
// list than agree with it (this board included): then this board is the
// odd one out and must not be master, so a mis-ordered list on one board
// is a loud error on every board instead of a second master.
func (e *Election) outvoted(now time.Time) bool {
	differ := len(e.Mismatched(now))
	if differ == 0 {
		return false
	}
	agree := 0
	for r := range e.peers {
		if e.alive(r, now) && e.boards[r].mismatchAt.IsZero() {
			agree++
		}
	}
	return differ >= agree
}

// standAside is Tick for an outvoted board: it gives up mastership if it
// holds it and claims nothing while outvoted.
func (e *Election) standAside(now time.Time) []Action {
	if !e.IsMaster() {
		return nil
	}
	old := e.epoch
	e.master, e.masterRank, e.followSince = "", -1, now
	reason := fmt.Sprintf("peer lists differ: boards %v disagree with this board's list %v", e.Mismatched(now), e.peerList)
	return []Action{{Kind: SteppedDown, Epoch: old, Reason: reason}, {Kind: Warn, Reason: reason}}
}

// masterTick sends the table at once when it changed; on a heartbeat
// without a change it sends a digest, or the full table every
// fullTableEvery heartbeats, when the stats moved, or when this board
// speaks a version without digests. Boards known to speak only 1..3 get
// the table instead of the digest.
func (e *Election) masterTick(now time.Time) []Action {
	if e.Relay {
		return e.relayTick(now)
	}
	rows := e.rows(now)
	changed := rowsChanged(e.table.Rows, rows)
	if !changed && now.Sub(e.lastSent)+e.t.Tick/2 < e.t.Heartbeat {
		return nil
	}
	e.lastSent = now
	if changed {
		e.table.Version++
	}
	if changed || e.Proto < minVersion(digestMsgType) || !slices.Equal(e.stats, e.table.Stats) ||
		now.Sub(e.lastFull)+e.t.Tick/2 >= fullTableEvery*e.t.Heartbeat {
		return e.sendTable(now, rows)
	}
	d := DigestMsg{Epoch: e.epoch, Master: e.self.Name, Version: e.table.Version, Hash: e.hash, PeersHash: e.peersHash}
	acts := []Action{{Kind: Broadcast, Msg: &d}}
	old := e.table
	old.Rows, old.Stats = rows, e.stats
	for r := range e.peers {
		if p := e.boards[r].proto; r != e.self.Rank && p != 0 && p < minVersion(digestMsgType) && e.alive(r, now) {
			acts = append(acts, Action{Kind: SendTo, To: e.peers[r].Name, Msg: &old})
		}
	}
	return acts
}

// sendTable makes rows and the current stats the table, as sent in full
// now, and returns its broadcast; in a relayed cluster, the deltas from
// the table last sent, or a digest when nothing changed (relayTable).
func (e *Election) sendTable(now time.Time, rows Rows) []Action {
	if e.Relay {
		if acts := e.relayTable(now, rows); len(acts) > 0 {
			return acts
		}
		return e.digest(now)
	}
	e.table.Rows, e.table.Stats, e.tableAt, e.lastFull = rows, e.stats, now, now
	e.hash = TableHash(&e.table)
	msg := e.table
	return []Action{{Kind: Broadcast, Msg: &msg}}
}

// rowsChanged reports whether rows differ from the table last sent in
// anything but ages and load moves under loadDeadband.
func rowsChanged(sent, rows Rows) bool {
	if len(rows) != len(sent) {
		return true
	}
	for i := range rows {
		if rowChanged(sent[i], rows[i]) {
			return true
		}
	}
	return false
}

// rowChanged reports whether row differs from sent in anything but its
// age and load moves under loadDeadband.
func rowChanged(sent, row Row) bool {
	if loadMoved(row.Wire(), sent.Wire()) {
		return true
	}
	sent.AgeMs, row.AgeMs = 0, 0
	sent.SetLoad(WireLoad{})
	row.SetLoad(WireLoad{})
	return sent != row
}

func loadMoved(a, b WireLoad) bool {
	d := func(x, y uint16) bool { return max(x, y)-min(x, y) >= loadDeadband }
	return d(a.CPU, b.CPU) || d(a.Mem, b.Mem) || d(a.Net, b.Net) || d(a.Disk, b.Disk)
}

// rows builds the master's rows from the boards' reports (the truth for
// linknum), never from an older table.
func (e *Election) rows(now time.Time) Rows {
	rows := make(Rows, len(e.peers))
	for r := range e.peers {
		b, st := e.board(r, now), &e.boards[r]
		row := Row{Rank: uint16(r), Name: b.Name, Runstate: b.Runstate, AgeMs: neverHeardAge}
		if !st.heard.IsZero() {
			row.AgeMs = uint32(min(now.Sub(st.heard).Milliseconds(), int64(neverHeardAge-1)))
		}
		if st.hasReport {
			row.Linknum, row.Capacity, row.Weight = uint32(b.Linknum), st.report.Capacity, st.report.Weight
			row.SetLoad(st.report.Wire())
		}
		rows[r] = row
	}
	return rows
}

// masterReportEvery: the master's own row travels in its table, so it
// broadcasts its report (for its HTTP address) only every this many
// heartbeats, which halves its idle traffic.
const masterReportEvery = 10

// Local feeds this board's own report (every heartbeat) and returns the
// broadcast of it.
func (e *Election) Local(now time.Time, rep ReportMsg) []Action {
	rep.Name, rep.Epoch, rep.PeersHash = e.self.Name, e.epoch, e.peersHash
	b := &e.boards[e.self.Rank]
	b.report, b.hasReport, b.heard = rep, true, now
	e.reports++
	if e.IsMaster() && e.reports%masterReportEvery != 0 {
		return nil
	}
	if e.Relay {
		return e.relayReport(&rep)
	}
	return []Action{{Kind: Broadcast, Msg: &rep}}
}

// Receive handles a message from another board. A message it refuses
// (unknown board, a board using this board's name) returns an error and
// perhaps a Warn action.
func (e *Election) Receive(now time.Time, m Message) ([]Action, error) {
	return e.ReceiveVersion(now, m, ProtocolVersion)
}

// ReceiveVersion is Receive of a message encoded at protocol version v
// (DecodeVersion): an accepted message records v as its sender's version,
// which decides whether the master sends it digests (PeerVersion).
func (e *Election) ReceiveVersion(now time.Time, m Message, v uint8) ([]Action, error) {
	var acts []Action
	var err error
	var from string
	switch m := m.(type) {
	case *TableMsg:
		from = m.Master
		acts, err = e.receiveTable(now, m)
	case *ReportMsg:
		from = m.Name
		acts, err = e.receiveReport(now, m)
	case *StepDownMsg:
		from = m.Name
		acts, err = e.receiveStepDown(now, m)
	case *PeerListMsg:
		from = m.Name
		acts, err = e.receivePeerList(m)
	case *DigestMsg:
		from = m.Master
		acts, err = e.receiveDigest(now, m)
	case *TableReqMsg:
		from = m.Name
		acts, err = e.receiveTableReq(now, m)
	case *DeltaMsg:
		from = m.Master
		acts, err = e.receiveDelta(now, m)
	default:
		return nil, fmt.Errorf("state: unexpected message %T", m)
	}
	if r, ok := e.byName[from]; ok && err == nil && r != e.self.Rank {
		e.boards[r].proto = v
	}
	return acts, err
}

// PeerVersion is the protocol version of the named board's last accepted
// message; 0 before any.
func (e *Election) PeerVersion(name string) uint8 {
	if r, ok := e.byName[name]; ok {
		return e.boards[r].proto
	}
	return 0
}

// sender finds the peer a message claims to come from.
func (e *Election) sender(kind MsgType, name string) (int, []Action, error) {
	if name == e.self.Name {
		reason := fmt.Sprintf("another board uses this board's name %q (a %s message came from it): two boards with the same name", name, kind)
		return -1, []Action{{Kind: Warn, Reason: reason}}, fmt.Errorf("state: %s from a board named like this one (%q)", kind, name)
	}
	r, ok := e.byName[name]
	if !ok {
		return -1, nil, fmt.Errorf("state: %s from %q, which is not in cluster.peers %v", kind, name, e.peerList)
	}
	return r, nil, nil
}

// from is what every message of a peer passes first: a sender of
// cluster.peers (sender) with this board's peer list (samePeers); its
// rank, or the actions and error of the refusal.
func (e *Election) from(now time.Time, kind MsgType, name string, peersHash uint32) (int, []Action, error) {
	r, acts, err := e.sender(kind, name)
	if err != nil {
		return r, acts, err
	}
	acts, err = e.samePeers(kind, r, peersHash, now)
	return r, acts, err
}

// fromMaster is from for what a master sends (a table, a digest, a
// delta), whose epoch must also be in range (epochOK).
func (e *Election) fromMaster(now time.Time, kind MsgType, name string, peersHash uint32, epoch uint64) (int, []Action, error) {
	r, acts, err := e.from(now, kind, name, peersHash)
	if err != nil {
		return r, acts, err
	}
	acts, err = e.epochOK(kind, name, epoch)
	return r, acts, err
}

// samePeers refuses a message whose peer-list hash differs from this
// board's; the first refusal per change is a Warn.
func (e *Election) samePeers(kind MsgType, r int, hash uint32, now time.Time) ([]Action, error) {
	b := &e.boards[r]
	if hash == e.peersHash {
		b.mismatchAt, b.peersHash = time.Time{}, 0
		return nil, nil
	}
	var acts []Action
	if b.peersHash != hash || b.mismatchAt.IsZero() {
		b.peersHash = hash
		acts = append(acts, Action{Kind: Warn, Reason: fmt.Sprintf("board %s has a different peer list (hash %08x, ours %08x: %v); its messages are refused until the lists agree", e.peers[r].Name, hash, e.peersHash, e.peerList)})
		if kind == reportMsgType {
			list := PeerListMsg{Name: e.self.Name, Peers: Strings(e.peerList)}
			acts = append(acts, Action{Kind: SendTo, To: e.peers[r].Name, Msg: &list})
		}
	}
	b.mismatchAt, e.lastMismatch = now, now
	return acts, fmt.Errorf("%w: %s from %s (hash %08x, ours %08x)", ErrPeersDiffer, kind, e.peers[r].Name, hash, e.peersHash)
}

// ErrPeersDiffer is wrapped by Receive when it refuses a message of a board
// whose peer list differs from this board's.
var ErrPeersDiffer = errors.New("state: message refused: the sender's peer list differs")

// epochOK refuses an epoch that jumps more than MaxEpochJump past the
// highest this board has seen.
func (e *Election) epochOK(kind MsgType, name string, epoch uint64) ([]Action, error) {
	top := max(e.epoch, e.maxEpochSeen)
	if epoch <= top || epoch-top <= MaxEpochJump {
		return nil, nil
	}
	reason := fmt.Sprintf("%s from %s with epoch %d, more than %d past the highest seen (%d): refused", kind, name, epoch, MaxEpochJump, top)
	return []Action{{Kind: Warn, Reason: reason}}, fmt.Errorf("state: %s", reason)
}

func (e *Election) heard(r int, now time.Time) {
	e.boards[r].heard = now
	e.boards[r].gone = false
}

func (e *Election) receiveTable(now time.Time, t *TableMsg) ([]Action, error) {
	r, acts, err := e.fromMaster(now, tableMsgType, t.Master, t.PeersHash, t.Epoch)
	if err != nil {
		return acts, err
	}
	wasAlive := e.alive(r, now)
	e.heard(r, now)
	if e.IsMaster() {
		if t.Epoch > e.epoch && r > e.self.Rank && wasAlive {
			// A higher-rank board this master kept hearing claims: it had no
			// cause (a board cut off from the master stops being heard
			// here). Refused; claim above it so it follows again.
			e.maxEpochSeen = max(e.maxEpochSeen, t.Epoch)
			acts := e.claim(now, fmt.Sprintf("refused a claim of %s (epoch %d): it was heard all along and ranks %d, this board %d", t.Master, t.Epoch, r, e.self.Rank))
			return append([]Action{{Kind: Warn, Reason: fmt.Sprintf("board %s claimed mastership (epoch %d) while this board is master and heard it: refused", t.Master, t.Epoch)}}, acts...), nil
		}
		e.maxEpochSeen = max(e.maxEpochSeen, t.Epoch)
		if t.Epoch > e.epoch || (t.Epoch == e.epoch && r < e.self.Rank) {
			old := e.epoch
			acts = e.follow(now, t, r)
			return append([]Action{{Kind: SteppedDown, Epoch: old, Master: t.Master,
				Reason: fmt.Sprintf("%s is master with epoch %d (ours %d, rank %d vs %d)", t.Master, t.Epoch, old, r, e.self.Rank)}}, acts...), nil
		}
		// We win: answer at once so the other steps down.
		e.lastSent = now
		return e.sendTable(now, e.rows(now)), nil
	}
	if t.Master != e.master && t.Epoch > e.epoch && e.master != "" && r > e.masterRank &&
		now.Sub(e.heardMaster) < e.t.TMax/2 && wasAlive && !e.masterSteppedDown(now) {
		// the master is heard, the claimer ranks above it and was heard too,
		// and the master did not step down: not a takeover by the rules
		reason := fmt.Sprintf("board %s claimed mastership (epoch %d) while master %s is heard (%v ago) and ranks below it: refused",
			t.Master, t.Epoch, e.master, now.Sub(e.heardMaster).Round(time.Millisecond))
		return []Action{{Kind: Warn, Reason: reason}}, fmt.Errorf("state: %s", reason)
	}
	e.maxEpochSeen = max(e.maxEpochSeen, t.Epoch)
	switch {
	case e.master == "",
		t.Epoch > e.epoch,
		t.Epoch == e.epoch && r < e.masterRank:
		return e.follow(now, t, r), nil
	case t.Master == e.master && t.Epoch == e.epoch:
		if t.Version >= e.table.Version || t.Version == 0 {
			e.table, e.tableAt, e.hash = *t, now, TableHash(t)
			e.tookTable()
		}
		e.heardMaster = now
	case e.silentMaster(now):
		return e.follow(now, t, r), nil
	}
	return nil, nil // a stale table of a former master: ignored
}

// silentMaster reports whether this board's master fell silent for tmax
// (or stepped down). Then a table of another master is followed whatever
// its epoch: that board took over on a side of a partition this board
// was not on, at an epoch that need not beat the silent master's, and
// the boards around it follow it, so none of them claims; without this,
// this board would wait for a master it cannot hear while one is heard.
// Among several heard masters the rule (higher epoch, then lower rank)
// settles it from there.
func (e *Election) silentMaster(now time.Time) bool {
	return e.master != "" && now.Sub(e.heardMaster) >= e.t.TMax
}

func (e *Election) follow(now time.Time, t *TableMsg, r int) []Action {
	e.epoch, e.master, e.masterRank = t.Epoch, t.Master, r
	e.heardMaster, e.followSince = now, now
	e.table, e.tableAt, e.hash = *t, now, TableHash(t)
	e.tookTable()
	return []Action{{Kind: Followed, Epoch: t.Epoch, Master: t.Master}}
}

// receiveDigest: a digest of the master this board follows proves it
// alive; one naming a version or hash this board lacks, or coming from
// a master this board might follow, makes it ask for the table (the
// table then decides, as receiveTable always has). A master that hears
// another master's digest sends its own table at once and asks for the
// other's, so two masters settle as fast as with tables.
func (e *Election) receiveDigest(now time.Time, d *DigestMsg) ([]Action, error) {
	r, acts, err := e.fromMaster(now, digestMsgType, d.Master, d.PeersHash, d.Epoch)
	if err != nil {
		return acts, err
	}
	e.heard(r, now)
	if e.IsMaster() {
		e.lastSent = now
		return append(e.sendTable(now, e.rows(now)), e.askTable(now, r)...), nil
	}
	if d.Master == e.master && d.Epoch == e.epoch {
		e.heardMaster = now
		if d.Version < e.table.Version || (d.Version == e.table.Version && d.Hash == e.tableHash()) {
			e.lackSince = time.Time{}
			if d.Version == e.table.Version {
				e.good = d.Version
			}
			return nil, nil // current (or a digest older than our table)
		}
		if e.Relay && !e.lacking(now) {
			return nil, nil // the deltas may be on their way
		}
		return e.askTable(now, r), nil
	}
	if e.master == "" || d.Epoch > e.epoch || (d.Epoch == e.epoch && r < e.masterRank) || e.silentMaster(now) {
		return e.askTable(now, r), nil
	}
	return nil, nil // a digest of a former master: ignored, as its table would be
}

// askTable sends a TableReqMsg to peer rank r, at most one per half
// heartbeat.
func (e *Election) askTable(now time.Time, r int) []Action {
	if !e.lastReq.IsZero() && now.Sub(e.lastReq) < e.t.Heartbeat/2 {
		return nil
	}
	e.lastReq = now
	req := TableReqMsg{Name: e.self.Name, Epoch: e.epoch, Version: e.table.Version, PeersHash: e.peersHash}
	if e.Relay {
		req.Version = e.good // what it holds whole: the rows changed since are what it needs
	}
	return []Action{{Kind: SendTo, To: e.peers[r].Name, Msg: &req}}
}

// receiveTableReq: the master answers with its table as last sent, its
// ages moved on to now, so the asker's hash matches the digests.
func (e *Election) receiveTableReq(now time.Time, q *TableReqMsg) ([]Action, error) {
	r, acts, err := e.from(now, tableReqMsgType, q.Name, q.PeersHash)
	if err != nil {
		return acts, err
	}
	e.heard(r, now)
	if !e.IsMaster() {
		return nil, nil
	}
	if acts := e.repair(q); acts != nil {
		return acts, nil
	}
	msg := e.table
	msg.Rows = make(Rows, len(e.table.Rows))
	since := uint32(min(max(now.Sub(e.tableAt).Milliseconds(), 0), int64(neverHeardAge-1)))
	for i, row := range e.table.Rows {
		if row.AgeMs != neverHeardAge {
			row.AgeMs = min(row.AgeMs, neverHeardAge-1-since) + since
		}
		msg.Rows[i] = row
	}
	return []Action{{Kind: SendTo, To: q.Name, Msg: &msg}}, nil
}

func (e *Election) receiveReport(now time.Time, m *ReportMsg) ([]Action, error) {
	r, acts, err := e.from(now, reportMsgType, m.Name, m.PeersHash)
	if err != nil {
		return acts, err
	}
	b := &e.boards[r]
	wasAlive := e.alive(r, now)
	if acts, err := e.httpOK(r, m.HTTP, wasAlive); err != nil {
		return acts, err
	}
	b.report, b.hasReport = *m, true
	e.heard(r, now)
	if own := e.boards[e.self.Rank]; !wasAlive && e.IsMaster() && own.hasReport {
		// a board (re)appears: tell it our HTTP address now, not at our next report
		rep := own.report
		acts = append(acts, Action{Kind: SendTo, To: m.Name, Msg: &rep})
	}
	if _, err := e.epochOK(reportMsgType, m.Name, m.Epoch); err == nil {
		e.maxEpochSeen = max(e.maxEpochSeen, m.Epoch)
	}
	return acts, nil
}

// httpOK refuses a report whose HTTP address is not the peer's: its host
// must be the host configured for that peer in cluster.peers (or one the
// driver's HostOK accepts, such as the address the membership knows it
// at), and while the peer is alive its address does not move (two boards
// sending reports under one name).
func (e *Election) httpOK(r int, addr string, alive bool) ([]Action, error) {
	if addr == "" {
		return nil, nil
	}
	name := e.peers[r].Name
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("state: report of %s: http address %q: %w", name, addr, err)
	}
	want, _, _ := net.SplitHostPort(e.peers[r].Addr)
	if host != want && (e.HostOK == nil || !e.HostOK(name, host)) {
		reason := fmt.Sprintf("board %s reports HTTP address %s, but cluster.peers has it at host %q: refused (another board using its name?)", name, addr, want)
		return []Action{{Kind: Warn, Reason: reason}}, fmt.Errorf("state: %s", reason)
	}
	if b := &e.boards[r]; alive && b.hasReport && b.report.HTTP != "" && b.report.HTTP != addr {
		reason := fmt.Sprintf("board %s reports HTTP address %s while it is alive at %s: refused (two boards using one name?)", name, addr, b.report.HTTP)
		return []Action{{Kind: Warn, Reason: reason}}, fmt.Errorf("state: %s", reason)
	}
	return nil, nil
}

// stepDownGrace is how long after a step-down this board waits for a table
// from the master that would prove the step-down forged (a master that
// really steps down sends no more tables); then it takes over, still well
// under tmax.
func (e *Election) stepDownGrace() time.Duration { return e.t.Heartbeat + 2*e.t.Tick }

func (e *Election) receiveStepDown(now time.Time, m *StepDownMsg) ([]Action, error) {
	r, acts, err := e.sender(stepDownMsgType, m.Name)
	if err != nil {
		return acts, err
	}
	if m.PeersHash != 0 { // version 3 carries it
		if acts, err := e.samePeers(stepDownMsgType, r, m.PeersHash, now); err != nil {
			return acts, err
		}
	}
	if m.Name != e.master || m.Epoch != e.epoch {
		return nil, fmt.Errorf("state: step-down from %s for epoch %d ignored: the master is %q of epoch %d", m.Name, m.Epoch, e.master, e.epoch)
	}
	// take over after the grace unless the master's next table says
	// otherwise (it resets heardMaster)
	if t := now.Add(-e.t.TMax + e.stepDownGrace()); t.Before(e.heardMaster) {
		e.heardMaster = t
	}
	e.boards[r].gone = true // until it is heard again
	e.tookDown.name, e.tookDown.epoch, e.tookDown.at = m.Name, m.Epoch, now
	return nil, nil
}

// masterSteppedDown reports whether the master this board follows stepped
// down at its epoch less than tmax ago. The master sends its step-down while
// a heartbeat of its own may still be on the way (its tick and its shutdown
// send apart), so a board can hear the master again just after the
// step-down, when the board next in rank claims: that claim is the takeover
// the step-down asked for, not one against a master heard all along. A
// master that did not step down (a forged step-down) refuses the claim
// itself and claims above it (receiveTable, the master's case).
func (e *Election) masterSteppedDown(now time.Time) bool {
	d := e.tookDown
	return d.name != "" && d.name == e.master && d.epoch == e.epoch && now.Sub(d.at) < e.t.TMax
}

func (e *Election) receivePeerList(m *PeerListMsg) ([]Action, error) {
	_, acts, err := e.sender(peerListMsgType, m.Name)
	if err != nil {
		return acts, err
	}
	if HashPeers(m.Peers) == e.peersHash {
		return nil, nil
	}
	return []Action{{Kind: Warn, Reason: fmt.Sprintf("peer lists differ: %s has %v, this board (%s) has %v", m.Name, []string(m.Peers), e.self.Name, e.peerList)}}, nil
}

// MemberLeft records that membership declared name dead or gone: it no
// longer counts as alive when choosing who takes over.
func (e *Election) MemberLeft(name string) {
	if r, ok := e.byName[name]; ok && r != e.self.Rank {
		e.boards[r].gone, e.boards[r].member = true, false
	}
}

// MemberJoined records that membership sees name again.
func (e *Election) MemberJoined(name string) {
	if r, ok := e.byName[name]; ok {
		e.boards[r].gone, e.boards[r].member = false, true
	}
}

// StepDown gives up mastership for good (graceful shutdown): Tick does
// nothing afterwards. It returns the message that lets the others take
// over at once; nil when not master.
func (e *Election) StepDown(now time.Time) []Action {
	e.stopped = true
	if !e.IsMaster() {
		return nil
	}
	msg := StepDownMsg{Name: e.self.Name, Epoch: e.epoch, PeersHash: e.peersHash}
	e.master, e.masterRank, e.followSince = "", -1, now
	e.stopped = true
	kind := Broadcast
	if e.Relay {
		kind = Gossip
	}
	return []Action{{Kind: SteppedDown, Epoch: e.epoch, Reason: "shutdown"}, {Kind: kind, Msg: &msg}}
}
