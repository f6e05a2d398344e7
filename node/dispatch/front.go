package dispatch

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/sched"
)

// Cluster is what the Front needs to know of the cluster. Every method is
// a query, called once or twice per request, so each must be cheap, safe
// for concurrent use and free of side effects.
type Cluster interface {
	Self() string // this board's name
	// IsMaster: this board is the master now and may queue. Mastership
	// changes elsewhere (the node opens the queue with SetDispatcher when
	// it takes over); until then a request waits as for any new master.
	IsMaster() bool
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
	// Auth checks credentials, once per request on this board, after the
	// request was accepted and before it is classified (see ServeHTTP).
	// Nil: no credentials asked.
	Auth Authenticator
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
	// AssignTTL is how long a redirect-mode assignment lets a client talk
	// to its board directly (assign.go); default DefaultAssignTTL; negative:
	// no assignments, every request goes through the master and is
	// redirected.
	AssignTTL time.Duration
	// Capacity is this board's slots: an assigned client beyond them is
	// sent back to the master. 0: no limit here.
	Capacity int
	// Serving says whether this board reports itself running (health,
	// not starting or stopping); an assigned client is sent back to the
	// master when not. Nil: always.
	Serving func() bool
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
	// FromBoard reports whether r came over a connection from a cluster
	// board (its certificate, or one of the boards' addresses). A request
	// with a dispatch mark from anywhere else loses its X-Forwarded-For
	// before the mark is checked: the mark's client must then be the
	// address this board saw itself, not one the sender wrote (issue 23).
	// Nil: X-Forwarded-For is believed from anyone.
	FromBoard func(r *http.Request) bool
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
	// MaxBody bounds the body read before the queue (the node's
	// http.max_body); default DefaultMaxBody. BodyTimeout bounds the time
	// it may take; default DefaultBodyTimeout.
	MaxBody     int64
	BodyTimeout time.Duration
	// OnAuthRefused is called with the board's name when a board answers
	// 401 to a request this master dispatched to it (the master accepted
	// the credentials: the board's differ). The client gets 502. Optional;
	// must be quick.
	OnAuthRefused func(board string)
	// Verified reports whether this board checked and accepted r's
	// credentials (the Authenticator's verdict in its context); nil: every
	// request counts as checked. CredsDiffer reports whether board's
	// credentials really differ from this board's (the gossiped
	// fingerprints, or unknown); nil: they do. A board's 401 becomes the
	// 502 above, and OnAuthRefused is called, only when both hold; else
	// the 401 goes to the client as the board sent it (issue 23, M2).
	Verified    func(r *http.Request) bool
	CredsDiffer func(board string) bool
	Registerer  *promx.Registry // nil: metrics kept, not registered
	Logger      *slog.Logger
	// ViaMaster turns the fast entry off (fastentry.go): a follower then
	// sends every request through the master, as before issue 27. The
	// master answers both ways either way.
	ViaMaster bool
}

// Front is the front door of every request that enters the master's queue
// (the pipeline: ServeHTTP). On any board it runs a request that carries a
// valid mark for this board, and refuses a bad mark with 403. On the master
// it classifies the request, waits for a board (sched.Dispatcher.Acquire)
// and runs it locally, proxies it with a fresh mark, or redirects the
// client there. On a non-master it passes the request to the master
// unchanged, so a client gets the same answer from any board.
type Front struct {
	c         Cluster
	local     http.Handler
	auth      Authenticator
	pin       func(*http.Request) string
	marks     *Marker
	redirect  bool
	sticky    bool
	scheme    string
	peerName  func(*http.Request) (string, bool)
	fromBoard func(*http.Request) bool
	retry     time.Duration
	tr        http.RoundTripper
	rp        *httputil.ReverseProxy
	log       *slog.Logger
	m         *metrics
	holds     holds

	assignTTL time.Duration
	capacity  int
	serving   func() bool

	masterWait  time.Duration
	replayMax   int64
	maxBody     int64
	bodyTimeout time.Duration

	onAuthRefused func(string)
	verified      func(*http.Request) bool
	credsDiffer   func(string) bool
	authLog       authLog

	viaMaster bool          // Options.ViaMaster
	placer    placer        // a follower's placement channel (fastentry.go)
	chans     chanSet       // placement channels open here, either end
	pm        *placeMetrics // the fast entry's series

	disp      atomic.Pointer[sched.Dispatcher]
	opened    signal // fired by SetDispatcher: wakes the requests held for a master
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
		c: opt.Cluster, local: opt.Local, auth: opt.Auth, pin: opt.Pin, marks: opt.Marker,
		redirect: opt.Mode == ModeRedirect, sticky: opt.StickyCookie,
		scheme: opt.Scheme, peerName: opt.PeerName, retry: opt.RetryAfter, tr: opt.Transport, log: opt.Logger,
		m: newMetrics(opt.Registerer),
	}
	f.viaMaster, f.pm = opt.ViaMaster, newPlaceMetrics(opt.Registerer) // fastentry.go
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
	f.verified, f.credsDiffer, f.fromBoard = opt.Verified, opt.CredsDiffer, opt.FromBoard
	if f.masterWait <= 0 {
		f.masterWait = DefaultMasterWait
	}
	if f.replayMax <= 0 {
		f.replayMax = DefaultReplayMax
	}
	f.maxBody, f.bodyTimeout = opt.MaxBody, opt.BodyTimeout
	if f.maxBody <= 0 {
		f.maxBody = DefaultMaxBody
	}
	if f.bodyTimeout <= 0 {
		f.bodyTimeout = DefaultBodyTimeout
	}
	f.holds.init(opt.RedirectHold)
	f.assignTTL, f.capacity, f.serving = opt.AssignTTL, opt.Capacity, opt.Serving
	if f.assignTTL == 0 {
		f.assignTTL = DefaultAssignTTL
	}
	f.rp = f.newProxy()
	return f, nil
}

// SetDispatcher installs the dispatcher the master queues with and returns
// the previous one. On becoming master: f.SetDispatcher(newDispatcher).
// Requests this board holds for want of a master look again at once.
func (f *Front) SetDispatcher(d *sched.Dispatcher) *sched.Dispatcher {
	prev := f.disp.Swap(d)
	if d != nil {
		f.opened.fire()
	}
	return prev
}

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
	f.placer.close()
	f.chans.close()
	if t, ok := f.tr.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// InFlight is the number of requests this board runs now (the truth for its
// linknum in the cluster reports).
func (f *Front) InFlight() int { return int(f.inFlight.Load()) }

// Completed is the number of requests this board has run to the end.
func (f *Front) Completed() uint64 { return f.completed.Load() }

// runLocal runs r on this board, counted in InFlight.
func (f *Front) runLocal(w http.ResponseWriter, r *http.Request) {
	f.inFlight.Add(1)
	defer func() {
		f.inFlight.Add(-1)
		f.completed.Add(1)
	}()
	f.local.ServeHTTP(w, r)
}
