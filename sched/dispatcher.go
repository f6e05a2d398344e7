package sched

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/jonboulle/clockwork"
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
	Registerer *promx.Registry // nil: metrics are kept but not registered
	Logger     *slog.Logger
	Clock      clockwork.Clock // sojourn times and queue timeouts; nil: the real clock
	Rand       *rand.Rand      // seeds random policies; nil: the runtime's generator
	Interval   time.Duration   // CoDel interval; default DefaultInterval
	RetryAfter time.Duration   // default DefaultRetryAfter
	// RT gives a board's response time as the master's probes measure it
	// (the integrated policy's rt term); nil: unknown for every board.
	RT func(board string) time.Duration
	// Proxy says every request a board runs was placed by this
	// Dispatcher (sched.mode proxy: forwarded, placed for a follower, or
	// on a lease): a board's report then counts no request of its own
	// beyond ours, and tickets that finished after the board took its
	// report but before it was heard are taken out of it (update.go).
	// false (redirect mode): a report is taken as it is.
	Proxy bool
	// Unlimited says a board's capacity is its size, not a limit: it is
	// sent requests beyond it and holds them itself (the testbed's
	// director, the papers' LVS, which picks a board per request on
	// arrival). Capacity still scales the load correction (Config.Stale)
	// and linknum/capacity. false (every node): invariant 4 holds.
	Unlimited bool
	// Distance is the round-trip time between two boards as gossip
	// measures it (from "" = this board), for learned proximity rules;
	// nil: none measured.
	Distance func(from, to string) (time.Duration, bool)
	// ClientRTT is a board's measured round trip to a client's network
	// (003's scheme 3, proximity_client.go): learned proximity rules rank
	// by it when set; nil: by Distance from the door.
	ClientRTT func(board string, client netip.Addr) (time.Duration, bool)
}

// Dispatcher is the master's queue and dispatcher: bounded FIFO queues per
// class, strict priority (with an optional reserve share for lower classes),
// fail-fast shedding, and the policy that picks a board for each request.
// Safe for concurrent use; one mutex guards everything, and a queued request
// costs no goroutine beyond its caller's.
//
// The concerns live in their own files: acquire.go (a request's way in and
// its wait), queue.go (the priority queues), admit.go (fail-fast
// admission and CoDel), round.go (the dispatch round), update.go (the
// table's reports) and ticket.go (completion).
type Dispatcher struct {
	mu       sync.Mutex
	cls      *Classifier
	policy   Policy
	one      bool // QueueMode OneFIFO: one FIFO for every class (lc)
	limit    int  // per queue
	total    int  // queued requests
	maxTotal int
	timeout  time.Duration
	target   time.Duration
	interval time.Duration
	retry    time.Duration
	reserve  float64
	credit   float64
	room     headroom
	clock    clockwork.Clock
	log      *slog.Logger
	rt       func(string) time.Duration
	proxy    bool // Options.Proxy
	fresh    bool // Config.Stale "placed": refresh corrects the load the policies read
	// Options.Unlimited: capacity is a board's size, not a limit
	unlimited bool

	queues  []queue
	depth   []int    // queued per class
	started []uint64 // dispatched per class since this dispatcher began
	notes   []note   // Request.Started calls due once the lock is released
	admit   admission
	seq     uint64
	boards  []*Board
	byName  map[string]*Board
	updGen  uint64
	scratch []*Board // eligible boards of the current round
	kept    []*Board // scratch less a request's Exclude
	kept2   []*Board // pool less the boards that keep their last slot (headroom_pinned.go)
	free    []*flight
	devIdx  map[string]int // device name -> index in devs; nil: no devices
	devs    []devState
	locks   []devLock
	closed  bool
	shed    [][]*ErrShed // [class][reason]
	m       *metrics
	waiters sync.Pool
	// trace, when set (tests), sees every dispatch under the lock; seq is
	// the request's arrival number, 0 when it never queued.
	trace func(req *Request, seq uint64, b *Board)
}

// NewDispatcher builds the queue and policy from cfg; a zero Queue or
// QueueTimeout takes DefaultConfig's value.
func NewDispatcher(cfg Config, opt Options) (*Dispatcher, error) {
	if len(cfg.Classes) == 0 {
		cfg.Classes = ClassesFor(cfg.Policy)
	}
	cls, err := NewClassifier(cfg.Classes)
	if err != nil {
		return nil, err
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	spec, ok := LookupPolicy(cfg.Policy)
	if !ok {
		return nil, fmt.Errorf("sched: unknown policy %q", cfg.Policy)
	}
	p, err := NewPolicy(cfg, opt.Rand, opt.Logger)
	if err != nil {
		return nil, err
	}
	if opt.Distance != nil {
		withDistance(p, opt.Distance)
	}
	if opt.ClientRTT != nil {
		withClientRTT(p, opt.ClientRTT)
	}
	room, err := ParseHeadroom(cfg.Headroom)
	if err != nil {
		return nil, err
	}
	def := DefaultConfig()
	d := &Dispatcher{
		cls: cls, policy: p, one: oneFIFO(spec, cfg.Order),
		limit: cfg.Queue, timeout: cfg.QueueTimeout, target: cfg.QueueTarget,
		interval: opt.Interval, retry: opt.RetryAfter, reserve: cfg.Reserve,
		clock: opt.Clock, log: opt.Logger, rt: opt.RT, proxy: opt.Proxy, byName: map[string]*Board{},
		fresh: corrects(cfg.Stale) && (spec.Load || len(cfg.Proximity) > 0), unlimited: opt.Unlimited,
		room: headroom{slots: room},
	}
	if d.limit <= 0 {
		d.limit = def.Queue
	}
	if d.timeout <= 0 {
		d.timeout = def.QueueTimeout
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
	if d.clock == nil {
		d.clock = clockwork.NewRealClock()
	}
	n := cls.Len()
	d.maxTotal = d.limit * n
	if d.one {
		d.limit = d.maxTotal
		d.queues = make([]queue, 1)
	} else {
		d.queues = make([]queue, n)
	}
	if err := d.setDevices(cfg.Devices); err != nil {
		return nil, err
	}
	for qi := range d.queues {
		d.queues[qi].locks = make([]fifo, len(d.locks))
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
	d.waiters.New = func() any { return newWaiter(d.clock) }
	return d, nil
}

// now is the injected clock's time.
func (d *Dispatcher) now() time.Time { return d.clock.Now() }

// Classifier returns the classifier built from the config.
func (d *Dispatcher) Classifier() *Classifier { return d.cls }

// Policy returns the policy in use.
func (d *Dispatcher) Policy() Policy { return d.policy }

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
