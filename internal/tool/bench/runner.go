package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/reqtrace"
)

// Config is one run of the generator.
type Config struct {
	URL         string            // base URL; each class's path is joined to it
	Classes     []Class           // the mix (see ParseMix); weights are normalised again here
	Rate        float64           // mean arrivals per second (> 0)
	Duration    time.Duration     // sending window (> 0)
	Max         int64             // request cap over the whole run; 0: none
	Seed        uint64            // seeds the arrival stream and the class draw
	Header      http.Header       // added to every request (and the probe); "Host" sets the Host
	Bodies      map[string][]byte // request body by class name; shared, never modified
	Timeout     time.Duration     // per request, from its actual send to the end of its body
	Concurrency int               // cap on requests in flight; arrivals above it count as overflow
	Grace       time.Duration     // after ctx is cancelled, how long in-flight requests may finish
	Transport   http.RoundTripper
	Progress    io.Writer // if set, a progress bar is drawn there (a terminal) during the run
	// Clients > 0 deals the arrivals round robin to that many simulated
	// clients, each following 307s and keeping redirect mode's assignment
	// (clients.go); against a loopback URL each has its own source address.
	// 0: one client that does not follow redirects.
	Clients int
	// Closed > 0 runs a closed loop instead of the arrival stream (closed.go):
	// that many clients, each sending, waiting for the answer and thinking
	// an exponential time of mean Think; Rate is then unused.
	Closed int
	Think  time.Duration
	// Trace asks every request's trace of the cluster (reqtrace.Header)
	// and reports, per class, the time between its hand-offs
	// (ClassReport.Trace). Off by default.
	Trace bool
}

// Defaults for Config fields left zero.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultConcurrency = 4096 // a single board at 2x load with a 5 s queue timeout holds ~2,500
	DefaultGrace       = time.Second
	progressEvery      = 200 * time.Millisecond
	// lateSlack is how long after the window the sender may still send arrivals that were due
	// in it (it is often a few ms behind); later ones are counted as unsent.
	lateSlack = 100 * time.Millisecond
)

// ErrProbe wraps the error of the probe request sent before the run (dead URL and the like).
var ErrProbe = errors.New("bench: the server did not answer the probe")

// NewTransport returns an http.Transport tuned for a load generator against one host: enough
// idle keep-alive connections for the whole in-flight cap, no compression, no proxy.
func NewTransport(concurrency int) *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          concurrency,
		MaxIdleConnsPerHost:   concurrency,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: time.Second,
		WriteBufferSize:       4 << 10,
		ReadBufferSize:        4 << 10,
	}
}

// runner is the state of one run. The sender goroutine (Run's caller) owns the arrival stream
// and the workers; each request in flight runs on its own worker goroutine.
type runner struct {
	cfg      Config
	rt       http.RoundTripper
	reqs     []*http.Request // one template per class, shared read-only by the request goroutines
	bodies   [][]byte        // by class; nil: no body
	stats    []*classStats
	lag      *Histogram   // intended -> actual send time
	inflight atomic.Int64 // requests in flight: incremented by the sender, decremented by send
	pool     *workers
	reqCtx   context.Context // cancelled only when the grace after an interrupt runs out
	abort    context.CancelFunc
	start    time.Time
	log      *slog.Logger
	cl       []*client // Config.Clients
	clients  clientStats
}

// Run probes cfg.URL once, then sends the arrival stream until cfg.Duration, cfg.Max or ctx ends,
// waits for the requests in flight (at most cfg.Grace after ctx ends) and returns the report.
// Its error is only about setting up (bad config or ErrProbe); a cut-short run returns a
// partial report with Interrupted set.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	defer r.abort()
	if err := r.probe(ctx); err != nil {
		return nil, err
	}
	if cfg.Closed > 0 {
		return r.runClosed(ctx), nil
	}
	return r.run(ctx), nil
}

