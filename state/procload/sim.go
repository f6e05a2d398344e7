package procload

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ews-firmware/ews/state"
)

// Sim is a simulated board's load: what its [sim] settings and its
// own requests in flight imply, not the host machine's /proc (every
// simulated board on one machine would report the same). The background
// cpu share bg is base_cpu, busy_cpu during the busy windows, plus seeded
// jitter; each request in flight uses request_cpu of the rest (a device
// read mostly waits, it does not spin a core):
//
//	cpu = bg + (1-bg)·min(1, request_cpu·linknum)
//	mem = (base_mem_mb + request_mb·linknum) / mem_mb
//	net_pps = 10 packets per completed request; net = that at 800 B a packet over 100 Mbit/s
//
// Slowdown is 1/(1-bg): a request gets the cpu the background leaves.
type Sim struct {
	cfg      SimProfile
	start    time.Time
	now      func() time.Time
	inFlight func() int
	done     func() uint64

	mu       sync.Mutex
	rng      *rand.Rand
	lastAt   time.Time
	lastDone uint64
}

// SimProfile is how one simulated board differs from the others ([sim],
// mapped by node/bootconf); a zero field takes the default in Load.
type SimProfile struct {
	CPUMHz, MemMB                 float64 // capacity it reports
	BaseCPU, ReqCPU, BusyCPU      float64 // cpu shares: background, one request in flight, while busy
	BaseMemMB, RequestMB          float64 // memory in use idle, and per request in flight
	DiskUsed, Jitter              float64 // share of disk in use; ± background cpu noise
	BusyAfter, BusyFor, BusyEvery time.Duration
	Seed                          uint64 // of the noise
}

// NewSim is a simulated board's load of cfg, its requests in flight and
// completed counted by inFlight and done.
func NewSim(cfg SimProfile, inFlight func() int, done func() uint64) *Sim {
	seed := cfg.Seed
	if seed == 0 {
		seed = 1
	}
	return &Sim{cfg: cfg, start: time.Now(), now: time.Now,
		inFlight: inFlight, done: done, rng: rand.New(rand.NewPCG(seed, 16))}
}

func or(v, def float64) float64 {
	if v > 0 {
		return v
	}
	return def
}

// background is the cpu share taken by other work at now, without jitter.
func (s *Sim) background(now time.Time) float64 {
	c := &s.cfg
	if t := now.Sub(s.start) - c.BusyAfter; c.BusyFor > 0 && t >= 0 {
		if c.BusyEvery > 0 {
			t %= c.BusyEvery
		}
		if t < c.BusyFor {
			return or(c.BusyCPU, 0.9)
		}
	}
	return or(c.BaseCPU, 0.05)
}

// Slowdown is the factor the board's latencies are stretched by at now.
func (s *Sim) Slowdown(now time.Time) float64 {
	if s == nil {
		return 1
	}
	return 1 / max(1-s.background(now), 0.1)
}

// Load samples the simulated load.
func (s *Sim) Load() state.Load {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	c := &s.cfg
	bg := s.background(now)
	if c.Jitter > 0 {
		bg += (s.rng.Float64()*2 - 1) * c.Jitter
	}
	bg = min(max(bg, 0), 1)
	n := max(s.inFlight(), 0)
	l := state.Load{
		CPU:      bg + (1-bg)*min(1, or(c.ReqCPU, 0.1)*float64(n)),
		Mem:      min((or(c.BaseMemMB, 200)+or(c.RequestMB, 8)*float64(n))/or(c.MemMB, 1024), 1),
		DiskUsed: or(c.DiskUsed, 0.3),
		CPUMHz:   or(c.CPUMHz, 4000),
		MemMB:    or(c.MemMB, 1024),
	}
	done := s.done()
	if dt := now.Sub(s.lastAt).Seconds(); !s.lastAt.IsZero() && dt > 0 && done >= s.lastDone {
		l.NetPPS = 10 * float64(done-s.lastDone) / dt
		l.Net = min(l.NetPPS*800*8/100e6, 1)
	}
	s.lastAt, s.lastDone = now, done
	return l
}
