package dispatch

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/reqtrace"
	"github.com/ews-firmware/ews/sched"
)

// Authenticator checks the credentials of a request on this board. The
// Front calls it exactly once per request, after accepting the request and
// before classifying it.
type Authenticator interface {
	// Authenticate returns the request to go on with, or false when it has
	// answered w itself (401, 403, 429). It decides which requests need
	// credentials; the returned request carries the verdict in its context,
	// so the handlers behind the Front do not check again on this board.
	Authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool)
}

// ServeHTTP is the front door, top to bottom:
//
//  1. accept: a forwarded request must come from a cluster board; a
//     dispatch mark is verified (and used up), or a via mark verified, once;
//  2. authenticate once on this board (Options.Auth);
//  3. read the body once, bounded in size and time (body.go), and bind it
//     for the marks: only a request that is all here may take a queue place
//     or a slot, and every later step uses these bytes;
//  4. classify, and take the request's path:
//     - marked for this board: the master sent it here, run it here (marked.go);
//     - redirect mode, a client with an assignment: run it here or send
//     the client back to the master (assign.go);
//     - else the one forwarding loop (loop.go) with a Placer that says
//     where it goes: this board's dispatcher on the master (master.go); on
//     a follower a leased slot here, else the placement channel
//     (fastentry.go), else the whole request to the master (follower.go).
//
// Each step answers the client itself when it stops the request.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isPlaceChannel(r) { // a follower's placement channel (placechan.go)
		f.servePlace(w, r)
		return
	}
	start := time.Now()
	r = traced(r) // a request that asks for its trace (traced.go)
	var in inbound
	if !f.accept(w, r, &in) {
		return
	}
	var ok bool
	if in.r, ok = f.authenticate(w, in.r); !ok {
		return
	}
	if !in.marked {
		if in.r, in.body, ok = f.readBody(w, in.r); !ok {
			return
		}
		BindRequest(&in.bind, in.r, bodyMode(in.r), in.body, in.client)
		in.dev, in.read = sched.DeviceOf(in.r.Method, in.r.URL.Path)
		if f.cfg.pin != nil {
			in.pin = f.cfg.pin(in.r)
		}
		if in.trace = reqtrace.From(in.r.Context()); in.trace != nil {
			in.trace.Mark(reqtrace.Enter, start)
		}
	}
	p := f.classify(&in)
	switch p {
	case pathMarked:
		f.runLocal(w, in.r)
	case pathMaster:
		f.dispatch(w, &in, start)
	case pathAssigned:
		f.runAssigned(w, &in)
	default:
		f.enter(w, &in) // the fast entry, or through the master (fastentry.go)
	}
}

// inbound is an accepted request and what accepting it established.
type inbound struct {
	r      *http.Request // with the client a mark vouches for (httpx.Client) and no query mark
	self   string        // this board's name
	marked bool          // it carries this board's valid dispatch (or redirect) mark
	client netip.Addr    // the client: the one a valid mark vouches for, else the peer
	body   []byte        // the body, read once (readBody); nil: none
	bind   Binding       // what a dispatch or redirect mark for it binds (not for a marked request)
	// Of a request that is not marked, computed once on entry for every
	// later step: the board it is pinned to (Options.Pin; "" or "any":
	// none), the device it operates (sched.DeviceOf) and whether that is
	// a read, and its trace when it asks for one (traced.go).
	pin   string
	dev   string
	read  bool
	trace *reqtrace.Trace
}

// replay reports whether the request can be sent again after a failed
// attempt: its body (if any) is small enough to be bound by its digest,
// and at most max. A larger one is sent once (invariant 9).
func (in *inbound) replay(max int64) bool {
	return int64(len(in.body)) <= min(max, MaxDigestBody)
}

// via is the binding of a via mark for it: the body by its length, which
// the master knows without reading a body it streams on.
func (in *inbound) via() *Binding {
	b := in.bind
	if b.Body != BodyNone {
		b.Body, b.Length = BodyLength, int64(len(in.body))
	}
	return &b
}

// accept lets in what may enter: a forwarded request only from a board
// (fromPeer), a marked one only with a valid mark for this board, verified
// and used up here and nowhere else on this board (refused 403, or 503 when
// it is stale), and it verifies a via mark's client once. It fills in;
// false: answered.
func (f *Front) accept(w http.ResponseWriter, r *http.Request, in *inbound) bool {
	if !f.fromPeer(w, r) {
		return false
	}
	self := f.c.Self()
	if f.cfg.fromBoard != nil && r.Header.Get(HeaderMark) != "" && !f.cfg.fromBoard(r) {
		r.Header.Del("X-Forwarded-For") // only boards vouch for a client (docs/DESIGN.md, Dispatch marks)
	}
	tok, kind, err := markOf(r, f.cfg.redirect)
	switch {
	case err == ErrNoMark:
		client, vouched := f.viaClient(r, self)
		if vouched {
			r = withFromBoard(httpx.WithClient(r, client)) // failed credentials count against the client, not the follower
		}
		in.r, in.self, in.client = r, self, client
		return true
	case err != nil:
		f.refuse(w, err)
		return false
	}
	r, body, ok := f.readBody(w, r) // the mark may bind the body's digest
	if !ok {
		return false
	}
	mk, err := f.marks.verify(r, tok, kind, body, self)
	if err != nil {
		f.refuse(w, err)
		return false
	}
	r, ok = f.acceptMarked(w, r, mk)
	if ok && mk.Kind == KindDispatch {
		r = withFromBoard(r)
	}
	in.r, in.self, in.marked, in.client, in.body = r, self, true, mk.Client, body
	return ok
}

// viaClient is the client's address for the policies and the credential
// check: the one a follower vouched for in a valid via mark (vouched), else
// the peer's. An invalid via mark is not refused: it only vouches for
// nothing.
func (f *Front) viaClient(r *http.Request, self string) (c netip.Addr, vouched bool) {
	if tok := r.Header.Get(HeaderVia); tok != "" {
		var b Binding
		mode := bodyMode(r)
		if mode != BodyNone {
			mode = BodyLength // a via mark binds the body by its length (inbound.via)
		}
		BindRequest(&b, r, mode, nil, netip.Addr{})
		if mk, err := f.marks.VerifyToken(tok, KindVia, self, &b); err == nil && mk.Client.IsValid() {
			return mk.Client, true
		}
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap(), false
	}
	return netip.Addr{}, false
}

// authenticate is the one credential check of r on this board.
func (f *Front) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if f.auth == nil {
		return r, true
	}
	return f.auth.Authenticate(w, r)
}

// path is the way a request takes through this board.
type path uint8

const (
	pathMarked   path = iota // the master sent it here: run it here
	pathMaster               // this board is master: queue it, then forward it or run it here
	pathFollower             // hand it to the master
	pathAssigned             // redirect mode: a client the master assigned here came directly (assign.go)
)

// classify chooses the request's path.
func (f *Front) classify(in *inbound) path {
	switch {
	case in.marked:
		return pathMarked
	case f.assigned(in.r):
		return pathAssigned
	case f.c.IsMaster():
		return pathMaster
	}
	return pathFollower
}
