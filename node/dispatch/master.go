package dispatch

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/sched"
)

// The master's path: admit the request to the queue, acquire a board for
// it (sched.Dispatcher.Acquire), then run it here, redirect the client
// (redirect.go), or sign a dispatch mark and forward it (proxy), sending it
// again where tryAgain allows.

// dispatch is the master's path: admit → acquire → sign → forward, or
// run here. The client is the one accept established.
func (f *Front) dispatch(w http.ResponseWriter, in *inbound, start time.Time) {
	r, self := in.r, in.self
	d := f.disp.Load()
	if d == nil {
		unavailable(w, f.retry, "dispatch: this board is becoming master; its queue is not open yet")
		return
	}
	req := f.admit(d, r, in.client)
	t, err := d.Acquire(r.Context(), req)
	if err != nil {
		rt := try{leg: legQueue, canceled: r.Context().Err() != nil, master: f.c.IsMaster()}
		if tryAgain(rt, err) == sendAgain && f.handOver(w, in) {
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
		f.redirectTo(w, in, t, start)
	default:
		f.proxy(w, in, d, req, t, start)
	}
}

// admit describes r to the dispatcher: its class, the board it is pinned
// to, its sticky cookie and its client.
func (f *Front) admit(d *sched.Dispatcher, r *http.Request, client netip.Addr) *sched.Request {
	req := &sched.Request{
		Class:  d.Classifier().Classify(r.Method, r.URL.Path),
		Path:   r.URL.Path,
		Client: client,
	}
	req.Device, req.Read = sched.DeviceOf(r.Method, r.URL.Path) // issue 27: a busy device's requests wait in the queue
	if f.pin != nil {
		req.Board = f.pin(r)
	}
	if f.sticky {
		if c, err := r.Cookie(sched.CookieName); err == nil {
			req.Sticky = c.Value
		}
	}
	return req
}

// handOver passes a request that was still queued when this board stepped
// down to the new master (tryAgain), instead of answering it 503: its body
// is in memory, so it can still go. False when there is no new master
// to hand it to (the caller then answers 503).
func (f *Front) handOver(w http.ResponseWriter, in *inbound) bool {
	r := in.r
	name, addr, ok := f.c.Master()
	if !ok || name == "" || name == in.self || addr == "" {
		return false
	}
	// One more hop, on purpose: the loop guard is for followers that
	// bounce requests, not for a master that hands its queue over.
	r.Header.Del(HeaderVia)
	f.log.Debug("dispatch: queued request handed to the new master", "master", name, "path", r.URL.Path)
	f.toMaster(w, in)
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

// proxy sends a dispatched request to its board with a fresh mark; when
// the board fails, tryAgain says whether it goes to another board (the
// dispatcher chooses it) or what the client gets. A body the mark binds
// by its digest (up to MaxDigestBody) can be sent again. The ticket in
// hand is always Done.
func (f *Front) proxy(w http.ResponseWriter, in *inbound, d *sched.Dispatcher, req *sched.Request, t sched.Ticket, start time.Time) {
	r, self := in.r, in.self
	cur := t
	defer func() { cur.Done() }()
	epoch := f.c.Epoch()
	rt := try{
		leg:        legBoard,
		replay:     in.replay(MaxDigestBody),
		keyed:      r.Header.Get("Idempotency-Key") != "",
		idempotent: r.Method == http.MethodGet || r.Method == http.MethodHead,
		movable:    req.Board == "" || req.Board == "any",
	}
	chaosDropAnswer(r)
	for ; ; rt.n++ {
		tok := f.marks.SignString(KindDispatch, epoch, cur.Board, &in.bind)
		err := f.forward(w, r, &fwd{target: cur.Board, addr: cur.Addr, header: HeaderMark, token: tok, start: start, body: in.body})
		if err == nil {
			f.m.forwarded.WithLabelValues(cur.Board, OutcomeOK).Inc()
			return
		}
		rt.canceled = r.Context().Err() != nil
		v, failed := tryAgain(rt, err), cur.Board
		if v != answerCanceled {
			f.m.errors.WithLabelValues(failed).Inc()
			f.log.Warn("dispatch: board failed", "board", failed, "addr", cur.Addr, "method", r.Method, "path", r.URL.Path, "err", err, "ran", !unsent(err))
		}
		if v == sendAgain {
			cur.Done()
			cur = sched.Ticket{}
			again := *req
			again.Exclude = []string{failed} // the scheduler chooses the retry's board, any but this one
			nt, aerr := d.Acquire(r.Context(), &again)
			if aerr == nil {
				f.m.forwarded.WithLabelValues(failed, OutcomeRetried).Inc()
				f.m.retries.Inc()
				cur = nt
				if cur.Board == self {
					f.runLocal(w, r)
					return
				}
				continue
			}
			v = giveUp(rt, err)
		}
		f.answerFailure(w, v, failed, err)
		return
	}
}