func newRunner(cfg Config) (*runner, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	for name := range cfg.Bodies {
		if !slices.ContainsFunc(cfg.Classes, func(c Class) bool { return c.Name == name }) {
			return nil, fmt.Errorf("bench: body for class %q, which is not in the mix", name)
		}
	}
	switch {
	case len(cfg.Classes) == 0:
		return nil, fmt.Errorf("bench: no classes in the mix")
	case cfg.Closed < 0 || cfg.Think < 0:
		return nil, fmt.Errorf("bench: closed %d think %v: want >= 0", cfg.Closed, cfg.Think)
	case cfg.Closed == 0 && (!(cfg.Rate > 0) || cfg.Rate > 1e7):
		return nil, fmt.Errorf("bench: rate %v: want a number in (0, 1e7] per second", cfg.Rate)
	case cfg.Duration <= 0:
		return nil, fmt.Errorf("bench: duration %v: want > 0", cfg.Duration)
	case cfg.Max < 0:
		return nil, fmt.Errorf("bench: max %d: want >= 0", cfg.Max)
	}
	base, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, rt: cfg.Transport, lag: NewHistogram(), log: slog.Default()}
	if r.rt == nil {
		r.rt = NewTransport(cfg.Concurrency)
	}
	if cfg.Clients < 0 {
		return nil, fmt.Errorf("bench: clients %d: want >= 0", cfg.Clients)
	}
	if cfg.Clients > 0 {
		var tlsc *tls.Config // --cacert's trust, for every client
		if t, ok := cfg.Transport.(*http.Transport); ok {
			tlsc = t.TLSClientConfig
		}
		if r.cl, err = newClients(cfg.Clients, base, cfg.Concurrency, tlsc); err != nil {
			return nil, err
		}
	}
	r.reqCtx, r.abort = context.WithCancel(context.Background())
	for _, c := range cfg.Classes {
		req, err := r.newRequest(c.Method, joinURL(base, c.Path))
		if err != nil {
			r.abort()
			return nil, fmt.Errorf("bench: class %q: %w", c.Name, err)
		}
		b := cfg.Bodies[c.Name]
		if len(b) == 0 {
			b = nil // an empty body is no body (Content-Length: 0, not chunked)
		} else {
			setBody(req, b)
		}
		r.reqs = append(r.reqs, req)
		r.bodies = append(r.bodies, b)
		r.stats = append(r.stats, newClassStats())
	}
	return r, nil
}

// ParseURL checks a --url: absolute http or https with a host.
func ParseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("bench: --url %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("bench: --url %q: want http://HOST[:PORT][/PREFIX] or https://...", s)
	}
	return u, nil
}

// joinURL appends path (which may carry a query) to the base URL's path.
func joinURL(base *url.URL, path string) string {
	u := *base
	u.RawQuery, u.Fragment = "", ""
	p, q, _ := strings.Cut(path, "?")
	u.Path = strings.TrimRight(base.Path, "/") + p
	u.RawPath = ""
	u.RawQuery = q
	return u.String()
}

