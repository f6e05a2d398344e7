package dispatch

import (
	"errors"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/sched"
)

// Any board is a fast entry (issue 27, part 2; docs/incoming/fastentry.md).
// A follower does not send the whole request through the master: it asks
// the master where the request runs over the placement channel (a few
// dozen bytes each way), then forwards it to that board itself with a
// dispatch mark, over its own pooled connections, and tells the master
// when it is over. The master's queue, priorities and least-connections
// view decide every request, as for the requests it receives itself.
//
// Whatever the fast entry cannot do takes the path through the master
// (follower.go), which stays as it was: no channel to the master (an older
// build that does not know it, unreachable, an election), the master's
// answer that it is not master, a queue that closed under the request
// (tryAgain, legQueue), a channel that closed before the answer (the
// request ran nowhere), redirect mode, and a request that already came
// through a follower (the loop guard).

// enter is a follower's path: the fast entry, or the path through the master.
func (f *Front) enter(w http.ResponseWriter, in *inbound) {
	r, self := in.r, in.self
	if f.viaMaster || f.redirect || r.Header.Get(HeaderVia) != "" {
		f.toMaster(w, in)
		return
	}
	to, ok := f.nextMaster(self, masterAt{})
	if !ok {
		f.toMaster(w, in)
		return
	}
	pc := f.channel(r.Context(), to)
	if pc == nil {
		f.toMaster(w, in)
		return
	}
	leaseable := f.leaseable(r, self)
	if leaseable && pc.takeLease() { // placelease.go
		f.pm.lease.Inc()
		defer pc.freeLease()
		f.runLocal(w, r)
		return
	}
	f.fastEntry(w, in, pc)
	if leaseable {
		pc.askLease()
	}
}

// leaseable reports whether r may run here on a slot the master leased
// this board: no device of the master's device queues, not pinned to
// another board, no sticky cookie for the policy to read, and this board
// serving.
func (f *Front) leaseable(r *http.Request, self string) bool {
	if f.sticky || (f.serving != nil && !f.serving()) {
		return false
	}
	if dev, _ := sched.DeviceOf(r.Method, r.URL.Path); dev != "" {
		return false
	}
	if f.pin != nil {
		if b := f.pin(r); b != "" && b != "any" && b != self {
			return false
		}
	}
	return true
}

// fastEntry places r through pc and forwards it to its board, sending it
// again where tryAgain allows (placed again by the master, on another
// board). Every placement it got is ended.
func (f *Front) fastEntry(w http.ResponseWriter, in *inbound, pc *placeChan) {
	r, self := in.r, in.self
	q := placeReq{client: in.client, method: r.Method, path: r.URL.Path}
	if f.pin != nil {
		q.board = f.pin(r)
	}
	if f.sticky {
		if c, err := r.Cookie(sched.CookieName); err == nil {
			q.sticky = c.Value
		}
	}
	a, err := pc.place(r.Context(), &q)
	switch {
	case errors.Is(err, errChannelDown):
		f.pm.placed.WithLabelValues(PlacedFallback).Inc()
		f.toMaster(w, in) // nothing ran: the path through the master holds it for the next one
		return
	case err != nil:
		f.acquireFailed(w, r, err) // the client left while queued
		return
	case !a.placed:
		f.placeRefused(w, in, pc, &a)
		return
	}
	rt := try{
		leg:        legBoard,
		replay:     in.replay(MaxDigestBody),
		keyed:      r.Header.Get("Idempotency-Key") != "",
		idempotent: r.Method == http.MethodGet || r.Method == http.MethodHead,
		movable:    q.board == "" || q.board == "any",
	}
	f.pm.placed.WithLabelValues(PlacedOK).Inc()
	// the placement in hand is always ended, also when the handler or the
	// proxy aborts the answer (http.ErrAbortHandler: a board that failed
	// mid-answer), so the master never keeps its slot
	held := a.id
	defer func() {
		if held != 0 {
			pc.end(held)
		}
	}()
	if f.sticky && q.sticky != a.board {
		http.SetCookie(w, &http.Cookie{Name: sched.CookieName, Value: a.board, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	chaosDropAnswer(r) // the chaos harness's planted bug (chaosbug.go); nothing in a normal build
	for ; ; rt.n++ {
		if a.board == self {
			f.runLocal(w, r)
			return
		}
		tok := f.marks.SignString(KindDispatch, a.epoch, a.board, &in.bind)
		err := f.forward(w, r, &fwd{target: a.board, addr: a.addr, header: HeaderMark, token: tok, body: in.body})
		pc.end(a.id)
		held = 0
		if err == nil {
			f.m.forwarded.WithLabelValues(a.board, OutcomeOK).Inc()
			return
		}
		rt.canceled = r.Context().Err() != nil
		v, failed := tryAgain(rt, err), a.board
		if v != answerCanceled {
			f.m.errors.WithLabelValues(failed).Inc()
			f.log.Warn("dispatch: board failed", "board", failed, "addr", a.addr, "method", r.Method, "path", r.URL.Path, "err", err, "ran", !unsent(err))
		}
		if v == sendAgain {
			q.exclude = append(q.exclude, failed) // the master chooses the retry's board, any but this one
			var perr error
			if a, perr = pc.place(r.Context(), &q); perr == nil && a.placed {
				held = a.id
				f.m.forwarded.WithLabelValues(failed, OutcomeRetried).Inc()
				f.m.retries.Inc()
				continue
			}
			v = giveUp(rt, err)
		}
		f.answerFailure(w, v, failed, err)
		return
	}
}

// placeRefused answers a request the master did not place: it is not
// master (the path through the master finds the one that is), its queue
// closed under the request (tryAgain: to the next master), or it shed it.
func (f *Front) placeRefused(w http.ResponseWriter, in *inbound, pc *placeChan, a *placeAns) {
	r, self := in.r, in.self
	if a.code == placeNotMaster {
		f.pm.placed.WithLabelValues(PlacedFallback).Inc()
		f.awaitNewMaster(r, self, pc.to)
		f.toMaster(w, in)
		return
	}
	shed := &sched.ErrShed{Reason: a.reason, Class: a.class, RetryAfter: time.Duration(a.retry) * time.Millisecond}
	rt := try{leg: legQueue, canceled: r.Context().Err() != nil, master: f.c.IsMaster()}
	if tryAgain(rt, shed) == sendAgain {
		f.pm.placed.WithLabelValues(PlacedFallback).Inc()
		f.awaitNewMaster(r, self, pc.to)
		f.toMaster(w, in)
		return
	}
	f.pm.placed.WithLabelValues(PlacedShed).Inc()
	f.acquireFailed(w, r, shed)
}

// awaitNewMaster holds a request whose master said it is master no more
// until this board knows another one (or the same at a newer epoch, or it
// took over itself), at most MasterWait and the request's deadline: sent
// through the old master at once, it would only find it is no master
// either. The path through the master then takes it, or answers 503.
func (f *Front) awaitNewMaster(r *http.Request, self string, old masterAt) {
	deadline := time.Now().Add(f.masterWait)
	if d, ok := r.Context().Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	for {
		opened := f.opened.wait()
		if _, ok := f.nextMaster(self, old); ok || f.c.IsMaster() {
			return
		}
		if !holdUntil(r.Context(), deadline, opened) {
			return
		}
	}
}
