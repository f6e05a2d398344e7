package dispatch

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/sched"
)

// Cluster is what the Front needs to know of the cluster. The state
// package's election implements it; every method is called once or twice
// per request, so each must be cheap and safe for concurrent use.
type Cluster interface {
	Self() string                             // this board's name
	IsMaster() bool                           // this board is the master now
	Master() (name, httpAddr string, ok bool) // the master as this board knows it; ok false during an election
	Epoch() uint64                            // the current master's epoch
}

// Modes of sched.mode.
const (
	ModeProxy    = "proxy"
	ModeRedirect = "redirect"
)

// Defaults of Options.
const (
	DefaultRetryAfter   = time.Second
	DefaultRedirectHold = 100 * time.Millisecond // one default heartbeat
)

// Options are the Front's dependencies and tunables.
type Options struct {
	Cluster Cluster      // required
	Local   http.Handler // required: this board's own handlers (device API, CGI, UI)
	Marker  *Marker      // required: signs and checks dispatch marks
	// Pin names the board a request must run on ("" or "any": anywhere);
	// nil: no request is pinned.
	Pin func(r *http.Request) string
	// Mode is sched.mode: ModeProxy (default) or ModeRedirect.
	Mode string
	// StickyCookie sets sched.CookieName to the chosen board on answers and
	// passes the cookie to the policy (sched.sticky = "cookie").
	StickyCookie bool
	// RedirectHold is how long the master keeps a redirected request's
	// slot before Ticket.Done (redirect mode). The master never sees the
	// request end; one heartbeat later the board's own report carries it.
	// Default DefaultRedirectHold.
	RedirectHold time.Duration
	// Transport carries forwarded requests; default NewTransport(TransportOptions{}).
	Transport http.RoundTripper
	// Scheme of board URLs; default "http". "https" with a Transport
	// that dials with the cluster's TLS config.
	Scheme string
	// PeerName, when set, names the cluster board that sent r (from its
	// verified client certificate; false: none). A request that carries a
	// dispatch mark header or a via mark is then refused 403 unless it
	// came from a board: a stolen token or mark alone cannot pose as a
	// forward. Redirect-mode marks (in the query) come from clients and
	// are not checked. Nil: no such check (plain HTTP clusters).
	PeerName func(r *http.Request) (string, bool)
	// RetryAfter is suggested with the Front's own 503s (no master, no
	// dispatcher, loop); default DefaultRetryAfter.
	RetryAfter time.Duration
	// MasterWait bounds how long a non-master holds a request that it
	// could not hand to the master (unreachable, or none known) while it
	// waits for the next one: tmax plus a heartbeat. Longer rides out
	// slower elections; shorter answers 503 sooner. Default DefaultMasterWait.
	MasterWait time.Duration
	// ReplayMax is the largest body kept in memory so a held request can
	// be sent again; larger bodies stream once. Default DefaultReplayMax.
	ReplayMax int64
	// OnAuthRefused is called with the board's name when a board answers
	// 401 to a request this master dispatched to it (the master accepted
	// the credentials: the board's differ). The client gets 502. Optional;
	// must be quick.
	OnAuthRefused func(board string)
	Registerer    *promx.Registry // nil: metrics kept, not registered
	Logger        *slog.Logger
}

// Front is the front door of every request that enters the master's queue.
// On any board it runs a request that carries a valid mark for this board,
// and refuses a bad mark with 403. On the master it classifies the request,
// waits for a board (sched.Dispatcher.Acquire) and runs it locally, proxies
// it with a fresh mark, or redirects the client there. On a non-master it
// passes the request to the master unchanged, so a client gets the same
// answer from any board.
type Front struct {
	c        Cluster
	local    http.Handler
	pin      func(*http.Request) string
	marks    *Marker
	redirect bool
	sticky   bool
	scheme   string
	peerName func(*http.Request) (string, bool)
	retry    time.Duration
	tr       http.RoundTripper
	rp       *httputil.ReverseProxy
	log      *slog.Logger
	m        *metrics
	holds    holds

	masterWait time.Duration
	replayMax  int64

	onAuthRefused func(string)
	authLog       authLog

	disp      atomic.Pointer[sched.Dispatcher]
	inFlight  atomic.Int64
	completed atomic.Uint64
}

