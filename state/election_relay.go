package state

import (
	"slices"
	"time"
)

// The Election's part in a relayed cluster (relay.go; docs/DESIGN.md,
// Gossip, "Relayed clusters"): the master hands deltas and digests to
// gossip instead of sending its table to every board, the boards report
// to the master only, and a follower that lacks the master's table for
// fullTableEvery heartbeats asks for it (it comes over TCP).

// names lists the peers' names in rank order.
func names(peers []Peer) []string {
	out := make([]string, len(peers))
	for i, p := range peers {
		out[i] = p.Name
	}
	return out
}

// defaultRows is the table a follower starts a master's epoch from: every
// board down and never heard, which the master's deltas then overwrite.
func defaultRows(peers []Peer) Rows {
	rows := make(Rows, len(peers))
	for i, p := range peers {
		rows[i] = Row{Rank: uint16(i), Name: p.Name, Runstate: Down, AgeMs: neverHeardAge}
	}
	return rows
}

// relayAlive: in a relayed cluster a follower hears only the master, whose
// table says which boards are up; before any master is known, membership
// says which are there. The master judges from the reports alone.
func (e *Election) relayAlive(r int) bool {
	switch {
	case e.IsMaster():
		return false
	case e.master == "":
		return e.boards[r].member
	}
	return r < len(e.table.Rows) && e.table.Rows[r].Runstate != Down
}

// relayTick is masterTick in a relayed cluster: the deltas of a change at
// once, otherwise a digest (with the stats, when they moved) every
// heartbeat. There is no periodic full table: loads that moved less than
// loadDeadband wait for a change.
func (e *Election) relayTick(now time.Time) []Action {
	rows := e.rows(now)
	if !rowsChanged(e.table.Rows, rows) && now.Sub(e.lastSent)+e.t.Tick/2 < e.t.Heartbeat {
		return nil
	}
	e.lastSent = now
	return e.sendTable(now, rows)
}

// relayTable makes rows the table where they changed from the table last
// sent (from defaultRows after a claim, which numbered the version) and
// returns the deltas that carry the change and moved stats, each within
// one relayed message; none when nothing changed.
func (e *Election) relayTable(now time.Time, rows Rows) []Action {
	sent, claimed := e.table.Rows, false
	if len(sent) != len(rows) {
		sent, claimed = defaultRows(e.peers), true
	}
	merged := make(Rows, len(rows))
	var changed Rows
	for i := range rows {
		merged[i] = sent[i]
		if rowChanged(sent[i], rows[i]) {
			merged[i] = rows[i]
			changed = append(changed, rows[i])
		}
	}
	var stats ClassStats
	if !slices.Equal(e.stats, e.table.Stats) {
		stats = e.stats
		if stats == nil {
			stats = ClassStats{} // none now: not nil, which means unchanged
		}
	}
	if len(changed) > 0 && !claimed {
		e.table.Version++
	}
	if len(e.rowVer) != len(rows) || claimed {
		e.rowVer = make([]uint64, len(rows))
	}
	for i := range rows {
		if rowChanged(sent[i], rows[i]) {
			e.rowVer[i] = e.table.Version
		}
	}
	e.table.Rows, e.table.Stats, e.tableAt = merged, e.stats, now
	e.hash = TableHash(&e.table)
	head := DeltaMsg{Epoch: e.epoch, Master: e.self.Name, Version: e.table.Version, Hash: e.hash, PeersHash: e.peersHash}
	var acts []Action
	for i, d := range chunkDelta(head, changed, stats) {
		if claimed && i == 0 {
			// a claim, rare, goes to every board at once, and every board
			// passes it on (one that lost its copy gets it within a tick or
			// two): a takeover within tmax and two heartbeats does not wait
			// for gossip to spread from one board
			acts = append(acts, Action{Kind: GossipAll, Msg: d})
			continue
		}
		acts = append(acts, Action{Kind: Gossip, Msg: d, Also: e.successors(now)})
	}
	return acts
}

// relaySuccessors is how many boards the master of a relayed cluster
// also sends its deltas and digests directly: the next in rank, which
// would take over, so they count its silence from when it fell silent,
// not from when gossip brought its last word. The same relayed message
// goes to them (Action.Also): a later copy by gossip is a copy, not a
// newer word of the master.
const relaySuccessors = 2

// successors names the relaySuccessors lowest-rank boards alive but this
// one.
func (e *Election) successors(now time.Time) []string {
	var out []string
	for r := range e.peers {
		if len(out) == relaySuccessors {
			break
		}
		if r != e.self.Rank && e.alive(r, now) {
			out = append(out, e.peers[r].Name)
		}
	}
	return out
}

// relayRepairPackets: a follower that lacks rows gets the rows changed
// since the version it holds whole in at most this many deltas sent to it
// directly; more, and the full table (over TCP).
const relayRepairPackets = 4

