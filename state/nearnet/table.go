package nearnet

import (
	"cmp"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// Table is the master's dynamic proximity table (003 §3.2, scheme 3):
// each board's reported nearest networks, and for a client the boards
// ranked by their round trip to its network. Safe for concurrent use.
type Table struct {
	mu     sync.RWMutex
	boards map[string][]Net
}

// Set takes board's report, cleaned (Clean): bad entries are left out and
// more than MaxNets clipped to the nearest; problems says what was, for
// the caller's log. nil forgets the board.
func (t *Table) Set(board string, nets []Net) (problems []string) {
	kept, problems := Clean(nets)
	t.mu.Lock()
	if t.boards == nil {
		t.boards = map[string][]Net{}
	}
	t.boards[board] = kept // nil: the board measured none
	t.mu.Unlock()
	return problems
}

// Nets is board's reported networks, nearest first; the caller does not
// change them (Set replaces, never edits).
func (t *Table) Nets(board string) []Net {
	t.mu.RLock()
	nets := t.boards[board]
	t.mu.RUnlock()
	return nets
}

// RTT is board's reported round trip to client's network; ok false when
// the board did not report it among its nearest.
func (t *Table) RTT(board string, client netip.Addr) (time.Duration, bool) {
	p, ok := PrefixOf(client)
	if !ok {
		return 0, false
	}
	return rttOf(t.Nets(board), p)
}

func rttOf(nets []Net, p netip.Prefix) (time.Duration, bool) {
	for _, n := range nets {
		if n.Prefix == p {
			return n.RTT, true
		}
	}
	return 0, false
}

// Ranked is a board and its round trip to a network.
type Ranked struct {
	Board string
	RTT   time.Duration
}

// Near is the table's row for client: the boards that reported its
// network, shortest round trip first (equal ones by name), at most n (the
// paper's three: sched.LearnedNear). The dispatcher ranks the same way
// from RTT (sched's learned proximity).
func (t *Table) Near(client netip.Addr, n int) []Ranked {
	p, ok := PrefixOf(client)
	if !ok {
		return nil
	}
	var row []Ranked
	t.mu.RLock()
	for b, nets := range t.boards {
		if rtt, ok := rttOf(nets, p); ok {
			row = append(row, Ranked{b, rtt})
		}
	}
	t.mu.RUnlock()
	slices.SortFunc(row, func(a, b Ranked) int {
		if c := cmp.Compare(a.RTT, b.RTT); c != 0 {
			return c
		}
		return cmp.Compare(a.Board, b.Board)
	})
	return row[:min(len(row), max(n, 0))]
}
