package dispatch

import (
	"context"
	"time"

	"github.com/ews-firmware/ews/node/dispatch/place"
	"github.com/ews-firmware/ews/sched"
)

// Placer says where an accepted request goes: the one question the
// forwarding loop (loop.go) asks before each attempt, and it does not care
// which implementation answered (docs/DESIGN.md, The front door). Three
// do: the master's own dispatcher (ownPlacer, master.go), a follower's
// placement channel (chanPlacer, fastentry.go) and the whole request
// passed to the master, the way to an older master (viaPlacer,
// follower.go). A takeover or a fallback mid-request changes the Placer,
// not the path. Called from the request's goroutine only.
type Placer interface {
	// Place sets rt.to to where rt's request goes next and holds what it
	// needs there (a slot, a placement) until Release. rt.to is the target
	// whose attempt just failed, or zero on the first. A non-nil next means
	// nothing ran and next places the request instead (a takeover, a
	// fallback); an error means it goes nowhere (the loop answers it).
	Place(ctx context.Context, rt *route) (next Placer, err error)
	// Release gives back what Place holds for rt.to; once per Place.
	Release(rt *route)
}

// target is where one attempt goes.
type target struct {
	board, addr string       // the board (or the master, KindVia) and its host:port
	epoch       uint64       // the master's epoch the mark is signed in
	kind        Kind         // KindDispatch: a board the master chose; KindVia: the master, the whole request
	self        bool         // run it here
	redirect    bool         // redirect mode: answer 307 to the board (redirect.go)
	ticket      sched.Ticket // ownPlacer: the slot
	id          uint32       // chanPlacer: the placement to end
}

// route is one request's way through the loop: the request, where it goes
// now, the forward's state and what each Placer keeps between its answers.
// One allocation per request, which the forward's state needed anyway.
type route struct {
	in    inbound
	to    target
	st    fwd       // the forward's state for the attempt (proxy.go)
	start time.Time // when it entered (the master's added latency)

	d   *sched.Dispatcher // ownPlacer: the dispatcher that placed it
	req sched.Request     // ownPlacer: the admitted request

	pc *place.Chan // chanPlacer: the channel it was placed over

	deadline time.Time // viaPlacer: held for a master until then
	held     bool      // viaPlacer: it waited for a master
}
