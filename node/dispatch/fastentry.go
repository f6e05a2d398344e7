package dispatch

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/node/dispatch/place"
	"github.com/ews-firmware/ews/sched"
)

// Any board is a fast entry (docs/notes/fast-entry.md).
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

// enter is a follower's path: a leased slot here, else the forwarding loop
// with the placement channel as the Placer (chanPlacer), else with the
// whole request to the master (viaPlacer).
func (f *Front) enter(w http.ResponseWriter, in *inbound) {
	r, self := in.r, in.self
	if f.follow.viaMaster || f.cfg.redirect || r.Header.Get(HeaderVia) != "" {
		f.toMaster(w, in)
		return
	}
	to, ok := f.nextMaster(self, place.Master{})
	if !ok {
		f.toMaster(w, in)
		return
	}
	pc := f.follow.placer.Channel(r.Context(), to)
	if pc == nil {
		f.toMaster(w, in)
		return
	}
	leaseable := f.leaseable(r, self)
	if leaseable && pc.TakeLease() { // place/lease.go
		f.placing.pm.lease.Inc()
		pc.Ran(r.Method, r.URL.Path) // the master's per-class figures
		defer pc.FreeLease()
		f.runLocal(w, r)
		return
	}
	f.route(w, &route{in: *in, start: time.Now()}, &chanPlacer{f: f, pc: pc})
	if leaseable {
		pc.AskLease()
	}
}

// leaseable reports whether r may run here on a slot the master leased
// this board: no device of the master's device queues, not pinned to
// another board, no sticky cookie for the policy to read, and this board
// serving.
func (f *Front) leaseable(r *http.Request, self string) bool {
	if f.cfg.sticky || (f.clients.serving != nil && !f.clients.serving()) {
		return false
	}
	if dev, _ := sched.DeviceOf(r.Method, r.URL.Path); dev != "" {
		return false
	}
	if f.cfg.pin != nil {
		if b := f.cfg.pin(r); b != "" && b != "any" && b != self {
			return false
		}
	}
	return true
}

// chanPlacer places a request over the follower's placement channel: the
// master admits it as its own and answers the board, whose slot it holds
// until the follower's end frame (Release). One per request: the channel
// it was placed over and the placement to end.
type chanPlacer struct {
	f  *Front
	pc *place.Chan
	id uint32 // the placement to end; 0: none held
}

// Place asks the master where rt's request runs (first), or where it runs
// again, any board but the ones that failed (a retry). What the channel
// cannot place the first time goes the whole way to the master
// (viaPlacer): the channel closed before the answer (it ran nowhere), the
// master says it is master no more, or its queue closed under the request
// (tryAgain, legQueue).
func (p *chanPlacer) Place(ctx context.Context, rt *route) (Placer, error) {
	f, r, pc := p.f, rt.in.r, p.pc
	q := place.Request{Client: rt.in.client, Method: r.Method, Path: r.URL.Path}
	if f.cfg.pin != nil {
		q.Board = f.cfg.pin(r)
	}
	if f.cfg.sticky {
		q.Sticky = stickyOf(r)
	}
	if rt.to.board != "" { // a retry (once: tryAgain): the master chooses its board, any but the one that failed
		q.Exclude = []string{rt.to.board}
		a, err := pc.Place(ctx, &q)
		if err != nil {
			return nil, err
		}
		if !a.Placed {
			return nil, errNotPlaced
		}
		p.take(rt, &a)
		return nil, nil
	}
	a, err := pc.Place(ctx, &q)
	switch {
	case errors.Is(err, place.ErrChannelDown):
		f.placing.pm.placed.WithLabelValues(PlacedFallback).Inc()
		return newViaPlacer(f), nil // nothing ran: the way through the master holds it for the next one
	case err != nil:
		return nil, err // the client left while queued
	case !a.Placed:
		return p.refused(ctx, rt, &a)
	}
	f.placing.pm.placed.WithLabelValues(PlacedOK).Inc()
	p.take(rt, &a)
	return nil, nil
}

// errNotPlaced: the master placed a retry nowhere.
var errNotPlaced = errors.New("dispatch: the master did not place the request again")

// take holds placement a and aims rt at its board.
func (p *chanPlacer) take(rt *route, a *place.Answer) {
	p.id = a.ID
	rt.to = target{board: a.Board, addr: a.Addr, epoch: a.Epoch, self: a.Board == rt.in.self}
}

// refused is the answer to a request the master did not place: it is not
// master (the way through the master finds the one that is), its queue
// closed under the request (tryAgain: to the next master), or it shed it.
func (p *chanPlacer) refused(ctx context.Context, rt *route, a *place.Answer) (Placer, error) {
	f := p.f
	old := p.pc.To()
	if a.NotMaster {
		f.placing.pm.placed.WithLabelValues(PlacedFallback).Inc()
		f.awaitNewMaster(rt.in.r, rt.in.self, old)
		return newViaPlacer(f), nil
	}
	shed := &sched.ErrShed{Reason: a.Reason, Class: a.Class, RetryAfter: a.RetryAfter}
	tr := try{leg: legQueue, canceled: ctx.Err() != nil, master: f.c.IsMaster()}
	if tryAgain(tr, shed) == sendAgain {
		f.placing.pm.placed.WithLabelValues(PlacedFallback).Inc()
		f.awaitNewMaster(rt.in.r, rt.in.self, old)
		return newViaPlacer(f), nil
	}
	f.placing.pm.placed.WithLabelValues(PlacedShed).Inc()
	return nil, shed
}

// Start gives the client the sticky cookie of the board the master chose.
func (p *chanPlacer) Start(w http.ResponseWriter, rt *route) (try, bool) {
	p.f.setSticky(w, rt.in.r, rt.to.board)
	chaosDropAnswer(rt.in.r) // the chaos harness's planted bug (chaosbug.go); nothing in a normal build
	return p.f.boardTry(rt), false
}

// Sign signs the dispatch mark itself: every board holds the mark key.
func (p *chanPlacer) Sign(rt *route, st *fwd) { p.f.signDispatch(rt, st) }

func (p *chanPlacer) Ended(rt *route, v verdict, err error) { p.f.boardEnded(rt, v, err) }

// Release ends the placement: the master gives its slot back. Also when
// the handler or the proxy aborts the answer (http.ErrAbortHandler: a
// board that failed mid-answer), so the master never keeps its slot.
func (p *chanPlacer) Release(*route) {
	if p.id != 0 {
		p.pc.End(p.id)
		p.id = 0
	}
}

// awaitNewMaster holds a request whose master said it is master no more
// until this board knows another one (or the same at a newer epoch, or it
// took over itself), at most MasterWait and the request's deadline: sent
// through the old master at once, it would only find it is no master
// either. The path through the master then takes it, or answers 503.
func (f *Front) awaitNewMaster(r *http.Request, self string, old place.Master) {
	deadline := time.Now().Add(f.follow.masterWait)
	if d, ok := r.Context().Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	for {
		opened := f.master.opened.wait()
		if _, ok := f.nextMaster(self, old); ok || f.c.IsMaster() {
			return
		}
		if !holdUntil(r.Context(), deadline, opened) {
			return
		}
	}
}
