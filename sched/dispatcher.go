package sched

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of the Dispatcher's tunables that have no config key.
const (
	// DefaultInterval is how long a class's queue sojourn must stay above
	// queue_target before new arrivals of that class are refused (CoDel's
	// interval).
	DefaultInterval = 100 * time.Millisecond
	// DefaultRetryAfter is the Retry-After suggested with every shed answer.
	DefaultRetryAfter = time.Second
)

// Options are the Dispatcher's run-time dependencies; every field may be zero.
type Options struct {
	Registerer prometheus.Registerer // nil: metrics are kept but not registered
	Logger     *slog.Logger
	Now        func() time.Time // clock for sojourn times; default time.Now
	Rand       *rand.Rand       // seeds random policies; nil: the runtime's generator
	Policy     Policy           // overrides cfg.Policy
	Interval   time.Duration    // CoDel interval; default DefaultInterval
	RetryAfter time.Duration    // default DefaultRetryAfter
}

// Dispatcher is the master's queue and dispatcher: bounded FIFO queues per
// class, strict priority (with an optional reserve share for lower classes),
// fail-fast shedding, and the policy that picks a board for each request.
// Safe for concurrent use; one mutex guards everything, and a queued request
// costs no goroutine beyond its caller's.
type Dispatcher struct {
	mu       sync.Mutex
	cls      *Classifier
	policy   Policy
	one      bool // one FIFO for every class (lc)
	limit    int  // per queue
	total    int  // queued requests
	maxTotal int
	timeout  time.Duration
	target   time.Duration
	interval time.Duration
	retry    time.Duration
	reserve  float64
	credit   float64
	now      func() time.Time
	log      *slog.Logger

	queues  []queue
	depth   []int    // queued per class
	started []uint64 // dispatched per class since this dispatcher began
	admit   admission
	seq     uint64
	boards  []*Board
	byName  map[string]*Board
	updGen  uint64
	scratch []*Board // eligible boards of the current round
	free    []*flight
	closed  bool
	shed    [][]*ErrShed // [class][reason]
	m       *metrics
	waiters sync.Pool
	// trace, when set (tests), sees every dispatch under the lock; seq is
	// the request's arrival number, 0 when it never queued.
	trace func(req *Request, seq uint64, b *Board)
}