func (r *runner) newRequest(method, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(r.reqCtx, method, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "ews-bench")
	if r.cfg.Trace {
		req.Header.Set(reqtrace.Header, "1")
	}
	for k, vs := range r.cfg.Header {
		if http.CanonicalHeaderKey(k) == "Host" && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	return req, nil
}

// probe sends one GET to the base URL: any HTTP answer means the server is up.
func (r *runner) probe(ctx context.Context) error {
	req, err := r.newRequest(http.MethodGet, r.cfg.URL)
	if err != nil {
		return fmt.Errorf("bench: probe: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	resp, err := r.rt.RoundTrip(req.WithContext(pctx))
	if err != nil {
		return fmt.Errorf("%w: GET %s: %w", ErrProbe, r.cfg.URL, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return nil
}

// send runs one request that was due at intended and records its outcome.
func (r *runner) send(intended time.Time, cls, cli int) {
	st := r.stats[cls]
	defer r.inflight.Add(-1)
	defer func() {
		if p := recover(); p != nil {
			st.errs.Add(1)
			st.sample(fmt.Sprint("panic: ", p))
			r.log.Error("bench: request panicked", "class", r.cfg.Classes[cls].Name, "panic", p)
		}
	}()
	ctx, cancel := context.WithTimeout(r.reqCtx, r.cfg.Timeout)
	defer cancel()
	req := r.reqs[cls].WithContext(ctx)
	if b := r.bodies[cls]; b != nil {
		req.Body = &body{b: b}
	}
	var resp *http.Response
	var err error
	sent := time.Now()
	if r.cl != nil {
		resp, err = r.roundTrip(ctx, r.cl[cli%len(r.cl)], req, r.bodies[cls])
	} else {
		resp, err = r.rt.RoundTrip(req)
	}
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	d := time.Since(intended)
	switch {
	case err != nil:
		st.errs.Add(1)
		if r.reqCtx.Err() != nil {
			st.sample("aborted: still in flight when the grace after the interrupt ran out")
		} else {
			st.sample(err.Error())
		}
	case resp.StatusCode >= 200 && resp.StatusCode < 400:
		st.ok.Add(1)
		st.lat.Record(d)
		if r.cfg.Trace {
			st.trace.record(resp.Header, sent, time.Now(), d)
		}
	case resp.StatusCode == http.StatusServiceUnavailable:
		st.shed.Add(1)
		st.shedLat.Record(d)
	default:
		st.errs.Add(1)
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			st.denied.Add(1)
		}
		st.sample("status " + strconv.Itoa(resp.StatusCode))
	}
}

// run is the sender: it walks the arrival stream in real time. It returns after every request
// goroutine has ended.
func (r *runner) run(ctx context.Context) *Report {
	cfg := r.cfg
	arr := NewArrivals(cfg.Seed, cfg.Rate, cfg.Classes)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	r.pool = newWorkers(cfg.Concurrency, func(j job) { r.send(j.intended, j.cls, j.client) })
	r.start = time.Now()
	lateEnd := r.start.Add(cfg.Duration + lateSlack)
	stopProgress := r.startProgress()

	var (
		n           int64 // arrivals taken from the stream
		interrupted bool
		windowDone  bool // the stream reached the end of the window
	)
	limit := int64(cfg.Concurrency)
send:
	for {
		if cfg.Max > 0 && n >= cfg.Max {
			break
		}
		a := arr.Next()
		if a.At >= cfg.Duration {
			windowDone = true
			break
		}
		intended := r.start.Add(a.At)
		now := time.Now()
		if wait := intended.Sub(now); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				interrupted = true
				break send
			case <-timer.C:
				now = time.Now() // the lag includes our own wake-up delay
			}
		} else {
			if ctx.Err() != nil {
				interrupted = true
				break
			}
			if now.After(lateEnd) { // too late for the rest of the window: count it, send none
				n += r.countUnsent(arr, a, n)
				windowDone = true
				break
			}
		}
		n++
		st := r.stats[a.Class]
		st.due.Add(1)
		r.lag.Record(now.Sub(intended))
		if r.inflight.Load() >= limit {
			st.overflow.Add(1)
			continue
		}
		r.inflight.Add(1)
		st.sent.Add(1)
		r.pool.dispatch(job{intended: intended, cls: a.Class, client: int(n)})
	}
	elapsed := time.Since(r.start)
	if windowDone || elapsed > cfg.Duration {
		elapsed = cfg.Duration
	}
	r.drain(interrupted)
	stopProgress()
	return r.report(elapsed, interrupted)
}

// countUnsent counts a and the rest of the window's arrivals (within Max) as unsent.
func (r *runner) countUnsent(arr *Arrivals, a Arrival, n int64) int64 {
	var k int64
	for a.At < r.cfg.Duration && (r.cfg.Max == 0 || n+k < r.cfg.Max) {
		st := r.stats[a.Class]
		st.due.Add(1)
		st.unsent.Add(1)
		k++
		a = arr.Next()
	}
	return k
}

// drain waits for the requests in flight: all of them (each is bounded by Timeout) after a full
// run, at most Grace after an interrupt, then aborts the rest.
func (r *runner) drain(interrupted bool) {
	r.pool.close()
	done := make(chan struct{})
	go func() {
		r.pool.wait()
		close(done)
	}()
	if !interrupted {
		<-done
		return
	}
	grace := time.NewTimer(r.cfg.Grace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		r.abort()
		<-done
	}
}