// NewFront builds a Front; it has no dispatcher until SetDispatcher.
func NewFront(opt Options) (*Front, error) {
	if opt.Cluster == nil || opt.Local == nil || opt.Marker == nil {
		return nil, errors.New("dispatch: Front needs Cluster, Local and Marker")
	}
	switch opt.Mode {
	case "", ModeProxy, ModeRedirect:
	default:
		return nil, fmt.Errorf("dispatch: unknown mode %q (want proxy or redirect)", opt.Mode)
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	f := &Front{
		c: opt.Cluster, local: opt.Local, pin: opt.Pin, marks: opt.Marker,
		redirect: opt.Mode == ModeRedirect, sticky: opt.StickyCookie,
		scheme: opt.Scheme, peerName: opt.PeerName, retry: opt.RetryAfter, tr: opt.Transport, log: opt.Logger,
		m: newMetrics(opt.Registerer),
	}
	if f.scheme == "" {
		f.scheme = "http"
	}
	if f.retry <= 0 {
		f.retry = DefaultRetryAfter
	}
	if f.tr == nil {
		f.tr = NewTransport(TransportOptions{})
	}
	f.masterWait, f.replayMax, f.onAuthRefused = opt.MasterWait, opt.ReplayMax, opt.OnAuthRefused
	if f.masterWait <= 0 {
		f.masterWait = DefaultMasterWait
	}
	if f.replayMax <= 0 {
		f.replayMax = DefaultReplayMax
	}
	f.holds.init(opt.RedirectHold)
	f.rp = f.newProxy()
	return f, nil
}

// SetDispatcher installs the dispatcher the master queues with and returns
// the previous one. On becoming master: f.SetDispatcher(newDispatcher).
func (f *Front) SetDispatcher(d *sched.Dispatcher) *sched.Dispatcher { return f.disp.Swap(d) }

// Dispatcher returns the installed dispatcher, or nil.
func (f *Front) Dispatcher() *sched.Dispatcher { return f.disp.Load() }

// StepDown removes the dispatcher and closes it: every queued request is
// answered 503 (sched.ReasonClosed) at once, and requests that arrive before
// the Cluster stops saying IsMaster get 503 too. Requests already running
// finish and give their slots back to the closed dispatcher harmlessly.
func (f *Front) StepDown() {
	if d := f.disp.Swap(nil); d != nil {
		d.Close()
	}
}

// Close releases the slots held for redirected requests and the idle
// connections to other boards. It does not close the dispatcher (StepDown).
func (f *Front) Close() {
	f.holds.close()
	if t, ok := f.tr.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// InFlight is the number of requests this board runs now (the truth for its
// linknum in the cluster reports).
func (f *Front) InFlight() int { return int(f.inFlight.Load()) }

// Completed is the number of requests this board has run to the end.
func (f *Front) Completed() uint64 { return f.completed.Load() }

// ServeHTTP routes one request; see Front.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	self := f.c.Self()
	if !f.fromPeer(w, r) {
		return
	}
	mk, err := f.marks.Verify(r, self, f.redirect)
	switch {
	case err == nil:
		f.runMarked(w, r, mk)
		return
	case err != ErrNoMark:
		f.refuse(w, err)
		return
	}
	if f.c.IsMaster() {
		f.dispatch(w, r, self, start)
		return
	}
	f.toMaster(w, r, self)
}

// runMarked runs a request the master sent here.
func (f *Front) runMarked(w http.ResponseWriter, r *http.Request, mk Mark) {
	if mk.Epoch < f.c.Epoch() {
		// a master that has stepped down: not forged, so no 403; the
		// client retries and reaches the new master
		f.m.refused.WithLabelValues(RefuseStale).Inc()
		unavailable(w, f.retry, "dispatch: request sent by the master of epoch %d, now epoch %d", mk.Epoch, f.c.Epoch())
		return
	}
	if mk.Kind == KindRedirect { // redirect mode: the mark came in the query
		r2 := *r
		u := *r.URL
		u.RawQuery = stripQueryMark(u.RawQuery)
		r2.URL = &u
		r2.RequestURI = u.RequestURI()
		r = &r2
	}
	f.runLocal(w, httpx.WithClient(r, mk.Client))
}

// Marked reports whether r carries a mark for this board (header, or query
// in redirect mode) that the Front will verify before it runs the request:
// the credential check can wait until then, so a replayed or forged mark
// is refused before any credentials are tried.
func (f *Front) Marked(r *http.Request) bool {
	if r.Header.Get(HeaderMark) != "" {
		return true
	}
	_, ok := queryMark(r.URL.RawQuery)
	return ok && f.redirect
}

// ViaClient returns r with the client address a valid via mark vouches for
// (httpx.Client), so the master does not count it as the follower's.
func (f *Front) ViaClient(r *http.Request) *http.Request {
	if r.Header.Get(HeaderVia) == "" {
		return r
	}
	return httpx.WithClient(r, f.clientAddr(r, f.c.Self()))
}

// refuse answers a bad mark with 403.
func (f *Front) refuse(w http.ResponseWriter, err error) {
	reason := RefuseMalformed
	var me *MarkError
	if errors.As(err, &me) {
		reason = me.Reason
	}
	f.m.refused.WithLabelValues(reason).Inc()
	if reason == RefuseExpired {
		// signed by the master (the signature is checked first) but delayed
		// past its TTL on the way (a slow link, a paused board): not forged,
		// so no 403; it did not run and may be sent again
		unavailable(w, f.retry, "dispatch: dispatch mark expired on the way; the request did not run, send it again")
		return
	}
	w.Header().Set(HeaderRefused, reason)
	writeJSON(w, http.StatusForbidden, errorBody{Error: "dispatch: dispatch mark refused: " + reason, Reason: reason})
}

// runLocal runs r on this board, counted in InFlight.
func (f *Front) runLocal(w http.ResponseWriter, r *http.Request) {
	f.inFlight.Add(1)
	defer func() {
		f.inFlight.Add(-1)
		f.completed.Add(1)
	}()
	f.local.ServeHTTP(w, r)
}

// dispatch is the master's path: queue, choose, run or forward.
func (f *Front) dispatch(w http.ResponseWriter, r *http.Request, self string, start time.Time) {
	d := f.disp.Load()
	if d == nil {
		unavailable(w, f.retry, "dispatch: this board is becoming master; its queue is not open yet")
		return
	}
	req := &sched.Request{
		Class:  d.Classifier().Classify(r.Method, r.URL.Path),
		Path:   r.URL.Path,
		Client: f.clientAddr(r, self),
	}
	if f.pin != nil {
		req.Board = f.pin(r)
	}
	if f.sticky {
		if c, err := r.Cookie(sched.CookieName); err == nil {
			req.Sticky = c.Value
		}
	}
	t, err := d.Acquire(r.Context(), req)
	if err != nil {
		rt := try{leg: legQueue, canceled: r.Context().Err() != nil, master: f.c.IsMaster()}
		if tryAgain(rt, err) == sendAgain && f.handOver(w, r, self) {
			return
		}
		f.acquireFailed(w, r, err)
		return
	}
	if f.sticky && req.Sticky != t.Board {
		http.SetCookie(w, &http.Cookie{Name: sched.CookieName, Value: t.Board, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	switch {
	case t.Board == self:
		defer t.Done()
		f.runLocal(w, r)
	case f.redirect:
		f.redirectTo(w, r, t, req.Client, start)
	default:
		f.proxy(w, r, d, req, t, self, start)
	}
}

// handOver passes a request that was still queued when this board stepped
// down to the new master (tryAgain), instead of answering it 503: its body
// has not been read, so it can still go. False when there is no new master
// to hand it to (the caller then answers 503).
func (f *Front) handOver(w http.ResponseWriter, r *http.Request, self string) bool {
	name, addr, ok := f.c.Master()
	if !ok || name == "" || name == self || addr == "" {
		return false
	}
	// One more hop, on purpose: the loop guard is for followers that
	// bounce requests, not for a master that hands its queue over.
	r.Header.Del(HeaderVia)
	f.log.Debug("dispatch: queued request handed to the new master", "master", name, "path", r.URL.Path)
	f.toMaster(w, r, self)
	return true
}

// acquireFailed answers a request the dispatcher did not place.
func (f *Front) acquireFailed(w http.ResponseWriter, r *http.Request, err error) {
	var shed *sched.ErrShed
	switch {
	case errors.As(err, &shed):
		retry := shed.RetryAfter
		if retry <= 0 {
			retry = f.retry
		}
		httpx.SetRetryAfter(w, retry)
		writeJSON(w, http.StatusServiceUnavailable, errorBody{
			Error: fmt.Sprintf("dispatch: %s request shed: %s", shed.Class, shed.Reason),
			Class: shed.Class, Reason: shed.Reason,
		})
	case r.Context().Err() != nil:
		unavailable(w, f.retry, "dispatch: client left while queued")
	default:
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: err.Error()})
	}
}

// clientAddr is the client's address for the policies: the one a
// non-master vouched for in a valid via mark, else the peer's.
func (f *Front) clientAddr(r *http.Request, self string) netip.Addr {
	if tok := r.Header.Get(HeaderVia); tok != "" {
		var b Binding
		BindRequest(&b, r, viaBody(r), nil, netip.Addr{})
		if mk, err := f.marks.VerifyToken(tok, KindVia, self, &b); err == nil && mk.Client.IsValid() {
			return mk.Client
		}
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// viaBody is how a via mark binds the body: by its length, which the
// master knows without reading a body it streams on.
func viaBody(r *http.Request) BodyMode {
	if bodyMode(r) == BodyNone {
		return BodyNone
	}
	return BodyLength
}

// toMaster is a non-master's path: pass the request to the master.
//
// A request that arrives while no master is known (an election) is held
// until one is, at most MasterWait and the request's own deadline; so is
// one that tryAgain says to send to the next master after its master
// failed. Only then, with still no master, it gets 503 with Retry-After.
func (f *Front) toMaster(w http.ResponseWriter, r *http.Request, self string) {
	if r.Header.Get(HeaderVia) != "" {
		unavailable(w, f.retry, "dispatch: forwarding loop: the request already passed a board that is not master, and %s is not master either", self)
		return
	}
	body, replay, err := replayable(r, f.replayMax)
	if err != nil {
		f.bodyError(w, err)
		return
	}
	rt := try{leg: legMaster, replay: replay, keyed: r.Header.Get("Idempotency-Key") != ""}
	deadline := time.Now().Add(f.masterWait)
	if d, ok := r.Context().Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	client := netip.Addr{}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		client = ap.Addr().Unmap()
	}
	var failed masterAt // the master that failed this request
	held := false
	for ; ; rt.n++ {
		to, ok := f.nextMaster(self, failed)
		if !ok {
			if f.c.IsMaster() { // this board took over while the request waited
				rewind(r, body)
				f.dispatch(w, r, self, time.Now())
				return
			}
			if !held {
				held = true
				f.m.holding.Inc()
				defer f.m.holding.Dec()
			}
			if !holdUntil(r.Context(), deadline) {
				f.noMaster(w, r, failed.name)
				return
			}
			continue
		}
		rewind(r, body)
		var b Binding
		BindRequest(&b, r, viaBody(r), nil, client)
		tok := f.marks.SignString(KindVia, to.epoch, to.name, &b)
		err := f.forward(w, r, &fwd{target: to.name, addr: to.addr, header: HeaderVia, token: tok})
		if err == nil {
			f.m.forwarded.WithLabelValues(to.name, OutcomeOK).Inc()
			if held {
				f.m.held.WithLabelValues(OutcomeOK).Inc()
			}
			return
		}
		rt.canceled = r.Context().Err() != nil
		v := tryAgain(rt, err)
		if v != answerCanceled {
			f.m.errors.WithLabelValues(to.name).Inc()
		}
		if v != sendAgain {
			if v != answerCanceled {
				f.log.Warn("dispatch: master did not answer", "master", to.name, "addr", to.addr, "err", err)
			}
			f.answerFailure(w, v, to.name, err)
			return
		}
		f.m.forwarded.WithLabelValues(to.name, OutcomeRetried).Inc()
		f.log.Info("dispatch: master unreachable; holding the request for the next master",
			"master", to.name, "addr", to.addr, "err", err, "path", r.URL.Path, "keyed", rt.keyed)
		failed = to
	}
}

// masterAt is a master as a follower reaches it.
type masterAt struct {
	name, addr string
	epoch      uint64
}

// nextMaster is the master to send a request to: the one known now, if it
// is another board with an address and not the one that failed this
// request (the same board at a new epoch is a new master).
func (f *Front) nextMaster(self string, failed masterAt) (masterAt, bool) {
	name, addr, ok := f.c.Master()
	epoch := f.c.Epoch()
	if !ok || name == "" || addr == "" || name == self || (name == failed.name && epoch == failed.epoch) {
		return masterAt{}, false
	}
	return masterAt{name: name, addr: addr, epoch: epoch}, true
}

// noMaster answers a request that found no master to take it in time.
func (f *Front) noMaster(w http.ResponseWriter, r *http.Request, failed string) {
	f.m.held.WithLabelValues(OutcomeError).Inc()
	switch {
	case r.Context().Err() != nil:
		unavailable(w, f.retry, "dispatch: client left while waiting for a master")
	case failed != "":
		unavailable(w, f.retry, "dispatch: master %s unreachable and no new master within %v", failed, f.masterWait)
	default:
		unavailable(w, f.retry, "dispatch: no master known (election in progress)")
	}
}