// repair answers a relayed cluster's table request with the rows changed
// since the version the asker holds whole, when they are few; nil: send
// the table.
func (e *Election) repair(q *TableReqMsg) []Action {
	if !e.Relay || q.Epoch != e.epoch || q.Version == 0 || q.Version > e.table.Version || len(e.rowVer) != len(e.table.Rows) {
		return nil
	}
	var rows Rows
	for i, v := range e.rowVer {
		if v > q.Version {
			rows = append(rows, e.table.Rows[i])
		}
	}
	head := DeltaMsg{Epoch: e.epoch, Master: e.self.Name, Version: e.table.Version, Hash: e.hash, PeersHash: e.peersHash}
	chunks := chunkDelta(head, rows, nil)
	if len(chunks) > relayRepairPackets {
		return nil
	}
	if len(chunks) == 0 {
		chunks = []*DeltaMsg{&head} // nothing changed since: the version and hash alone
	}
	acts := make([]Action, len(chunks))
	for i, d := range chunks {
		acts[i] = Action{Kind: SendTo, To: q.Name, Msg: d}
	}
	return acts
}

// digest is the master's heartbeat without a change: to every board, or
// to gossip (and its successors) in a relayed cluster.
func (e *Election) digest(now time.Time) []Action {
	d := DigestMsg{Epoch: e.epoch, Master: e.self.Name, Version: e.table.Version, Hash: e.hash, PeersHash: e.peersHash}
	if e.Relay {
		return []Action{{Kind: Gossip, Msg: &d, Also: e.successors(now)}}
	}
	return []Action{{Kind: Broadcast, Msg: &d}}
}

// relayReport sends this board's report in a relayed cluster: to the
// master it follows, and the master's own to gossip (every board needs
// its HTTP address); nothing while no master is known.
func (e *Election) relayReport(rep *ReportMsg) []Action {
	switch {
	case e.IsMaster():
		return []Action{{Kind: Gossip, Msg: rep}}
	case e.master != "":
		return []Action{{Kind: SendTo, To: e.master, Msg: rep}}
	}
	return nil
}

// tookTable: in a relayed cluster, a table taken in full sets every row's
// version; one of a new master's epoch without rows (followed on a delta)
// starts from defaultRows.
func (e *Election) tookTable() {
	e.hashStale = false // the callers hashed the table taken
	if !e.Relay {
		return
	}
	e.lackSince = time.Time{}
	if len(e.rowVer) != len(e.peers) {
		e.rowVer = make([]uint64, len(e.peers))
	}
	if len(e.table.Rows) != len(e.peers) {
		e.table.Rows = defaultRows(e.peers)
		clear(e.rowVer)
		e.hash, e.hashStale = TableHash(&e.table), false
		e.good = 0
		return
	}
	for i := range e.rowVer {
		e.rowVer[i] = e.table.Version
	}
	e.good = e.table.Version
}

// receiveDelta takes the master's delta; a delta of another master or
// epoch is judged as its table would be (receiveTable), then taken if
// this board now follows it.
func (e *Election) receiveDelta(now time.Time, d *DeltaMsg) ([]Action, error) {
	r, acts, err := e.fromMaster(now, deltaMsgType, d.Master, d.PeersHash, d.Epoch)
	if err != nil {
		return acts, err
	}
	if !e.IsMaster() && d.Master == e.master && d.Epoch == e.epoch {
		e.heard(r, now)
		e.heardMaster = now
		e.applyDelta(now, d)
		return nil, nil
	}
	t := TableMsg{Epoch: d.Epoch, Master: d.Master, Version: d.Version, PeersHash: d.PeersHash}
	acts, err = e.receiveTable(now, &t)
	if err == nil && !e.IsMaster() && e.master == d.Master && e.epoch == d.Epoch {
		e.applyDelta(now, d)
	}
	return acts, err
}

// applyDelta takes each of d's rows newer than the row held (rows are
// copied: Table's callers share the old ones).
func (e *Election) applyDelta(now time.Time, d *DeltaMsg) {
	if len(e.table.Rows) != len(e.peers) || len(e.rowVer) != len(e.peers) {
		e.table.Rows = nil
		e.tookTable()
	}
	rows := slices.Clone(e.table.Rows)
	for _, row := range d.Rows {
		i := int(row.Rank)
		if i >= len(rows) || e.peers[i].Name != row.Name || e.rowVer[i] >= d.Version {
			continue
		}
		rows[i], e.rowVer[i] = row, d.Version
	}
	e.table.Rows = rows
	e.table.Version = max(e.table.Version, d.Version)
	if d.Stats != nil {
		e.table.Stats = d.Stats
	}
	e.tableAt, e.hashStale = now, true
}

// tableHash is TableHash of the table held, computed when rows moved.
func (h *held) tableHash() uint32 {
	if h.hashStale {
		h.hash, h.hashStale = TableHash(&h.table), false
	}
	return h.hash
}

// lacking: the master's digests name a table this board lacks; true from
// the second such digest (the first may have overtaken the deltas), or,
// in the first fullTableEvery heartbeats of following a master, once
// they have for that long (its first rows are all on their way by gossip).
func (e *Election) lacking(now time.Time) bool {
	if e.lackSince.IsZero() {
		e.lackSince = now
		return false
	}
	wait := e.t.Heartbeat
	if now.Sub(e.followSince) < fullTableEvery*e.t.Heartbeat {
		wait = fullTableEvery * e.t.Heartbeat
	}
	return now.Sub(e.lackSince)+e.t.Tick/2 >= wait
}
