package dispatch

import (
	"errors"
	"net/http"

	"github.com/ews-firmware/ews/sched"
)

// The forwarding loop: every request that is not marked for this board
// takes it, on the master and on a follower alike. Place (the Placer) →
// sign → forward → tryAgain decides → Release, as caddy's reverseproxy
// proxyLoopIteration (STYLE.md); where it goes is the Placer's answer
// alone, and what may be sent again is tryAgain's (retry.go).

// route starts rt's request at p and answers it. The answer is held in
// memory (heldWriter) while the request holds its slot, and written to the
// client once the slot is given back: a slow reader holds no slot.
// A device read joins the same read under way from this entry instead
// (sharedread.go).
func (f *Front) route(w http.ResponseWriter, rt *route, p Placer) {
	if rt.in.read && f.routeShared(w, rt, p) {
		return
	}
	hw := &heldWriter{w: w}
	f.routeHeld(hw, rt, p)
	hw.finish() // not reached when the handler aborted the answer (a panic)
}

// routeShared routes a device read that may share (shareKey): as the
// first of a flight, or as a copy of the answer of the flight under way;
// false: it did neither (it may not share, or the read it joined failed)
// and goes its own way.
func (f *Front) routeShared(w http.ResponseWriter, rt *route, p Placer) bool {
	key := f.shareKey(rt)
	if key == "" {
		return false
	}
	fl, first := f.reads.join(key)
	if first {
		f.routeLeading(w, rt, p, key, fl)
		return true
	}
	return fl.wait(w, rt.in.r)
}

// routeLeading is route for the read that leads flight fl: its answer is
// published to the reads that joined it before it is written out.
func (f *Front) routeLeading(w http.ResponseWriter, rt *route, p Placer, key string, fl *readFlight) {
	hw := &heldWriter{w: w}
	ended := false
	defer func() {
		if !ended { // the handler aborted: nobody waits forever
			f.reads.end(key, fl, nil)
		}
	}()
	f.routeHeld(hw, rt, p)
	f.reads.end(key, fl, hw)
	ended = true
	hw.finish()
}

// routeHeld is route with the answer held.
func (f *Front) routeHeld(w http.ResponseWriter, rt *route, p Placer) {
	r := rt.in.r
	var holding, answered bool // p holds a placement; the attempt there answered
	defer func() {
		if holding {
			p.Release(rt, answered) // p: the Placer that placed it last
		}
	}()
	p, _, err := f.place(rt, p)
	if err != nil {
		f.placeFailed(w, rt, err)
		return
	}
	holding = true
	if rt.in.trace != nil {
		markPlaced(w, rt.in.trace) // traced.go
	}
	fresh := true // rt.to is a Placer's first answer
	var t try
	for {
		if fresh {
			var answered bool
			if t, answered = p.Start(w, rt); answered {
				return
			}
		}
		if rt.to.self {
			f.runLocal(w, r)
			return
		}
		ferr := f.attempt(w, rt)
		if ferr == nil {
			answered = true
			f.m.forwarded.WithLabelValues(rt.to.board, OutcomeOK).Inc()
			return
		}
		t.canceled = r.Context().Err() != nil
		v := tryAgain(t, ferr)
		if v != answerCanceled {
			f.m.errors.WithLabelValues(rt.to.board).Inc()
		}
		p.Failed(rt, v, ferr)
		failed := rt.to
		p.Release(rt, false)
		holding = false
		if v != sendAgain {
			f.answerFailure(w, v, failed.board, ferr)
			return
		}
		var perr error
		if p, fresh, perr = f.place(rt, p); perr != nil {
			var nm *noMasterError
			if fresh || errors.As(perr, &nm) { // a new Placer's first answer, or no master in time: as on entry
				f.placeFailed(w, rt, perr)
				return
			}
			f.answerFailure(w, giveUp(t, ferr), failed.board, ferr) // no other board for the retry
			return
		}
		holding = true
		if rt.in.trace != nil {
			markPlaced(w, rt.in.trace)
		}
		if t.leg == legBoard {
			f.m.forwarded.WithLabelValues(failed.board, OutcomeRetried).Inc()
			f.m.retries.Inc()
		}
		t.n++
	}
}

// attempt forwards the request to rt.to once, with the mark its Placer signed.
func (f *Front) attempt(w http.ResponseWriter, rt *route) error {
	to, in := &rt.to, &rt.in
	st := &rt.st
	*st = fwd{target: to.board, addr: to.addr, body: in.body, header: to.header, token: to.token}
	if to.measure {
		st.start = rt.start
	}
	return f.forward(w, in.r, st)
}

// setSticky gives the client the sticky cookie of the board chosen
// (sched.sticky = "cookie") when it named another.
func (f *Front) setSticky(w http.ResponseWriter, r *http.Request, board string) {
	if !f.cfg.sticky || stickyOf(r) == board {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sched.CookieName, Value: board, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// stickyOf is r's sticky cookie, "" without one.
func stickyOf(r *http.Request) string {
	if c, err := r.Cookie(sched.CookieName); err == nil {
		return c.Value
	}
	return ""
}

// noMasterError: a request found no master to take it in time.
type noMasterError struct{ failed string }

func (e *noMasterError) Error() string { return "dispatch: no master to take the request" }

// errNotOpen: this board is master but its queue is not open yet.
var errNotOpen = errors.New("dispatch: this board is becoming master; its queue is not open yet")

// placeFailed answers a request that its first Placer placed nowhere.
func (f *Front) placeFailed(w http.ResponseWriter, rt *route, err error) {
	var nm *noMasterError
	switch {
	case errors.As(err, &nm):
		f.noMaster(w, rt.in.r, nm.failed)
	case errors.Is(err, errNotOpen):
		unavailable(w, f.cfg.retry, "%s", err.Error())
	case errors.Is(err, errLoop):
		unavailable(w, f.cfg.retry, "dispatch: forwarding loop: the request already passed a board that is not master, and %s is not master either", rt.in.self)
	default:
		f.acquireFailed(w, rt.in.r, err)
	}
}
