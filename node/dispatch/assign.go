package dispatch

import (
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// Redirect once, then direct (papers 003 and 002): in redirect mode the
// master answers a client's request with a 307 to the chosen board and an
// assignment, a mark of kind KindAssign signed for that board and that
// client, valid for AssignTTL. The client then talks to the board: the
// board checks the assignment and runs the request itself, counted in its
// own in-flight (which its report carries to the master: invariant 3),
// until the assignment expires, the board stops reporting itself running
// (health, shutdown), or the board is at its capacity; then it answers 307 to the master, which
// queues the request and assigns the client again.
//
// Where the assignment travels:
//   - the master's 307: header X-Ews-Assign (API clients that read it), and
//     in the Location's query as _ews_assign (bound in the redirect mark);
//   - the board, on a request that brings it in the query, sets the cookie
//     ews_assign (a browser keeps it for the board's host, not the
//     master's) and repeats the header X-Ews-Assign on its answer (a client
//     that followed the 307 by itself finds it there);
//   - the client sends it back as the header X-Ews-Assign or the cookie.
//
// What it costs: a request sent straight to its board does not enter the
// master's queue, so the priority order across clients (invariant 4's
// "highest class first") holds only among the requests the master queues.
const (
	HeaderAssign = "X-Ews-Assign"
	CookieAssign = "ews_assign"
	QueryAssign  = "_ews_assign"
	// HeaderBack names why a board sent the client back to the master.
	HeaderBack = "X-Ews-Back"
)

// KindAssign marks an assignment: the master sends a client to a board for
// a while (redirect mode).
const KindAssign Kind = 'A'

// DefaultAssignTTL is how long an assignment lasts by default.
const DefaultAssignTTL = 30 * time.Second

// Reasons a board sends an assigned client back to the master (HeaderBack).
const (
	BackExpired  = "expired"   // the assignment ran out
	BackForged   = "forged"    // not an assignment of this cluster, or tampered with
	BackOther    = "other"     // an assignment for another board (it moved, or left)
	BackClient   = "client"    // signed for another client address
	BackFull     = "full"      // this board is at its capacity
	BackNotReady = "not-ready" // this board does not report itself running (health, start, stop)
	// BackOverloaded: the policy's overload rule holds this board; its
	// clients move away, not only new ones are withheld (003, docs/NOTES.md,
	// Dispatch: redirect once, then direct).
	BackOverloaded = "overloaded"
)

// SignAssignment returns an assignment of client to board target, valid
// for ttl, in the master's epoch.
func (m *Marker) SignAssignment(epoch uint64, target string, client netip.Addr, ttl time.Duration) string {
	var buf [maxEncoded]byte
	b := Binding{Client: client}
	return string(m.signUntil(buf[:0], KindAssign, epoch, target, &b, m.now().Add(ttl)))
}

// VerifyAssignment checks an assignment for board self presented by client
// (ttl: the longest an assignment is signed for). An assignment is used
// many times: it is not remembered as used. It does not allocate.
func (m *Marker) VerifyAssignment(tok, self string, client netip.Addr, ttl time.Duration) (Mark, error) {
	s := m.scratch()
	defer m.pool.Put(s)
	mk, bound, err := m.openTTL(s, tok, KindAssign, self, ttl)
	if err != nil {
		return mk, err
	}
	var want [pathLen]byte
	s.bindingDigest(want[:], &Binding{})
	if want != bound || mk.Body != BodyNone {
		return mk, refusal(RefusePath)
	}
	if mk.Client.IsValid() && mk.Client != client.Unmap() {
		return mk, refusal(RefuseClient)
	}
	return mk, nil
}

// assignment is the token a request brings (header, query, cookie) and
// whether it came in the query.
func assignment(r *http.Request) (tok string, inQuery bool) {
	if tok = r.Header.Get(HeaderAssign); tok != "" {
		return tok, false
	}
	if strings.Contains(r.URL.RawQuery, QueryAssign) {
		if v, ok := queryParam(r.URL.RawQuery, QueryAssign); ok {
			return v, true
		}
	}
	if c, err := r.Cookie(CookieAssign); err == nil {
		return c.Value, false
	}
	return "", false
}

// assigned is the path test: redirect mode, not the master, and the
// request brings an assignment (valid or not: runAssigned decides).
func (f *Front) assigned(r *http.Request) bool {
	if !f.cfg.redirect || f.clients.ttl <= 0 || f.c.IsMaster() {
		return false
	}
	tok, _ := assignment(r)
	return tok != ""
}

// runAssigned is the path of a client that the master assigned to a board
// and that came straight to a board: run it here when the assignment is
// for this board and this client and still valid, the board is running
// and not held as overloaded and below its capacity, and the request is
// not pinned to another board;
// a pinned request goes to the master as any other; else the client is
// sent back to the master (307).
func (f *Front) runAssigned(w http.ResponseWriter, in *inbound) {
	r, self, client := in.r, in.self, in.client
	tok, inQuery := assignment(r)
	if inQuery {
		r = withoutQueryParam(r, QueryAssign)
		in.r, in.bind.Query = r, stripQueryMark(r.URL.RawQuery) // a mark binds the query it goes on with
	}
	_, err := f.marks.VerifyAssignment(tok, self, client, f.clients.ttl)
	if err != nil {
		f.backToMaster(w, in, backReason(err))
		return
	}
	if f.cfg.pin != nil {
		if p := f.cfg.pin(r); p != "" && p != "any" && p != self {
			f.toMaster(w, in)
			return
		}
	}
	if f.clients.serving != nil && !f.clients.serving() {
		f.backToMaster(w, in, BackNotReady)
		return
	}
	if f.clients.overloaded != nil && f.clients.overloaded() {
		f.backToMaster(w, in, BackOverloaded)
		return
	}
	if !f.takeSlot() {
		f.backToMaster(w, in, BackFull)
		return
	}
	defer func() {
		f.here.inFlight.Add(-1)
		f.here.completed.Add(1)
	}()
	if inQuery {
		f.keepAssignment(w, tok)
	}
	f.m.assigned.Inc()
	f.here.local.ServeHTTP(w, r)
}

// takeSlot counts one more request in flight here unless that would pass
// the board's capacity: the check and the count are one step, so
// concurrent assigned clients never overfill the board between them.
func (f *Front) takeSlot() bool {
	for {
		n := f.here.inFlight.Load()
		if f.clients.capacity > 0 && n >= int64(f.clients.capacity) {
			return false
		}
		if f.here.inFlight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// keepAssignment hands a client the assignment it brought in the query:
// as the cookie (for this board's host) and the header.
func (f *Front) keepAssignment(w http.ResponseWriter, tok string) {
	http.SetCookie(w, &http.Cookie{Name: CookieAssign, Value: tok, Path: "/", MaxAge: int(f.clients.ttl / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: f.cfg.scheme == "https"})
	w.Header().Set(HeaderAssign, tok)
}

// backReason names a refused assignment.
func backReason(err error) string {
	if me, ok := err.(*MarkError); ok {
		switch me.Reason {
		case RefuseExpired:
			return BackExpired
		case RefuseTarget:
			return BackOther
		case RefuseClient:
			return BackClient
		}
	}
	return BackForged
}

// backToMaster sends the client back to the master: 307 to the same path
// on the master, the assignment cookie dropped. While no master is known
// the request goes the follower's way (held across the election).
func (f *Front) backToMaster(w http.ResponseWriter, in *inbound, reason string) {
	r := in.r
	f.m.back.WithLabelValues(reason).Inc()
	name, addr, ok := f.c.Master()
	if !ok || name == "" || name == in.self || addr == "" {
		r.Header.Del(HeaderAssign)
		f.toMaster(w, in)
		return
	}
	loc := f.cfg.scheme + "://" + addr + r.URL.EscapedPath()
	if q := stripQueryMark(r.URL.RawQuery); q != "" {
		loc += "?" + q
	}
	h := w.Header()
	http.SetCookie(w, &http.Cookie{Name: CookieAssign, Value: "", Path: "/", MaxAge: -1})
	h.Set("Location", loc)
	h.Set("Cache-Control", "no-store")
	h.Set(HeaderBack, reason)
	writeJSON(w, http.StatusTemporaryRedirect, errorBody{Error: "dispatch: back to the master: assignment " + reason, Reason: reason, Board: name})
}

// assign signs the client's assignment to board and appends it to the
// redirect's binding query (so the redirect mark covers it).
func (f *Front) assign(w http.ResponseWriter, board string, client netip.Addr, bind *Binding) string {
	if f.clients.ttl <= 0 {
		return ""
	}
	tok := f.marks.SignAssignment(f.c.Epoch(), board, client, f.clients.ttl)
	bind.Query = stripParam(bind.Query, QueryAssign) // an old one the client brought
	if bind.Query != "" {
		bind.Query += "&"
	}
	bind.Query += QueryAssign + "=" + tok
	w.Header().Set(HeaderAssign, tok)
	return tok
}

// withoutQueryParam is r with every key parameter removed from its query.
func withoutQueryParam(r *http.Request, key string) *http.Request {
	r2 := *r
	u := *r.URL
	u.RawQuery = stripParam(u.RawQuery, key)
	r2.URL = &u
	r2.RequestURI = u.RequestURI()
	return &r2
}
