package sched

import (
	"time"

	"github.com/ews-firmware/ews/state/row"
)

// Update takes the current table: the boards' rows exactly as the state
// package builds them from the boards' own reports (one row type from the
// gossip decoder to here). Boards missing from rows get no new requests
// (their tickets still count until Done). A row's Linknum is the board's
// own report of its in-flight requests (negative: no report; invariant 3);
// only a running board with an HTTP address gets new requests.
func (d *Dispatcher) Update(rows []row.Board) {
	d.mu.Lock()
	defer func() {
		notes := d.takeNotes()
		d.mu.Unlock()
		if notes != nil {
			go tell(notes) // not in the caller's goroutine: the cluster's loop must not wait on a write
		}
	}()
	d.updGen++
	now := d.now()
	for i := range rows {
		in := &rows[i]
		if in.Name == "" {
			continue
		}
		b := d.byName[in.Name]
		if b == nil {
			b = &Board{Name: in.Name, idx: len(d.boards), reported: -1}
			d.boards = append(d.boards, b)
			d.byName[b.Name] = b
			for qi := range d.queues {
				d.queues[qi].pinned = append(d.queues[qi].pinned, fifo{})
			}
			d.m.addBoard(b.Name)
		}
		b.seen, b.present = d.updGen, true
		b.Rank, b.Addr, b.Capacity, b.Weight = in.Rank, in.HTTP, max(in.Capacity, 0), float64(in.Weight)
		b.Running, b.Load, b.Reported = in.Runstate == row.Running && in.HTTP != "", in.Load, in.Load
		if d.rt != nil {
			b.RT = d.rt(in.Name)
		}
		if in.Linknum >= 0 {
			d.report(b, in, now)
		}
		b.held = observe(d.policy, b, now)
		d.refresh(b)
	}
	for _, b := range d.boards {
		if b.seen != d.updGen {
			b.present = false
		}
	}
	if !d.closed {
		d.dispatch(now)
	}
}

// reportJitter is how far a report's heard time, rebuilt from the row's
// whole milliseconds, moves between tables that carry the same report.
const reportJitter = 5 * time.Millisecond

// report takes board b's own count of its in-flight requests from its row.
// What it counts beyond our tickets running at the report (atReport) are
// requests we did not place (a previous master's, a redirect assignment's)
// and go on counting until the next report. Without Proxy our tickets
// running at the report are taken as local now. With Proxy every request
// on the board is ours, and a report heard after some of ours finished
// (taken by the board before they ended, heard after) counts them still:
// they are taken out (finished), else the board looked full to its pinned
// requests until its next heartbeat (issue 37: a hot sensor's reads
// waited a heartbeat at 0.4x load). The same report in a later table
// (another board's report made it) is not taken again.
func (d *Dispatcher) report(b *Board, in *row.Board, now time.Time) {
	if !d.proxy {
		b.reported, b.atReport = in.Linknum, b.local
		d.learn(b, in, now)
		return
	}
	heard := now.Add(-time.Duration(max(in.LastSeenMs, 0)) * time.Millisecond)
	if in.Linknum == b.reported && !heard.After(b.heard.Add(reportJitter)) {
		return // the report already taken
	}
	b.reported, b.atReport, b.heard = in.Linknum, b.local+b.finished, heard
	b.finished = 0
	d.learn(b, in, now)
}

// learn ends b's report interval at a report taken now: the linknum's
// average over it is what the report's cpu (an average over the same
// interval) goes with, for the unit (cpuCost) and the correction (fresh).
func (d *Dispatcher) learn(b *Board, in *row.Board, now time.Time) {
	b.flights.close(b.Linknum, now)
	n := float64(max(in.Linknum, 0))
	if b.flights.ok {
		n = b.flights.mean
	}
	b.cost.learn(in.Load.CPU, n)
}

// refresh sets the linknum the policies see: the board's report plus our
// own dispatches and completions since it, never below our own count; and
// under Config.Stale "placed" the load they read (fresh).
func (d *Dispatcher) refresh(b *Board) {
	if d.fresh {
		b.flights.add(b.Linknum, d.now())
	}
	n := b.local
	if b.reported >= 0 {
		n = max(n, b.reported+b.local-b.atReport)
	}
	b.Linknum = n
	if d.fresh {
		b.Load = fresh(b)
	}
	d.m.link[b.idx].Set(float64(n))
}

// slots is the capacity of the boards that run requests now.
func (d *Dispatcher) slots() int {
	n := 0
	for _, b := range d.boards {
		if b.present && b.Running {
			n += b.Capacity
		}
	}
	return n
}
