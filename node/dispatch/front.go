package dispatch

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/node/dispatch/place"
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
	// Overloaded says whether the scheduling policy's overload rule holds
	// this board (integrated: cpu over cpu_overload for overload), judged
	// by the board on the figures it reports: the master then gives it no
	// new requests, and an assigned client is sent back too, so it moves
	// to another board. Nil: never.
	Overloaded func() bool
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
	// address this board saw itself, not one the sender wrote
	// (docs/DESIGN.md, Dispatch marks).
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
	// request counts as checked. A read not checked goes in the last class. CredsDiffer reports whether board's
	// credentials really differ from this board's (the gossiped
	// fingerprints, or unknown); nil: they do. A board's 401 becomes the
	// 502 above, and OnAuthRefused is called, only when both hold; else
	// the 401 goes to the client as the board sent it (docs/NOTES.md,
	// Security: A board's 401).
	Verified    func(r *http.Request) bool
	CredsDiffer func(board string) bool
	Registerer  *promx.Registry // nil: metrics kept, not registered
	Logger      *slog.Logger
	// SharedRead reports whether reads of the device named may share one
	// answer at the entry (sharedread.go): a device no request changes, a
	// sensor, whose readings the board shares anyway. A device whose state a
	// request changes must not: a read that joined after the device was read
	// could miss an action that ended in between. Nil: no read shares.
	SharedRead func(device string) bool
	// ViaMaster turns the fast entry off (fastentry.go): a follower then
	// sends every request through the master, as builds before the fast
	// entry did. The master answers both ways either way.
	ViaMaster bool
}

// Front is the front door of every request that enters the master's queue
// (the pipeline: ServeHTTP). On any board it runs a request that carries a
// valid mark for this board, and refuses a bad mark with 403. On the master
// it classifies the request, waits for a board (sched.Dispatcher.Acquire)
// and runs it locally, proxies it with a fresh mark, or redirects the
// client there. On a non-master it asks the master where it runs over the
// placement channel and forwards it, or passes it to the master whole, so
// a client gets the same answer from any board. The Front holds each
// role's state in a type of its own (below); where a request goes is a
// Placer's answer (placer.go), and one loop forwards it (loop.go).
type Front struct {
	c       Cluster
	auth    Authenticator
	marks   *Marker
	log     *slog.Logger
	m       *metrics
	cfg     settings     // the options every path reads
	here    runHere      // what runs on this board (runLocal)
	out     forwarder    // the forward to another board (proxy.go, forward.go, authrefused.go)
	master  masterRole   // the master's queue and its redirect holds (master.go, redirect.go)
	follow  followerRole // a follower's way to the master (follower.go, fastentry.go)
	clients assignRole   // a board's own clients in redirect mode (assign.go)
	placing placeRole    // the placement channels, either end (place*.go)
	reads   readFlights  // device reads under way from this entry (sharedread.go)
}

// settings are the Front's options that every path reads, set once.
type settings struct {
	pin         func(*http.Request) string
	redirect    bool // ModeRedirect
	sticky      bool // StickyCookie
	scheme      string
	peerName    func(*http.Request) (string, bool)
	fromBoard   func(*http.Request) bool
	retry       time.Duration // RetryAfter
	maxBody     int64
	bodyTimeout time.Duration
}

// runHere is this board's own handlers and the count of what runs on them.
type runHere struct {
	local     http.Handler
	inFlight  atomic.Int64
	completed atomic.Uint64
}

// masterRole is what the master's path holds: the dispatcher it queues
// with (nil until SetDispatcher) and the slots of redirected requests.
type masterRole struct {
	disp   atomic.Pointer[sched.Dispatcher]
	opened signal // fired by SetDispatcher: wakes the requests held for a master
	holds  holds
}

// followerRole is what a follower's way to the master holds.
type followerRole struct {
	viaMaster  bool // Options.ViaMaster: no placement channel
	masterWait time.Duration
	replayMax  int64
	placer     place.Follower // its placement channel
}

// assignRole is what a board needs to run the clients the master assigned
// to it (redirect mode).
type assignRole struct {
	ttl        time.Duration // AssignTTL
	capacity   int
	serving    func() bool
	overloaded func() bool
}

