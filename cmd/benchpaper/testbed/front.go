package testbed

import (
	"fmt"

	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state/row"
)

// The front: ews's queue or the director, the master's CPU (003), and the
// boards' reports to the Dispatcher.
// dispatch places a request through the Dispatcher: at once, or (queued
// mode) into the queue.
func (m *sim) dispatch(r *request) {
	if m.place(r) {
		return
	}
	if m.setup.Mode == Director {
		m.fail(r) // no board eligible at all (every one held)
		return
	}
	qi := r.ci
	if m.oneFIFO {
		qi = 0
	}
	m.queue[qi] = append(m.queue[qi], r)
}

// place asks the Dispatcher for a board now; false: none free.
func (m *sim) place(r *request) bool {
	sr := &sched.Request{Class: r.ci, Client: m.addr(r.user), Path: "/"}
	t, ok := m.d.TryAcquire(sr)
	if !ok {
		return false
	}
	r.ticket = t
	var bi int
	fmt.Sscanf(t.Addr, "b:%d", &bi)
	if ms := m.setup.Master; ms != nil && ms.Redirect {
		m.assigned[r.user] = bi
	}
	m.toBoard(r, bi)
	return true
}

func (m *sim) toBoard(r *request, bi int) {
	r.board = bi
	if !m.boards[bi].admit(r) {
		r.ticket.Done()
		m.fail(r)
	}
}

// drain dispatches queued requests while boards take them, highest class
// first, and sheds those that waited past the queue timeout.
func (m *sim) drain() {
	for qi := range m.queue {
		q := m.queue[qi]
		for len(q) > 0 && m.now-q[0].sent > m.setup.QueueTimeout {
			m.fail(q[0])
			q = q[1:]
		}
		m.queue[qi] = q
	}
	for qi := range m.queue {
		for len(m.queue[qi]) > 0 {
			if !m.place(m.queue[qi][0]) {
				return // strict order: nothing below may overtake
			}
			m.queue[qi] = m.queue[qi][1:]
		}
	}
}

// stepMaster forwards what the master's CPU gets through this tick.
func (m *sim) stepMaster() {
	ms := m.setup.Master
	if ms == nil {
		return
	}
	budget := ms.Cores * m.run.Step.Seconds()
	for len(m.mq) > 0 && budget > 0 {
		if m.mLeft <= 0 {
			m.mLeft = ms.PerRequest.Seconds()
		}
		use := min(budget, m.mLeft)
		m.mLeft -= use
		budget -= use
		if m.now >= m.run.Warmup {
			m.mBusy += use
		}
		if m.mLeft > 1e-12 {
			break
		}
		r := m.mq[0]
		m.mq = m.mq[1:]
		m.mLeft = 0
		m.dispatch(r)
	}
}

// report gives the Dispatcher every board's row, as the boards' heartbeats do.
func (m *sim) report() {
	rows := make([]row.Board, len(m.boards))
	for i, b := range m.boards {
		capacity := b.spec.Slots // director: a size, not a limit (sched.Options.Unlimited)
		if m.auto != nil {
			capacity = m.auto[i].Observe(m.clock.Now(), b.done, b.inFlight())
		}
		w := 1
		switch {
		case m.auto != nil && m.setup.AutoWeight:
			w = capacity
		case m.run.Weights != nil:
			w = m.run.Weights[i]
		}
		rows[i] = row.Board{Name: b.spec.Name, Rank: i, HTTP: fmt.Sprintf("b:%d", i), Linknum: b.inFlight(),
			Capacity: capacity, Weight: w, Runstate: row.Running, Load: b.load(m.now)}
		if rows[i].Name == "" {
			rows[i].Name = fmt.Sprintf("b%d", i)
		}
	}
	if m.nets != nil {
		m.nets.report()
	}
	m.d.Update(rows)
}
