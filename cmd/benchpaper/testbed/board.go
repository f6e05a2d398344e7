package testbed

import (
	"time"

	"github.com/ews-firmware/ews/state/row"
)

// BoardSpec is one simulated embedded web server. Its requests share the
// board the way a small server's do: at most Slots run at once (more wait in
// the backlog, a listen queue), the CPU-bound ones share Workers workers
// (processor sharing: with n running, each gets min(1, Workers/n) of a
// worker), so a request's time grows with what the board runs at once; a
// busy window (another process taking the CPU) slows everything on the
// board by BusySlow, device reads included; a page for a user the board has
// not cached costs Cold, a cached one Warm.
type BoardSpec struct {
	Name    string
	Speed   float64 // CPU work per second relative to the reference board; 0 = 1
	Slots   int     // requests run at once (capacity); 0 = 8
	Workers int     // workers the CPU-bound requests share; 0 = 2
	Backlog int     // requests waiting beyond the slots; more are refused (shed); 0 = 256

	BusyAt, BusyFor, BusyEvery time.Duration // busy from BusyAt for BusyFor, again every BusyEvery (0: once)
	BusySlow                   float64       // everything takes this many times longer while busy; 0 = 10

	CacheUsers int           // per-user cache: the users it keeps warm (LRU); 0 = no cache
	Cold, Warm time.Duration // a page's CPU work for a user not cached / cached

	// MemMB is the memory it reports (qsc's P2); its memory share is 200 MB
	// plus 8 MB per request in flight over it. 0 = 1024. Memory costs no
	// time here: it skews the figures qsc weighs, not the service.
	MemMB float64
}

func (s *BoardSpec) fill() {
	if s.Speed <= 0 {
		s.Speed = 1
	}
	if s.Slots <= 0 {
		s.Slots = 8
	}
	if s.Workers <= 0 {
		s.Workers = 2
	}
	if s.Backlog <= 0 {
		s.Backlog = 256
	}
	if s.BusySlow <= 0 {
		s.BusySlow = 10
	}
	if s.MemMB <= 0 {
		s.MemMB = 1024
	}
}

// busy reports whether the board is in a busy window at t.
func (s *BoardSpec) busy(t time.Duration) bool {
	if s.BusyFor <= 0 || t < s.BusyAt {
		return false
	}
	d := t - s.BusyAt
	if s.BusyEvery > 0 {
		d %= s.BusyEvery
	}
	return d < s.BusyFor
}

// job is one request on a board.
type job struct {
	req  *request
	left float64 // work left, in seconds at rate 1
	io   bool    // a device read: waits, takes no worker
	warm bool    // a cached user's page
}

// board is a BoardSpec running: its jobs, backlog, cache and counters.
type board struct {
	spec    BoardSpec
	run     []*job
	backlog []*job
	cache   map[int]uint64 // user -> last use (LRU)
	useSeq  uint64
	done    uint64
	hits    uint64 // cached pages served
	pages   uint64 // pages served with a cache
	// since the last report: cpu share × seconds, and seconds stepped
	cpuSum, span float64
}

func newBoard(s BoardSpec) *board {
	s.fill()
	return &board{spec: s, cache: map[int]uint64{}}
}

// inFlight is what the board reports as its linknum: running and waiting.
func (b *board) inFlight() int { return len(b.run) + len(b.backlog) }

// admit takes a request: it runs at once when a slot is free, else waits;
// false when the backlog is full too (refused).
func (b *board) admit(r *request) bool {
	j := &job{req: r, io: r.class.IO}
	switch {
	case len(b.run) < b.spec.Slots:
		b.start(j)
	case len(b.backlog) < b.spec.Backlog:
		b.backlog = append(b.backlog, j)
	default:
		return false
	}
	return true
}