// placeRole is the placement channels open here, either end, and their series.
type placeRole struct {
	chans place.Set
	pm    *placeMetrics
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
	f := &Front{c: opt.Cluster, auth: opt.Auth, marks: opt.Marker, log: opt.Logger, m: newMetrics(opt.Registerer)}
	f.here.local, f.cfg.pin, f.cfg.redirect, f.cfg.sticky = opt.Local, opt.Pin, opt.Mode == ModeRedirect, opt.StickyCookie
	f.cfg.scheme, f.cfg.peerName, f.cfg.retry, f.out.tr = opt.Scheme, opt.PeerName, opt.RetryAfter, opt.Transport
	f.follow.viaMaster, f.placing.pm = opt.ViaMaster, newPlaceMetrics(opt.Registerer) // fastentry.go
	f.reads.shareable = opt.SharedRead                                                // sharedread.go
	f.follow.placer.Dial, f.follow.placer.Log, f.follow.placer.Conns = f.dialPlace, opt.Logger, &f.placing.chans
	if f.cfg.scheme == "" {
		f.cfg.scheme = "http"
	}
	if f.cfg.retry <= 0 {
		f.cfg.retry = DefaultRetryAfter
	}
	if f.out.tr == nil {
		f.out.tr = NewTransport(TransportOptions{})
	}
	f.follow.masterWait, f.follow.replayMax, f.out.onAuthRefused = opt.MasterWait, opt.ReplayMax, opt.OnAuthRefused
	f.out.verified, f.out.credsDiffer, f.cfg.fromBoard = opt.Verified, opt.CredsDiffer, opt.FromBoard
	if f.follow.masterWait <= 0 {
		f.follow.masterWait = DefaultMasterWait
	}
	if f.follow.replayMax <= 0 {
		f.follow.replayMax = DefaultReplayMax
	}
	f.cfg.maxBody, f.cfg.bodyTimeout = opt.MaxBody, opt.BodyTimeout
	if f.cfg.maxBody <= 0 {
		f.cfg.maxBody = DefaultMaxBody
	}
	if f.cfg.bodyTimeout <= 0 {
		f.cfg.bodyTimeout = DefaultBodyTimeout
	}
	f.master.holds.init(opt.RedirectHold)
	f.clients.ttl, f.clients.capacity, f.clients.serving = opt.AssignTTL, opt.Capacity, opt.Serving
	f.clients.overloaded = opt.Overloaded
	if f.clients.ttl == 0 {
		f.clients.ttl = DefaultAssignTTL
	}
	f.out.rp = f.newProxy()
	return f, nil
}

// SetDispatcher installs the dispatcher the master queues with and returns
// the previous one. On becoming master: f.SetDispatcher(newDispatcher).
// Requests this board holds for want of a master look again at once.
func (f *Front) SetDispatcher(d *sched.Dispatcher) *sched.Dispatcher {
	prev := f.master.disp.Swap(d)
	if d != nil {
		f.master.opened.fire()
	}
	return prev
}

// Dispatcher returns the installed dispatcher, or nil.
func (f *Front) Dispatcher() *sched.Dispatcher { return f.master.disp.Load() }

// StepDown removes the dispatcher and closes it: every queued request is
// answered 503 (sched.ReasonClosed) at once, and requests that arrive before
// the Cluster stops saying IsMaster get 503 too. Requests already running
// finish and give their slots back to the closed dispatcher harmlessly.
func (f *Front) StepDown() {
	if d := f.master.disp.Swap(nil); d != nil {
		d.Close()
	}
}

// Close releases the slots held for redirected requests and the idle
// connections to other boards. It does not close the dispatcher (StepDown).
func (f *Front) Close() {
	f.master.holds.close()
	f.follow.placer.Close()
	f.placing.chans.Close()
	if t, ok := f.out.tr.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// InFlight is the number of requests this board runs now (the truth for its
// linknum in the cluster reports).
func (f *Front) InFlight() int { return int(f.here.inFlight.Load()) }

// Completed is the number of requests this board has run to the end.
func (f *Front) Completed() uint64 { return f.here.completed.Load() }

// runLocal runs r on this board, counted in InFlight.
func (f *Front) runLocal(w http.ResponseWriter, r *http.Request) {
	f.here.inFlight.Add(1)
	defer func() {
		f.here.inFlight.Add(-1)
		f.here.completed.Add(1)
	}()
	f.here.local.ServeHTTP(runTraced(w, r), r)
}
