package auth

import (
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/ews-firmware/ews/internal/httpx"
)

// Defaults of the limit on failed logins and bad credentials per client.
const (
	DefaultFailBurst   = 10              // failures allowed at once
	DefaultFailRate    = rate.Limit(0.2) // then one every 5 s
	DefaultFailClients = 1024            // addresses tracked; the idlest is forgotten first
	failLogEvery       = 10 * time.Second
)

// failLimiter counts failed credential checks per client address; an
// address past its burst gets 429 until its bucket refills. Only failures
// take a token, so a client that logs in right is never slowed.
type failLimiter struct {
	rate  rate.Limit
	burst int
	max   int
	now   func() time.Time
	log   *slog.Logger

	mu sync.Mutex
	m  map[netip.Addr]*failEntry
}

type failEntry struct {
	lim     *rate.Limiter
	last    time.Time // last failure or refusal
	logged  time.Time // last log line for this address
	refused int       // 429s since the last log line
}

func newFailLimiter(r rate.Limit, burst, max int, now func() time.Time, log *slog.Logger) *failLimiter {
	if r <= 0 {
		r = DefaultFailRate
	}
	if burst <= 0 {
		burst = DefaultFailBurst
	}
	if max <= 0 {
		max = DefaultFailClients
	}
	return &failLimiter{rate: r, burst: burst, max: max, now: now, log: log, m: map[netip.Addr]*failEntry{}}
}

// blocked reports how long c must wait before its next attempt (0: not
// blocked), and logs the refusal at most once per failLogEvery per address.
func (l *failLimiter) blocked(c netip.Addr) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.m[c]
	if e == nil {
		return 0
	}
	now := l.now()
	if e.lim.TokensAt(now) >= 1 {
		return 0
	}
	r := e.lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	r.CancelAt(now)
	e.last = now
	e.refused++
	if now.Sub(e.logged) >= failLogEvery {
		l.log.Warn("auth: too many failed logins or bad credentials; refusing this client for a while",
			"client", c.String(), "refused", e.refused, "retry_after", wait.Round(time.Millisecond))
		e.logged, e.refused = now, 0
	}
	return max(wait, time.Second)
}

// fail takes a token from c's bucket.
func (l *failLimiter) fail(c netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	e := l.m[c]
	if e == nil {
		if len(l.m) >= l.max {
			l.evict(now)
		}
		e = &failEntry{lim: rate.NewLimiter(l.rate, l.burst)}
		l.m[c] = e
	}
	e.lim.AllowN(now, 1)
	e.last = now
}

// evict forgets the addresses whose buckets are full again, else the one
// idle longest.
func (l *failLimiter) evict(now time.Time) {
	var oldest netip.Addr
	var at time.Time
	for a, e := range l.m {
		if e.lim.TokensAt(now) >= float64(l.burst) {
			delete(l.m, a)
			continue
		}
		if at.IsZero() || e.last.Before(at) {
			oldest, at = a, e.last
		}
	}
	if len(l.m) >= l.max {
		delete(l.m, oldest)
	}
}

// tooMany answers 429 with Retry-After.
func tooMany(w http.ResponseWriter, wait time.Duration) {
	httpx.SetRetryAfter(w, wait)
	httpx.Error(w, http.StatusTooManyRequests, "auth: too many failed attempts from this address; retry in %v", wait.Round(time.Second))
}
