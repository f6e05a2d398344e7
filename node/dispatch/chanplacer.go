package dispatch

import (
	"context"
	"errors"
	"net/http"

	"github.com/ews-firmware/ews/node/dispatch/place"
	"github.com/ews-firmware/ews/sched"
)

// chanPlacer places a request over the follower's placement channel: the
// master admits it as its own and answers the board, whose slot it holds
// until the follower's end frame (Release). One per request: the channel
// it was placed over and the placement to end, or the slot of this
// board's lease the channel handed it while it waited (place.Chan.FreeLease).
type chanPlacer struct {
	f         *Front
	pc        *place.Chan
	id        uint32 // the placement to end; 0: none held
	leaseable bool   // the request may run here on a slot of the lease (Front.leaseable)
	leased    bool   // it holds a slot of the lease: Release frees it
}

// Place asks the master where rt's request runs (first), or where it runs
// again, any board but the ones that failed (a retry). What the channel
// cannot place the first time goes the whole way to the master
// (viaPlacer): the channel closed before the answer (it ran nowhere), the
// master says it is master no more, or its queue closed under the request
// (tryAgain, legQueue).
func (p *chanPlacer) Place(ctx context.Context, rt *route) (Placer, error) {
	f, r, pc := p.f, rt.in.r, p.pc
	q := place.Request{Client: rt.in.client, Method: r.Method, Path: r.URL.Path, Board: rt.in.pin}
	if f.cfg.sticky {
		q.Sticky = stickyOf(r)
	}
	retry := rt.to.board != "" // a retry (once: tryAgain): the master chooses its board, any but the one that failed
	if retry {
		q.Exclude = []string{rt.to.board}
	}
	q.Leaseable = p.leaseable && !retry
	a, err := pc.Place(ctx, &q)
	switch {
	case err == nil && a.Leased: // a slot of the lease freed while it waited: it runs here
		f.placing.pm.lease.Inc()
		pc.Ran(r.Method, r.URL.Path) // the master's per-class figures
		p.leased = true
		rt.to = target{board: rt.in.self, self: true}
		return nil, nil
	case retry && err == nil && !a.Placed:
		return nil, errNotPlaced
	case retry && err != nil:
		return nil, err
	case errors.Is(err, place.ErrChannelDown):
		f.placing.pm.placed.WithLabelValues(PlacedFallback).Inc()
		return newViaPlacer(f), nil // nothing ran: the way through the master holds it for the next one
	case err != nil:
		return nil, err // the client left while queued
	case !a.Placed:
		return p.refused(ctx, rt, &a)
	case !retry:
		f.placing.pm.placed.WithLabelValues(PlacedOK).Inc()
	}
	// hold the placement and aim rt at its board, with a dispatch mark
	// signed here: every board holds the mark key
	p.id = a.ID
	rt.to = target{board: a.Board, addr: a.Addr, epoch: a.Epoch, self: a.Board == rt.in.self}
	if !rt.to.self {
		f.signDispatch(rt)
	}
	return nil, nil
}

// errNotPlaced: the master placed a retry nowhere.
var errNotPlaced = errors.New("dispatch: the master did not place the request again")

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
// A request handed a slot of the lease was not placed by the master: as
// on the lease path, no cookie and no planted bug.
func (p *chanPlacer) Start(w http.ResponseWriter, rt *route) (try, bool) {
	if p.leased {
		return p.f.boardTry(rt), false
	}
	if p.f.cfg.sticky {
		p.f.setSticky(w, rt.in.r, rt.to.board)
	}
	chaosDropAnswer(rt.in.r) // the chaos harness's planted bug (chaosbug.go); nothing in a normal build
	return p.f.boardTry(rt), false
}

func (p *chanPlacer) Failed(rt *route, v verdict, err error) { p.f.boardFailed(rt, v, err) }

// Release ends the placement: the master gives its slot back. Also when
// the handler or the proxy aborts the answer (http.ErrAbortHandler: a
// board that failed mid-answer), so the master never keeps its slot.
func (p *chanPlacer) Release(*route, bool) {
	if p.leased {
		p.leased = false
		p.pc.FreeLease()
	}
	if p.id != 0 {
		p.pc.End(p.id)
		p.id = 0
	}
}
