package testbed

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/ews-firmware/ews/sched"
	"github.com/jonboulle/clockwork"
)

// Mode is how requests reach the boards.
type Mode string

const (
	// Queued is ews: the master's queue, at most a board's slots in flight
	// on it, the rest waiting in the queue (invariant 4).
	Queued Mode = "queued"
	// Director is the papers' baseline (LVS): no queue; the policy picks a
	// board for each request the moment it arrives, and a board holds what
	// exceeds its slots in its own backlog.
	Director Mode = "director"
)

// Class is one kind of request of the mix; its index is its sched class.
type Class struct {
	Name   string
	Share  float64       // of the requests
	Work   time.Duration // CPU work at speed 1 (a page), or a device read's time (IO)
	IO     bool          // a device read: waits, takes no worker
	Cached bool          // costs the board's per-user cache cost (Cold/Warm) instead of Work
}

// Master is the front's own CPU (003): what forwarding costs it.
type Master struct {
	Cores      float64       // CPU it may use
	PerRequest time.Duration // CPU per forwarded request (in and out)
	// Redirect: a client's first request is assigned a board (one
	// PerRequest at the master); later ones go straight to that board.
	Redirect bool
}

// Setup is one front: its mode and ews's scheduler config.
type Setup struct {
	Name  string
	Mode  Mode
	Sched sched.Config // Policy, Order, Sticky, Proximity, Classes (one per Mix class, same order), models
	// QueueTimeout: a queued request waiting longer is shed; 0 = 5 s.
	QueueTimeout time.Duration
	Master       *Master // nil: the front costs nothing
	// ClientRTT: 003's scheme 3. Each board measures the round trip of
	// every answer per client /24 (what TCP_INFO gives on the accepted
	// connection) and its report carries its ReportNets best networks;
	// the Dispatcher's learned proximity rules rank by them (clientrtt.go).
	ClientRTT bool
	// AutoCapacity: each board's capacity is what sched.AutoCapacity
	// makes of its completed count and in-flight requests at each report
	// ([node] capacity = "auto", 004's critical connection number from
	// measured throughput), starting at 4 as a board does; the last ones in
	// Result.Capacity. Queued: the slot limit; director: the size the
	// policies divide linknum by.
	AutoCapacity bool
	// AutoWeight (director, with AutoCapacity): each board's weight is its
	// measured capacity too, as an LVS director's wlc weight would be set
	// from 004's critical connection number: wlc then compares linknum
	// over the critical number, the share of it in use.
	AutoWeight bool
}

// Clients is the load: closed loop (N > 0: each client sends, waits for the
// answer, thinks, sends again; WebBench's shape) or open loop (Rate > 0:
// Poisson arrivals from Users users).
type Clients struct {
	N     int
	Think time.Duration // mean of an exponential think time; 0: sends again at once
	Rate  float64
	Users int // open loop: 0 = 64
}

// Run is one cell: boards, mix, load, front, how long.
type Run struct {
	Boards  []BoardSpec
	Weights []int // per board, for wlc/wrr (the oracle's true speed); nil = 1 each
	Mix     []Class
	Clients Clients
	// Distance is the round trip between a client's site and each board
	// ([site][board]); a client's site is its number modulo the sites.
	// nil: none. Sites' clients come from 10.<site>.0.0/16.
	Distance [][]time.Duration
	Duration time.Duration // measured window, after Warmup
	Warmup   time.Duration
	Report   time.Duration // boards report every; 0 = 100 ms
	Step     time.Duration // the clock's tick; 0 = 1 ms
	Timeout  time.Duration // a client gives up (shed); 0 = 10 s
	Seed     uint64
}

// request is one client request in flight.
type request struct {
	user   int
	ci     int
	class  *Class
	sent   time.Duration
	ticket sched.Ticket
	board  int
	counts bool // sent inside the measured window
}

type sim struct {
	run     Run
	setup   Setup
	rng     *rand.Rand
	clock   *clockwork.FakeClock
	d       *sched.Dispatcher
	boards  []*board
	now     time.Duration
	queue   [][]*request // queued mode: per class, or one FIFO
	oneFIFO bool
	// closed loop: when each client sends next (-1: waiting for an answer)
	next []time.Duration
	// open loop: the next arrival
	arrive time.Duration
	// master station (Master): FIFO of requests to forward, work left of the head
	mq       []*request
	mLeft    float64
	mBusy    float64
	assigned map[int]int // redirect: user -> board
	lat      [][]float64 // per class, answered, ms
	failed   []int       // per class, shed
	sent     []int
	done     []int                 // per board, completed in the window
	nets     *clientNets           // Setup.ClientRTT; nil otherwise
	auto     []*sched.AutoCapacity // Setup.AutoCapacity; nil otherwise
}

