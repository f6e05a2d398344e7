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

// failLimiter counts failed credential checks per client address and user
// name tried (basic; "" for tokens and cookies); a key past its burst gets
// 429 until its bucket refills. Only failures take a token, so a client
// that logs in right is never slowed. Basic users' failures also fill a
// bucket of the whole address (addressWide times the burst and rate), so
// guessing across user names is slowed too, while one user's guessed
// password behind a NAT does not lock the others out (docs/NOTES.md,
// Security: brute force).
type failLimiter struct {
	rate  rate.Limit
	burst int
	max   int
	now   func() time.Time
	log   *slog.Logger

	mu sync.Mutex
	m  map[failKey]*failEntry
}

// failKey is what a bucket counts: an address and the user name tried.
type failKey struct {
	addr netip.Addr
	user string
}

// anyUser keys an address's bucket of every basic user's failures;
// addressWide scales its burst and rate.
const (
	anyUser     = "\x00"
	addressWide = 4
)

// keys are the buckets a failure of user from c fills.
func keys(c netip.Addr, user string) []failKey {
	if user == "" {
		return []failKey{{c, ""}}
	}
	return []failKey{{c, user}, {c, anyUser}}
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
	return &failLimiter{rate: r, burst: burst, max: max, now: now, log: log, m: map[failKey]*failEntry{}}
}

// blocked reports how long c must wait before its next attempt as user
// (0: not blocked), and logs the refusal at most once per failLogEvery per
// bucket.
func (l *failLimiter) blocked(c netip.Addr, user string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, k := range keys(c, user) {
		wait = max(wait, l.blockedLocked(k))
	}
	return wait
}

func (l *failLimiter) blockedLocked(k failKey) time.Duration {
	c := k.addr
	e := l.m[k]
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

// fail takes a token from the buckets of c and user.
func (l *failLimiter) fail(c netip.Addr, user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys(c, user) {
		e := l.entryLocked(k, now)
		e.lim.AllowN(now, 1)
		e.last = now
	}
}

// take counts an attempt of user from c as a failure before it is checked,
// so attempts checked at the same time cannot all pass the limit (blocked
// is asked before and fail counted after a check that takes a KDF run);
// wait > 0: blocked, nothing taken. refund gives the tokens back: the
// credentials were right.
func (l *failLimiter) take(c netip.Addr, user string) (refund func(), wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys(c, user) {
		wait = max(wait, l.blockedLocked(k))
	}
	if wait > 0 {
		return nil, wait
	}
	now := l.now()
	var rs []*rate.Reservation
	for _, k := range keys(c, user) {
		e := l.entryLocked(k, now)
		rs = append(rs, e.lim.ReserveN(now, 1))
		e.last = now
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		now := l.now()
		for _, r := range rs {
			r.CancelAt(now)
		}
	}, 0
}

// entryLocked is k's bucket, made (and the idlest forgotten) when new.
func (l *failLimiter) entryLocked(k failKey, now time.Time) *failEntry {
	e := l.m[k]
	if e == nil {
		if len(l.m) >= l.max {
			l.evict(now)
		}
		lim := rate.NewLimiter(l.rate, l.burst)
		if k.user == anyUser {
			lim = rate.NewLimiter(l.rate*addressWide, l.burst*addressWide)
		}
		e = &failEntry{lim: lim}
		l.m[k] = e
	}
	return e
}

// evict forgets the addresses whose buckets are full again, else the one
// idle longest.
func (l *failLimiter) evict(now time.Time) {
	var oldest failKey
	var at time.Time
	for a, e := range l.m {
		if e.lim.TokensAt(now) >= float64(e.lim.Burst()) {
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
