package devsync

import (
	"maps"
	"slices"
	"sort"

	"github.com/ews-firmware/ews/hal"
)

// The cluster's memory of outputs (docs/DESIGN.md, Board services): every
// board keeps, for each output of the other boards, the snapshot of its
// last command (the one with the highest hal.Snapshot.Seq it saw on that
// board's stream). It offers that memory on its own local stream
// ("outputs", before "devices"), so a board that restarts, or a fresh card
// with the same name, learns from every peer it reaches what its outputs
// were, and restores the newest.

// remember keeps s as board bn's last commanded state when its Seq is
// higher than what is remembered; the caller holds m.mu. Shared ("any")
// devices have a copy per board and are not remembered.
func (m *Mirror) remember(bn string, s hal.Snapshot) {
	if s.Seq == 0 || s.Node != bn {
		return
	}
	if old, ok := m.mem[s.Name]; ok && old.Node == bn && old.Seq >= s.Seq {
		return
	}
	s.Error = ""
	m.mem[s.Name] = s
}

// forgetMissing drops what is remembered of board bn's devices that its
// full list (the "devices" event) no longer has; the caller holds m.mu.
func (m *Mirror) forgetMissing(bn string, has map[string]hal.Snapshot) {
	for name, s := range m.mem {
		if s.Node != bn {
			continue
		}
		if _, ok := has[name]; !ok {
			delete(m.mem, name)
			m.log.Info("devsync: remembered output dropped: its board no longer has the device", "board", bn, "device", name, "state", s.State)
		}
	}
}

// Remembered is every output of the other boards at its last command,
// sorted by name: what this board offers on its local stream.
func (m *Mirror) Remembered() []hal.Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Collect(maps.Values(m.mem))
	// sort.Slice, not slices.SortFunc: each element type given to SortFunc
	// links ~8 KB of sort code into the ARM builds (docs/NOTES.md "The ARM
	// builds back under their ceilings"); sort.Slice's code is shared.
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// offer records what board bn remembers of this board's outputs (nil: it
// sent no memory, an older board). Only this board's own outputs are kept:
// a board is not believed about a third board's.
func (m *Mirror) offer(bn string, list []hal.Snapshot) {
	mine := []hal.Snapshot{}
	for _, s := range list {
		if s.Node == m.self && s.Seq > 0 {
			mine = append(mine, s)
		}
	}
	m.mu.Lock()
	m.offers[bn] = mine
	m.mu.Unlock()
}

// Offers returns, for each board that answered since Run started, what it
// remembers of this board's outputs (an empty list: nothing). A board that
// restarts restores from them (node/restore).
func (m *Mirror) Offers() map[string][]hal.Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]hal.Snapshot, len(m.offers))
	for bn, l := range m.offers {
		out[bn] = slices.Clone(l)
	}
	return out
}

// Poke makes Run re-read peers() now rather than at its next Refresh (a
// board that just started connects as soon as it learns its peers).
func (m *Mirror) Poke() {
	select {
	case m.poke <- struct{}{}:
	default:
	}
}