// Simulate runs one cell and returns its figures. Deterministic: the same
// Run and Setup give the same Result.
func Simulate(r Run, s Setup) (Result, error) {
	if r.Report <= 0 {
		r.Report = 100 * time.Millisecond
	}
	if r.Step <= 0 {
		r.Step = time.Millisecond
	}
	if r.Timeout <= 0 {
		r.Timeout = 10 * time.Second
	}
	if s.QueueTimeout <= 0 {
		s.QueueTimeout = 5 * time.Second
	}
	if r.Clients.Users <= 0 {
		r.Clients.Users = 64
	}
	if len(r.Mix) == 0 || len(r.Boards) == 0 || (r.Clients.N <= 0 && r.Clients.Rate <= 0) {
		return Result{}, fmt.Errorf("testbed: a run needs boards, a mix and clients")
	}
	cfg := s.Sched
	if len(cfg.Classes) == 0 {
		for _, c := range r.Mix {
			cfg.Classes = append(cfg.Classes, sched.Class{Name: c.Name, Match: []string{"*"}, Weight: 1})
		}
	}
	if len(cfg.Classes) != len(r.Mix) {
		return Result{}, fmt.Errorf("testbed: %d sched classes for %d mix classes", len(cfg.Classes), len(r.Mix))
	}
	rng := rand.New(rand.NewPCG(r.Seed, 0x7e57))
	clock := clockwork.NewFakeClockAt(time.Unix(1e9, 0))
	// A director has no slot limit, it only picks: the boards' slots are
	// their size (linknum/capacity, the load correction), not a bound.
	m := &sim{run: r, setup: s, rng: rng, clock: clock, assigned: map[int]int{},
		lat: make([][]float64, len(r.Mix)), failed: make([]int, len(r.Mix)), sent: make([]int, len(r.Mix)), done: make([]int, len(r.Boards))}
	opt := sched.Options{Clock: clock, Rand: rand.New(rand.NewPCG(r.Seed, 0xd15)), Unlimited: s.Mode == Director}
	if s.ClientRTT {
		m.nets = newClientNets(r.Boards)
		opt.ClientRTT = m.nets.rtt
	}
	d, err := sched.NewDispatcher(cfg, opt)
	if err != nil {
		return Result{}, err
	}
	defer d.Close()
	m.d = d
	spec, _ := sched.LookupPolicy(cfg.Policy)
	m.oneFIFO = cfg.Order == sched.OrderArrival || (cfg.Order == "" && spec.Queue == sched.OneFIFO)
	m.queue = make([][]*request, len(r.Mix))
	for _, b := range r.Boards {
		nb := newBoard(b)
		m.boards = append(m.boards, nb)
		if s.AutoCapacity {
			m.auto = append(m.auto, &sched.AutoCapacity{Min: nb.spec.Workers}) // as a board's cores
		}
	}
	if n := r.Clients.N; n > 0 {
		m.next = make([]time.Duration, n)
		for i := range m.next { // spread the first sends over one think time
			m.next[i] = time.Duration(rng.Float64() * float64(max(r.Clients.Think, r.Step)))
		}
	} else {
		m.arrive = m.expo(1 / r.Clients.Rate)
	}
	m.report()
	end := r.Warmup + r.Duration
	nextReport := r.Report
	for m.now = 0; m.now < end; m.now += r.Step {
		m.stepBoards()
		m.stepMaster()
		if m.now >= nextReport {
			m.report()
			nextReport += r.Report
		}
		m.sendDue()
		m.drain()
		clock.Advance(r.Step)
	}
	return m.result(), nil
}

// expo draws an exponential time of mean seconds.
func (m *sim) expo(mean float64) time.Duration {
	return time.Duration(m.rng.ExpFloat64() * mean * float64(time.Second))
}

func (m *sim) pickClass() int {
	x, acc := m.rng.Float64(), 0.0
	total := 0.0
	for _, c := range m.run.Mix {
		total += c.Share
	}
	for i, c := range m.run.Mix {
		acc += c.Share / total
		if x < acc {
			return i
		}
	}
	return len(m.run.Mix) - 1
}

func (m *sim) site(user int) int {
	if len(m.run.Distance) == 0 {
		return 0
	}
	return user % len(m.run.Distance)
}

func (m *sim) addr(user int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(m.site(user)), byte(user >> 8), byte(user)})
}

func (m *sim) rtt(user, b int) time.Duration {
	if len(m.run.Distance) == 0 {
		return 0
	}
	return m.run.Distance[m.site(user)][b]
}

// sendDue sends what the clients send by now.
func (m *sim) sendDue() {
	if m.next != nil {
		for u, t := range m.next {
			if t >= 0 && t <= m.now {
				m.next[u] = -1
				m.send(u)
			}
		}
		return
	}
	for m.arrive <= m.now {
		m.send(m.rng.IntN(m.run.Clients.Users))
		m.arrive += m.expo(1 / m.run.Clients.Rate)
	}
}

func (m *sim) send(user int) {
	ci := m.pickClass()
	r := &request{user: user, ci: ci, class: &m.run.Mix[ci], sent: m.now, board: -1, counts: m.now >= m.run.Warmup}
	if r.counts {
		m.sent[ci]++
	}
	if ms := m.setup.Master; ms != nil {
		if b, ok := m.assigned[user]; ok && ms.Redirect {
			m.toBoard(r, b) // straight to its board: the master never sees it
			return
		}
		m.mq = append(m.mq, r)
		return
	}
	m.dispatch(r)
}

func (m *sim) stepBoards() {
	for _, b := range m.boards {
		for _, j := range b.step(m.now, m.run.Step) {
			m.answer(j.req, m.now+m.run.Step)
		}
	}
}

func (m *sim) answer(r *request, at time.Duration) {
	r.ticket.Done()
	if m.nets != nil {
		m.nets.measure(r.board, m.addr(r.user), m.rtt(r.user, r.board))
	}
	lat := at - r.sent + m.rtt(r.user, r.board)
	if lat > m.run.Timeout {
		m.fail(r)
		return
	}
	if r.counts {
		m.lat[r.ci] = append(m.lat[r.ci], float64(lat)/1e6)
		m.done[r.board]++
	}
	m.again(r.user, r.sent+lat)
}

func (m *sim) fail(r *request) {
	if r.counts {
		m.failed[r.ci]++
	}
	m.again(r.user, m.now)
}

// again schedules a closed-loop client's next request after its think time.
func (m *sim) again(user int, at time.Duration) {
	if m.next == nil {
		return
	}
	m.next[user] = at + m.expo(m.run.Clients.Think.Seconds())
}