// NewDispatcher builds the queue and policy from cfg.
func NewDispatcher(cfg config.Sched, opt Options) (*Dispatcher, error) {
	cls, err := NewClassifier(cfg.Classes)
	if err != nil {
		return nil, err
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	p := opt.Policy
	if p == nil {
		if p, err = NewPolicy(cfg, opt.Rand, opt.Logger); err != nil {
			return nil, err
		}
	}
	d := &Dispatcher{
		cls: cls, policy: p, one: oneQueue(p),
		limit: cfg.Queue, timeout: cfg.QueueTimeout.Duration, target: cfg.QueueTarget.Duration,
		interval: opt.Interval, retry: opt.RetryAfter, reserve: cfg.Reserve,
		now: opt.Now, log: opt.Logger, byName: map[string]*Board{},
	}
	if d.limit <= 0 {
		d.limit = 1024
	}
	if d.timeout <= 0 {
		d.timeout = 5 * time.Second
	}
	if d.interval <= 0 {
		d.interval = DefaultInterval
	}
	if d.retry <= 0 {
		d.retry = DefaultRetryAfter
	}
	if !(d.reserve > 0 && d.reserve < 1) {
		d.reserve = 0
	}
	if d.now == nil {
		d.now = time.Now
	}
	n := cls.Len()
	d.maxTotal = d.limit * n
	if d.one {
		d.limit = d.maxTotal
		d.queues = make([]queue, 1)
	} else {
		d.queues = make([]queue, n)
	}
	d.depth = make([]int, n)
	d.started = make([]uint64, n)
	d.admit = newAdmission(n)
	for c := 0; c < n; c++ {
		row := make([]*ErrShed, len(reasons))
		for i, r := range reasons {
			row[i] = &ErrShed{Reason: r, Class: cls.Name(c), RetryAfter: d.retry}
		}
		d.shed = append(d.shed, row)
	}
	d.m = newMetrics(opt.Registerer, cls.Names())
	d.waiters.New = func() any { return newWaiter() }
	return d, nil
}

// Classifier returns the classifier built from the config.
func (d *Dispatcher) Classifier() *Classifier { return d.cls }

// Policy returns the policy in use.
func (d *Dispatcher) Policy() Policy { return d.policy }

// Acquire blocks until a board is chosen for req (its linknum is then
// already incremented; call Ticket.Done when the request finished) or the
// request is shed (*ErrShed: answer 503 with Retry-After), or ctx ends
// (ctx.Err(): the client is gone; its place is freed).
func (d *Dispatcher) Acquire(ctx context.Context, req *Request) (Ticket, error) {
	if req == nil {
		return Ticket{}, errors.New("sched: nil request")
	}
	if err := ctx.Err(); err != nil {
		return Ticket{}, err
	}
	class := req.Class
	if class < 0 || class >= d.cls.Len() {
		class = d.cls.Len() - 1
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return Ticket{}, d.refuse(class, rClosed)
	}
	bi := -1
	if req.pinned() {
		b := d.byName[req.Board]
		// Fail fast: a request pinned to a board that is gone, down or
		// overloaded cannot run anywhere else; waiting the queue timeout
		// for it would only tell the user late.
		if b == nil || !b.present || !b.Running {
			d.mu.Unlock()
			return Ticket{}, d.refuse(class, rNoBoard)
		}
		bi = b.idx
	}
	now := d.now()
	d.admit.arrive(class, now)
	// After every dispatch round no queued request can be placed, so one
	// that can be placed now goes ahead of nobody: dispatch it at once.
	d.eligible()
	if b := d.choose(req, bi); b != nil {
		t := d.start(req, 0, class, b)
		d.mu.Unlock()
		return t, nil
	}
	qi := d.qindex(class)
	q := &d.queues[qi]
	if h := d.oldestLive(q); h != nil {
		q.cd.observe(now.Sub(h.enq), d.target, d.interval, now)
	} else {
		q.cd.reset()
	}
	if q.cd.dropping {
		d.mu.Unlock()
		return Ticket{}, d.refuse(class, rOverload)
	}
	if d.target > 0 && !req.pinned() {
		if w, ok := d.admit.wait(class, d.depth, d.one, d.slots()); ok && w > d.target/2 {
			d.mu.Unlock()
			return Ticket{}, d.refuse(class, rOverload)
		}
	}
	if (q.n >= d.limit || d.total >= d.maxTotal) && !d.evictBelow(qi) {
		d.mu.Unlock()
		return Ticket{}, d.refuse(class, rFull)
	}
	w := d.waiters.Get().(*waiter)
	w.req, w.class, w.q, w.board, w.enq = req, class, qi, bi, now
	d.seq++
	w.seq = d.seq
	d.push(w) // nothing placeable: no dispatch round needed
	d.mu.Unlock()
	return d.wait(ctx, w)
}

// oldestLive is the oldest waiter of q that waits for load, not for a board
// that is gone or stopped (those would hold the sojourn high for nothing).
func (d *Dispatcher) oldestLive(q *queue) *waiter {
	best := q.any.head
	if q.npinned > 0 {
		for i := range q.pinned {
			h := q.pinned[i].head
			if h == nil || !d.boards[i].present || !d.boards[i].Running {
				continue
			}
			if best == nil || h.seq < best.seq {
				best = h
			}
		}
	}
	return best
}

// refuse counts a shed request that never queued and returns its error.
func (d *Dispatcher) refuse(class, reason int) error {
	d.m.shed[class][reason].Inc()
	return d.shed[class][reason]
}

func (d *Dispatcher) qindex(class int) int {
	if d.one {
		return 0
	}
	return class
}

// wait blocks the caller until its waiter is answered, times out or ctx ends.
func (d *Dispatcher) wait(ctx context.Context, w *waiter) (Ticket, error) {
	w.timer.Reset(d.timeout)
	var cause error
	select {
	case <-w.ch:
		w.timer.Stop()
		return d.collect(w, nil)
	case <-ctx.Done():
		cause = ctx.Err()
	case <-w.timer.C:
	}
	w.timer.Stop()
	d.mu.Lock()
	if w.answered { // answered while we woke: take that answer
		d.mu.Unlock()
		<-w.ch
		return d.collect(w, cause)
	}
	d.unlink(w)
	class := w.class
	if cause == nil { // queue_timeout
		if w.board < 0 || (d.boards[w.board].present && d.boards[w.board].Running) {
			now := d.now()
			d.queues[w.q].cd.observe(now.Sub(w.enq), d.target, d.interval, now)
		}
		cause = d.refuse(class, rTimeout)
	}
	d.mu.Unlock()
	d.putWaiter(w)
	return Ticket{}, cause
}

// collect reads an answered waiter and recycles it. A ticket that arrived
// after the client left is handed back at once.
func (d *Dispatcher) collect(w *waiter, cause error) (Ticket, error) {
	t, err := w.t, w.err
	d.putWaiter(w)
	if err == nil && cause != nil {
		t.Done()
		return Ticket{}, cause
	}
	return t, err
}

func (d *Dispatcher) putWaiter(w *waiter) {
	w.req, w.t, w.err, w.answered = nil, Ticket{}, nil, false
	d.waiters.Put(w)
}

func (d *Dispatcher) push(w *waiter) {
	q := &d.queues[w.q]
	q.list(w).push(w)
	w.queued = true
	q.n++
	if w.board >= 0 {
		q.npinned++
	}
	d.total++
	d.depth[w.class]++
	d.m.depth[w.class].Set(float64(d.depth[w.class]))
}

func (d *Dispatcher) unlink(w *waiter) {
	if !w.queued {
		return
	}
	q := &d.queues[w.q]
	q.list(w).remove(w)
	w.queued = false
	q.n--
	if w.board >= 0 {
		q.npinned--
	}
	d.total--
	d.depth[w.class]--
	d.m.depth[w.class].Set(float64(d.depth[w.class]))
}

// answer wakes the waiter's caller; it must be unlinked already.
func (d *Dispatcher) answer(w *waiter, t Ticket, err error) {
	w.answered, w.t, w.err = true, t, err
	w.ch <- struct{}{}
}

// evictBelow sheds the newest request of the lowest non-empty class below
// queue qi; false when there is none.
func (d *Dispatcher) evictBelow(qi int) bool {
	for l := len(d.queues) - 1; l > qi; l-- {
		if d.queues[l].n == 0 {
			continue
		}
		w := d.queues[l].newest()
		d.unlink(w)
		d.answer(w, Ticket{}, d.refuse(w.class, rEvicted))
		return true
	}
	return false
}

// eligible fills d.scratch with the boards that may take a request now.
func (d *Dispatcher) eligible() {
	d.scratch = d.scratch[:0]
	for _, b := range d.boards {
		b.elig = b.present && b.available()
		if b.elig {
			d.scratch = append(d.scratch, b)
		}
	}
}

// choose picks the board for req (pinned to board index bi, or -1) among
// the eligible ones; nil when none fits.
func (d *Dispatcher) choose(req *Request, bi int) *Board {
	if bi >= 0 {
		if b := d.boards[bi]; b.elig {
			return b
		}
		return nil
	}
	if len(d.scratch) == 0 {
		return nil
	}
	b := d.policy.Select(d.scratch, req)
	if b == nil || b.idx >= len(d.boards) || d.boards[b.idx] != b || !b.elig {
		return nil // a policy must return a board of the pool
	}
	return b
}

// placeable is the oldest waiter of queue qi that an eligible board can take.
func (d *Dispatcher) placeable(qi int) *waiter {
	q := &d.queues[qi]
	var best *waiter
	if q.any.head != nil && len(d.scratch) > 0 {
		best = q.any.head
	}
	if q.npinned > 0 {
		for i := range q.pinned {
			if h := q.pinned[i].head; h != nil && d.boards[i].elig && (best == nil || h.seq < best.seq) {
				best = h
			}
		}
	}
	return best
}

// next picks the waiter to serve: the highest class first, except that a
// lower class that waits gets the reserve share of the dispatches.
func (d *Dispatcher) next() *waiter {
	var first, lower *waiter
	for qi := range d.queues {
		w := d.placeable(qi)
		if w == nil {
			continue
		}
		if first == nil {
			first = w
			if d.reserve == 0 {
				break
			}
			continue
		}
		lower = w
		break
	}
	if lower != nil {
		d.credit += d.reserve
		if d.credit >= 1 {
			d.credit--
			return lower
		}
	}
	return first
}

// dispatch hands queued requests to boards while both are available.
func (d *Dispatcher) dispatch(now time.Time) {
	for d.total > 0 {
		d.eligible()
		if len(d.scratch) == 0 {
			return
		}
		w := d.next()
		if w == nil {
			return
		}
		b := d.choose(w.req, w.board)
		if b == nil {
			return
		}
		d.unlink(w)
		sojourn := now.Sub(w.enq)
		cd := &d.queues[w.q].cd
		cd.observe(sojourn, d.target, d.interval, now)
		d.m.wait[w.class].Observe(sojourn.Seconds())
		if cd.dropping && sojourn > d.target && (w.q > 0 || d.one) {
			// CoDel's head drop: while the queue stays above its target,
			// a request that already waited past it is answered 503 now
			// rather than served late, so served pages keep a bounded wait.
			// The first class's own queue is never dropped here (under
			// lc there is one queue for all, and all are treated alike).
			d.answer(w, Ticket{}, d.refuse(w.class, rOverload))
			continue
		}
		d.answer(w, d.start(w.req, w.seq, w.class, b), nil)
	}
}

// start counts a dispatch of a class's request to b and returns its ticket.
func (d *Dispatcher) start(req *Request, seq uint64, class int, b *Board) Ticket {
	if d.trace != nil {
		d.trace(req, seq, b)
	}
	w := d.cls.Weight(class)
	b.local++
	b.ReqLoad += w
	d.refresh(b)
	var f *flight
	if n := len(d.free); n > 0 {
		f, d.free = d.free[n-1], d.free[:n-1]
	} else {
		f = &flight{d: d}
	}
	f.b, f.class, f.weight, f.start = b, class, w, d.now()
	d.m.dispatch[b.idx][class].Inc()
	d.started[class]++
	return Ticket{Board: b.Name, Addr: b.Addr, Class: class, f: f, gen: f.gen}
}

// finish ends a flight: its board gets the slot back.
func (d *Dispatcher) finish(f *flight) {
	f.gen++
	now := d.now()
	d.admit.served(f.class, now.Sub(f.start))
	b := f.b
	if b.local > 0 {
		b.local--
	}
	b.ReqLoad -= f.weight
	if b.local == 0 || b.ReqLoad < 0 {
		b.ReqLoad = 0
	}
	d.refresh(b)
	f.b = nil
	d.free = append(d.free, f)
	if !d.closed {
		d.dispatch(now)
	}
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

// refresh sets the linknum the policies see: the board's report plus our
// own dispatches and completions since it, never below our own count.
func (d *Dispatcher) refresh(b *Board) {
	n := b.local
	if b.reported >= 0 {
		n = max(n, b.reported+b.local-b.atReport)
	}
	b.Linknum = n
	d.m.link[b.idx].Set(float64(n))
}

// Update takes the current table. Boards missing from pool get no new
// requests (their tickets still count until Done). Each Board's Linknum is
// the board's own report of its in-flight requests (negative: no report).
func (d *Dispatcher) Update(pool []Board) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.updGen++
	now := d.now()
	for i := range pool {
		in := &pool[i]
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
		b.Rank, b.Addr, b.Capacity, b.Weight = in.Rank, in.Addr, in.Capacity, in.Weight
		b.Running, b.Load, b.RT, b.Overloaded = in.Running, in.Load, in.RT, in.Overloaded
		if in.Linknum >= 0 {
			b.reported, b.atReport = in.Linknum, b.local
		}
		observe(d.policy, b, now)
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

// Boards returns a copy of the Dispatcher's view of the boards it knows
// (present or not), in the order first seen.
func (d *Dispatcher) Boards() []Board {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Board, 0, len(d.boards))
	for _, b := range d.boards {
		if b.present {
			out = append(out, *b)
		}
	}
	return out
}

// Started returns the requests dispatched per class name since this
// dispatcher began (the web UI turns it into completed requests/s).
func (d *Dispatcher) Started() map[string]uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]uint64, len(d.started))
	for c, n := range d.started {
		out[d.cls.Name(c)] = n
	}
	return out
}

// Depths returns the queued requests by class name.
func (d *Dispatcher) Depths() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]int, len(d.depth))
	for c, n := range d.depth {
		out[d.cls.Name(c)] = n
	}
	return out
}

// Close answers every queued request with a shed error (ReasonClosed) and
// refuses new ones; tickets already given out may still call Done. The
// node calls it when the master steps down or shuts down. Idempotent.
func (d *Dispatcher) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for qi := range d.queues {
		q := &d.queues[qi]
		for q.n > 0 {
			w := q.oldest()
			d.unlink(w)
			d.answer(w, Ticket{}, d.refuse(w.class, rClosed))
		}
	}
}
