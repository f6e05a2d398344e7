package dispatch

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/node/dispatch/place"
)

// The follower's path: a board that is not master passes the request to
// the master with a via mark naming the client, holding it while no master
// can take it.

// toMaster is a non-master's path: pass the whole request to the master,
// the forwarding loop with viaPlacer as the Placer.
func (f *Front) toMaster(w http.ResponseWriter, in *inbound) {
	f.route(w, &route{in: *in, start: time.Now()}, newViaPlacer(f))
}

// errLoop: a request that already passed a follower reached another.
var errLoop = errors.New("dispatch: forwarding loop")

// viaPlacer sends the whole request to the master with a via mark (the
// way to a master of any build).
//
// A request that arrives while no master is known (an election) is held
// until one is, at most MasterWait and the request's own deadline; so is
// one that tryAgain says to send to the next master after its master
// failed. Only then, with still no master, it gets 503 with Retry-After.
// When this board took over meanwhile, its own dispatcher places it. One
// per request: how long it may be held, and whether it was.
type viaPlacer struct {
	f        *Front
	deadline time.Time // held for a master until then; zero: not asked yet
	held     bool      // it waited for a master
}

func newViaPlacer(f *Front) *viaPlacer { return &viaPlacer{f: f} }

// Place finds the master to send rt's request to, holding it while none
// is known.
func (p *viaPlacer) Place(ctx context.Context, rt *route) (Placer, error) {
	f, r, self := p.f, rt.in.r, rt.in.self
	if p.deadline.IsZero() { // the first time
		if r.Header.Get(HeaderVia) != "" && !f.takingOver(self) {
			return nil, errLoop
		}
		p.deadline = time.Now().Add(f.follow.masterWait)
		if d, ok := ctx.Deadline(); ok && d.Before(p.deadline) {
			p.deadline = d
		}
	}
	var failed place.Master
	if rt.to.board != "" { // a retry: rt.to is the master that failed it
		failed = place.Master{Name: rt.to.board, Addr: rt.to.addr, Epoch: rt.to.epoch}
	}
	for {
		if to, ok := f.nextMaster(self, failed); ok {
			rt.to = target{board: to.Name, addr: to.Addr, epoch: to.Epoch, header: HeaderVia}
			rt.to.token = f.marks.SignString(KindVia, to.Epoch, to.Name, rt.in.via()) // the body bound by its length
			return nil, nil
		}
		opened := f.master.opened.wait() // taken before IsMaster: an opening in between still wakes the hold
		if f.c.IsMaster() {              // this board took over while the request waited
			return newOwnPlacer(f), nil
		}
		p.held = true
		f.m.holding.Inc()
		ok := holdUntil(ctx, p.deadline, opened)
		f.m.holding.Dec()
		if !ok {
			return nil, &noMasterError{failed: failed.Name}
		}
	}
}

// Start: the retry rule's leg to the master.
func (p *viaPlacer) Start(_ http.ResponseWriter, rt *route) (try, bool) {
	return try{leg: legMaster, replay: rt.in.replay(p.f.follow.replayMax), keyed: rt.in.r.Header.Get("Idempotency-Key") != ""}, false
}

// Failed logs a master that failed the request.
func (p *viaPlacer) Failed(rt *route, v verdict, err error) {
	f := p.f
	switch {
	case v == sendAgain:
		f.m.forwarded.WithLabelValues(rt.to.board, OutcomeRetried).Inc()
		f.log.Info("dispatch: master unreachable; holding the request for the next master",
			"master", rt.to.board, "addr", rt.to.addr, "err", err, "path", rt.in.r.URL.Path, "keyed", rt.in.r.Header.Get("Idempotency-Key") != "")
	case v != answerCanceled:
		f.log.Warn("dispatch: master did not answer", "master", rt.to.board, "addr", rt.to.addr, "err", err)
	}
}

// Release: nothing is held on the master for a whole request; a request
// that was held and then answered is counted.
func (p *viaPlacer) Release(_ *route, answered bool) {
	if answered && p.held {
		p.f.m.held.WithLabelValues(OutcomeOK).Inc()
	}
}

// takingOver reports whether the cluster names this board master while
// IsMaster still says no (its queue is not open yet): a request passed here
// by a follower then waits for the queue like any other, it is no loop.
func (f *Front) takingOver(self string) bool {
	name, _, ok := f.c.Master()
	return ok && name == self
}

// nextMaster is the master to send a request to: the one known now, if it
// is another board with an address and not the one that failed this
// request (the same board at a new epoch is a new master).
func (f *Front) nextMaster(self string, failed place.Master) (place.Master, bool) {
	name, addr, ok := f.c.Master()
	epoch := f.c.Epoch()
	if !ok || name == "" || addr == "" || name == self || (name == failed.Name && epoch == failed.Epoch) {
		return place.Master{}, false
	}
	return place.Master{Name: name, Addr: addr, Epoch: epoch}, true
}

// noMaster answers a request that found no master to take it in time.
func (f *Front) noMaster(w http.ResponseWriter, r *http.Request, failed string) {
	f.m.held.WithLabelValues(OutcomeError).Inc()
	switch {
	case r.Context().Err() != nil:
		unavailable(w, f.cfg.retry, "dispatch: client left while waiting for a master")
	case failed != "":
		unavailable(w, f.cfg.retry, "dispatch: master %s unreachable and no new master within %v", failed, f.follow.masterWait)
	default:
		unavailable(w, f.cfg.retry, "dispatch: no master known (election in progress)")
	}
}
