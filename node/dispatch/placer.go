package dispatch

import (
	"context"
	"net/http"
	"time"
)

// Placer says where an accepted request goes: the one question the
// forwarding loop (loop.go) asks before each attempt, and it does not care
// which implementation answered (docs/DESIGN.md, The front door). Three
// do: the master's own dispatcher (ownPlacer, master.go), a follower's
// placement channel (chanPlacer, fastentry.go) and the whole request
// passed to the master, the way to an older master (viaPlacer,
// follower.go). Each is a value made for one request that keeps what it
// holds for it (a slot, a placement, a hold), so the loop never asks
// which one it has and a follower's request never passes the master's
// code. A takeover or a fallback mid-request changes the Placer, not the
// path. Called from the request's goroutine only.
type Placer interface {
	// Place sets rt.to to where rt's request goes next and holds what it
	// needs there (a slot, a placement) until Release. rt.to is the target
	// whose attempt just failed, or zero on the first. A non-nil next means
	// nothing ran and next places the request instead (a takeover, a
	// fallback); an error means it goes nowhere (the loop answers it).
	Place(ctx context.Context, rt *route) (next Placer, err error)
	// Start does what the Placer's first answer asks before the first
	// attempt (a sticky cookie, a redirect: then answered) and says what
	// the retry rule reads of this leg.
	Start(w http.ResponseWriter, rt *route) (t try, answered bool)
	// Failed counts and logs an attempt at rt.to that failed with err,
	// which the retry rule judged v.
	Failed(rt *route, v verdict, err error)
	// Release gives back what Place holds for rt.to; once per Place.
	// answered: the attempt there answered the client.
	Release(rt *route, answered bool)
}

// target is where one attempt goes, with the mark the Placer signed for it.
type target struct {
	board, addr   string // the board (or the master, for a via mark) and its host:port
	epoch         uint64 // the master's epoch the mark is signed in
	self          bool   // run it here
	header, token string // the mark: HeaderMark or HeaderVia, and its token
	measure       bool   // the master's own forward: observe its added latency
}

// route is one request's way through the loop: the request, where it goes
// now and the forward's state. One allocation per request, which the
// forward's state needed anyway; what a Placer holds is in the Placer.
type route struct {
	in    inbound
	to    target
	st    fwd       // the forward's state for the attempt (proxy.go)
	start time.Time // when it entered (the master's added latency)
}

// boardTry is what the retry rule reads of a request sent to a board (a
// Placer that placed it on one: the master's own, or a placement).
func (f *Front) boardTry(rt *route) try {
	r, pin := rt.in.r, rt.in.pin
	return try{
		leg:        legBoard,
		replay:     rt.in.replay(MaxDigestBody),
		keyed:      r.Header.Get("Idempotency-Key") != "",
		idempotent: r.Method == http.MethodGet || r.Method == http.MethodHead,
		movable:    pin == "" || pin == "any",
	}
}

// signDispatch signs rt.to's dispatch mark (a board a master chose).
func (f *Front) signDispatch(rt *route) {
	rt.to.header, rt.to.token = HeaderMark, f.marks.SignString(KindDispatch, rt.to.epoch, rt.to.board, &rt.in.bind)
}

// boardFailed logs a failed attempt at a board (the board Placers' Failed).
func (f *Front) boardFailed(rt *route, v verdict, err error) {
	if v == answerCanceled {
		return
	}
	r := rt.in.r
	f.log.Warn("dispatch: board failed", "board", rt.to.board, "addr", rt.to.addr, "method", r.Method, "path", r.URL.Path, "err", err, "ran", !unsent(err))
}

// place asks p, and the Placers it hands the request to, where rt goes;
// switched: another Placer answered, from its first placement.
func (f *Front) place(rt *route, p Placer) (_ Placer, switched bool, _ error) {
	for {
		next, err := p.Place(rt.in.r.Context(), rt)
		if next == nil {
			return p, switched, err
		}
		p, rt.to, switched = next, target{}, true
	}
}
