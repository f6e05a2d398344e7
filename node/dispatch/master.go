package dispatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
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
	f.route(w, &route{in: *in, start: start}, ownPlacer{f})
}

// ownPlacer places a request with this board's dispatcher: a slot on the
// board the policy chooses, held until Release.
type ownPlacer struct{ f *Front }

// Place admits rt's request and acquires a slot (first), or one on any
// board but the one that failed (a retry). A request still queued when
// this board stepped down goes to the new master (tryAgain, legQueue).
func (p ownPlacer) Place(ctx context.Context, rt *route) (Placer, error) {
	f, r := p.f, rt.in.r
	if rt.to.board != "" { // a retry: the scheduler chooses its board, any but the one that failed
		again := rt.req
		again.Exclude = []string{rt.to.board}
		t, err := rt.d.Acquire(ctx, &again)
		if err != nil {
			return nil, err
		}
		epoch := rt.to.epoch // signed in the epoch it was first dispatched in
		rt.to = p.target(rt, t)
		rt.to.epoch = epoch
		return nil, nil
	}
	d := f.master.disp.Load()
	if d == nil {
		return nil, errNotOpen
	}
	rt.d = d
	f.admit(&rt.req, d, r, rt.in.client)
	t, err := d.Acquire(ctx, &rt.req)
	for err != nil && replaced(err, d, f.master.disp.Load()) {
		// the queue was rebuilt under the request (new scheduler
		// settings, docs/NOTES.md "Configuration store"): it waits in the new one
		d = f.master.disp.Load()
		rt.d = d
		t, err = d.Acquire(ctx, &rt.req)
	}
	if err != nil {
		tr := try{leg: legQueue, canceled: ctx.Err() != nil, master: f.c.IsMaster()}
		if tryAgain(tr, err) == sendAgain && f.handOver(rt) {
			return viaPlacer{f}, nil
		}
		return nil, err
	}
	rt.to = p.target(rt, t)
	rt.to.redirect = f.cfg.redirect && !rt.to.self
	return nil, nil
}

// replaced reports whether err is the closing of queue d, which now is
// another one on this master.
func replaced(err error, d, now *sched.Dispatcher) bool {
	var shed *sched.ErrShed
	return now != nil && now != d && errors.As(err, &shed) && shed.Reason == sched.ReasonClosed
}

func (p ownPlacer) target(rt *route, t sched.Ticket) target {
	return target{board: t.Board, addr: t.Addr, epoch: p.f.c.Epoch(), kind: KindDispatch, self: t.Board == rt.in.self, ticket: t}
}

// Release gives the slot back.
func (ownPlacer) Release(rt *route) {
	rt.to.ticket.Done()
	rt.to.ticket = sched.Ticket{}
}

// admit describes r to the dispatcher in req: its class (the last one for
// an anonymous read), the board it is pinned to, its sticky cookie and its
// client.
func (f *Front) admit(req *sched.Request, d *sched.Dispatcher, r *http.Request, client netip.Addr) *sched.Request {
	*req = sched.Request{
		Class:  d.Classifier().Classify(r.Method, r.URL.Path),
		Path:   r.URL.Path,
		Client: client,
	}
	if f.out.verified != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) && !f.out.verified(r) {
		// a read whose credentials nobody checked waits behind every
		// request that proved someone (docs/NOTES.md "Nothing anonymous
		// holds a slot")
		req.Class = max(req.Class, d.Classifier().Len()-1)
	}
	req.Device, req.Read = sched.DeviceOf(r.Method, r.URL.Path) // a busy device's requests wait in the queue, not in a slot
	if f.cfg.pin != nil {
		req.Board = f.cfg.pin(r)
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