// start puts a job on a slot and sets its work: a device read its fixed
// time, a page its CPU work (the cache's cold or warm cost when the board
// has a cache and the class is cached).
func (b *board) start(j *job) {
	c := j.req.class
	j.left = c.Work.Seconds()
	if !c.IO && b.spec.CacheUsers > 0 && c.Cached {
		b.useSeq++
		_, j.warm = b.cache[j.req.user]
		if j.req.counts {
			b.pages++
			if j.warm {
				b.hits++
			}
		}
		if j.warm {
			j.left = b.spec.Warm.Seconds()
		} else {
			j.left = b.spec.Cold.Seconds()
		}
		b.cache[j.req.user] = b.useSeq
		if len(b.cache) > b.spec.CacheUsers {
			b.evict()
		}
	}
	b.run = append(b.run, j)
}

// evict drops the least recently used user.
func (b *board) evict() {
	lru, oldest := -1, ^uint64(0)
	for u, seq := range b.cache {
		if seq < oldest {
			lru, oldest = u, seq
		}
	}
	delete(b.cache, lru)
}

// rates are the work per second a running CPU-bound and I/O job gets at t.
func (b *board) rates(t time.Duration) (cpu, io float64) {
	slow := 1.0
	if b.spec.busy(t) {
		slow = b.spec.BusySlow
	}
	n := 0
	for _, j := range b.run {
		if !j.io {
			n++
		}
	}
	share := 1.0
	if n > b.spec.Workers {
		share = float64(b.spec.Workers) / float64(n)
	}
	return b.spec.Speed * share / slow, 1 / slow
}

// step advances the running jobs by dt from t and returns those that
// finished, in the order they started; freed slots take the backlog.
func (b *board) step(t, dt time.Duration) []*job {
	b.cpuSum += b.cpu(t) * dt.Seconds()
	b.span += dt.Seconds()
	if len(b.run) == 0 {
		return nil
	}
	cpu, io := b.rates(t)
	var out []*job
	kept := b.run[:0]
	for _, j := range b.run {
		r := cpu
		if j.io {
			r = io
		}
		j.left -= r * dt.Seconds()
		if j.left <= 1e-12 {
			out = append(out, j)
			continue
		}
		kept = append(kept, j)
	}
	b.run = kept
	b.done += uint64(len(out))
	for len(b.run) < b.spec.Slots && len(b.backlog) > 0 {
		j := b.backlog[0]
		b.backlog = b.backlog[1:]
		b.start(j)
	}
	return out
}

// cpu is the board's cpu use at t: the background (0.9 of it while busy,
// the other process), the rest in the share of its workers in use.
func (b *board) cpu(t time.Duration) float64 {
	bg := 0.05
	if b.spec.busy(t) {
		bg = 1 - 1/b.spec.BusySlow
	}
	use := min(1, float64(b.runnable())/float64(b.spec.Workers))
	return bg + (1-bg)*use
}

// runnable is how many of its running requests want the cpu now (the
// I/O-bound ones wait): its run queue.
func (b *board) runnable() int {
	n := 0
	for _, j := range b.run {
		if !j.io {
			n++
		}
	}
	return n
}

// load is what the board reports at t and starts the next interval: its
// cpu use averaged over the interval since its last report (as a board
// reads /proc/stat's counters; the use at t when no time has passed),
// memory per request, its size for qsc, and its run queue at t. An instant's cpu said 100 % for
// any board running two pages at that moment, alike for a board busy
// for a moment and for one whose cpu another process holds.
func (b *board) load(t time.Duration) row.Load {
	cpu := b.cpu(t)
	if b.span > 0 {
		cpu = b.cpuSum / b.span
	}
	b.cpuSum, b.span = 0, 0
	return row.Load{
		CPU:    cpu,
		Mem:    min(1, (200+8*float64(b.inFlight()))/b.spec.MemMB),
		CPUMHz: 1000 * b.spec.Speed * float64(b.spec.Workers),
		MemMB:  b.spec.MemMB,
		// RunQueue: the requests that want the cpu at t (a board's
		// procs_running, its reader left out); no policy reads it yet
		RunQueue: float64(b.runnable()),
	}
}
