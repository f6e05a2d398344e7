package dispatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/reqtrace"
	"github.com/ews-firmware/ews/sched"
)

// The master's path: admit the request to the queue, acquire a board for
// it (sched.Dispatcher.Acquire): the master's own dispatcher is the
// Placer (ownPlacer) of the forwarding loop (loop.go), which then runs the
// request here, redirects the client (redirect.go), or signs a dispatch
// mark and forwards it, sending it again where tryAgain allows.

// dispatch is the master's path: the forwarding loop with this board's
// own dispatcher as the Placer.
func (f *Front) dispatch(w http.ResponseWriter, in *inbound, start time.Time) {
	f.route(w, &route{in: *in, start: start}, newOwnPlacer(f))
}

// ownPlacer places a request with this board's dispatcher: a slot on the
// board the policy chooses, held until Release. One per request: the
// dispatcher it queued with, the request as admitted and the slot.
type ownPlacer struct {
	f      *Front
	d      *sched.Dispatcher // the dispatcher that placed it
	req    sched.Request     // the admitted request
	ticket sched.Ticket      // the slot, until Release
}

func newOwnPlacer(f *Front) *ownPlacer { return &ownPlacer{f: f} }

// Place admits rt's request and acquires a slot (first), or one on any
// board but the one that failed (a retry). A request still queued when
// this board stepped down goes to the new master (tryAgain, legQueue).
func (p *ownPlacer) Place(ctx context.Context, rt *route) (Placer, error) {
	f := p.f
	if rt.to.board != "" { // a retry: the scheduler chooses its board, any but the one that failed
		again := p.req
		again.Exclude = []string{rt.to.board}
		t, err := p.d.Acquire(ctx, &again)
		if err != nil {
			return nil, err
		}
		p.take(rt, t, rt.to.epoch) // signed in the epoch it was first dispatched in
		return nil, nil
	}
	d := f.master.disp.Load()
	if d == nil {
		return nil, errNotOpen
	}
	p.d = d
	f.admit(&p.req, d, &rt.in)
	t, err := d.Acquire(ctx, &p.req)
	for err != nil && replaced(err, d, f.master.disp.Load()) {
		// the queue was rebuilt under the request (new scheduler
		// settings, docs/NOTES.md "Configuration store"): it waits in the new one
		d = f.master.disp.Load()
		p.d = d
		t, err = d.Acquire(ctx, &p.req)
	}
	if err != nil {
		tr := try{leg: legQueue, canceled: ctx.Err() != nil, master: f.c.IsMaster()}
		if tryAgain(tr, err) == sendAgain && f.handOver(rt) {
			return newViaPlacer(f), nil
		}
		return nil, err
	}
	p.take(rt, t, f.c.Epoch())
	if rt.in.trace != nil && rt.in.dev != "" { // where its wait stopped being its device's (traced.go)
		rt.in.trace.Mark(reqtrace.Free, time.Now().Add(-t.SlotWait))
	}
	return nil, nil
}

// take holds slot t and aims rt at its board with a dispatch mark signed
// in epoch (none for a redirect: redirect.go signs the client's).
func (p *ownPlacer) take(rt *route, t sched.Ticket, epoch uint64) {
	p.ticket = t
	rt.to = target{board: t.Board, addr: t.Addr, epoch: epoch, self: t.Board == rt.in.self, measure: true}
	if !rt.to.self && !p.f.cfg.redirect {
		p.f.signDispatch(rt)
	}
}

// Start gives the client the sticky cookie of the board chosen and, in
// redirect mode, answers 307 to it (the hold gives the slot back,
// redirect.go). The master's dispatch of a request is where the chaos
// harness plants its bug.
func (p *ownPlacer) Start(w http.ResponseWriter, rt *route) (try, bool) {
	f := p.f
	if f.cfg.sticky {
		f.setSticky(w, rt.in.r, rt.to.board)
	}
	if f.cfg.redirect && !rt.to.self {
		f.redirectTo(w, &rt.in, p.ticket, rt.start)
		p.ticket = sched.Ticket{}
		return try{}, true
	}
	if !rt.to.self {
		chaosDropAnswer(rt.in.r) // the chaos harness's planted bug (chaosbug.go); nothing in a normal build
	}
	return f.boardTry(rt), false
}

func (p *ownPlacer) Failed(rt *route, v verdict, err error) { p.f.boardFailed(rt, v, err) }

// Release gives the slot back.
func (p *ownPlacer) Release(*route, bool) {
	p.ticket.Done()
	p.ticket = sched.Ticket{}
}

// replaced reports whether err is the closing of queue d, which now is
// another one on this master.
func replaced(err error, d, now *sched.Dispatcher) bool {
	var shed *sched.ErrShed
	return now != nil && now != d && errors.As(err, &shed) && shed.Reason == sched.ReasonClosed
}

// admit describes r to the dispatcher in req: its class (the last one for
// an anonymous read), the board it is pinned to, its sticky cookie and its
// client.
func (f *Front) admit(req *sched.Request, d *sched.Dispatcher, in *inbound) *sched.Request {
	r := in.r
	*req = sched.Request{
		Class:  d.Classifier().Classify(r.Method, r.URL.Path),
		Path:   r.URL.Path,
		Client: in.client,
		Board:  in.pin,
		Device: in.dev, // a busy device's requests wait in the queue, not in a slot
		Read:   in.read,
	}
	if f.out.verified != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) && !f.out.verified(r) {
		// a read whose credentials nobody checked waits behind every
		// request that proved someone (docs/NOTES.md "Nothing anonymous
		// holds a slot")
		req.Class = max(req.Class, d.Classifier().Len()-1)
	}
	if f.cfg.sticky {
		if c, err := r.Cookie(sched.CookieName); err == nil {
			req.Sticky = c.Value
		}
	}
	return req
}

// handOver reports whether a request that was still queued when this
// board stepped down can go to the new master (tryAgain), instead of being
// answered 503: its body is in memory, so it can still go. False when
// there is no new master to hand it to (then 503).
func (f *Front) handOver(rt *route) bool {
	r := rt.in.r
	name, addr, ok := f.c.Master()
	if !ok || name == "" || name == rt.in.self || addr == "" {
		return false
	}
	// One more hop, on purpose: the loop guard is for followers that
	// bounce requests, not for a master that hands its queue over.
	r.Header.Del(HeaderVia)
	f.log.Debug("dispatch: queued request handed to the new master", "master", name, "path", r.URL.Path)
	return true
}

// acquireFailed answers a request the dispatcher did not place.
func (f *Front) acquireFailed(w http.ResponseWriter, r *http.Request, err error) {
	var shed *sched.ErrShed
	switch {
	case errors.As(err, &shed):
		retry := shed.RetryAfter
		if retry <= 0 {
			retry = f.cfg.retry
		}
		httpx.SetRetryAfter(w, retry)
		writeJSON(w, http.StatusServiceUnavailable, errorBody{
			Error: fmt.Sprintf("dispatch: %s request shed: %s", shed.Class, shed.Reason),
			Class: shed.Class, Reason: shed.Reason,
		})
	case r.Context().Err() != nil:
		unavailable(w, f.cfg.retry, "dispatch: client left while queued")
	default:
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: err.Error()})
	}
}
