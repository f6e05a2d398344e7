package dispatch

import (
	"net/http"
	"time"
)

// The follower's path: a board that is not master passes the request to
// the master with a via mark naming the client, holding it while no master
// can take it.

// toMaster is a non-master's path: pass the request to the master.
//
// A request that arrives while no master is known (an election) is held
// until one is, at most MasterWait and the request's own deadline; so is
// one that tryAgain says to send to the next master after its master
// failed. Only then, with still no master, it gets 503 with Retry-After.
func (f *Front) toMaster(w http.ResponseWriter, in *inbound) {
	r, self := in.r, in.self
	if r.Header.Get(HeaderVia) != "" && !f.takingOver(self) {
		unavailable(w, f.retry, "dispatch: forwarding loop: the request already passed a board that is not master, and %s is not master either", self)
		return
	}
	rt := try{leg: legMaster, replay: in.replay(f.replayMax), keyed: r.Header.Get("Idempotency-Key") != ""}
	deadline := time.Now().Add(f.masterWait)
	if d, ok := r.Context().Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var failed masterAt // the master that failed this request
	held := false
	for ; ; rt.n++ {
		to, ok := f.nextMaster(self, failed)
		if !ok {
			opened := f.opened.wait() // taken before IsMaster: an opening in between still wakes the hold
			if f.c.IsMaster() {       // this board took over while the request waited
				f.dispatch(w, in, time.Now())
				return
			}
			if !held {
				held = true
				f.m.holding.Inc()
				defer f.m.holding.Dec()
			}
			if !holdUntil(r.Context(), deadline, opened) {
				f.noMaster(w, r, failed.name)
				return
			}
			continue
		}
		tok := f.marks.SignString(KindVia, to.epoch, to.name, in.via())
		err := f.forward(w, r, &fwd{target: to.name, addr: to.addr, header: HeaderVia, token: tok, body: in.body})
		if err == nil {
			f.m.forwarded.WithLabelValues(to.name, OutcomeOK).Inc()
			if held {
				f.m.held.WithLabelValues(OutcomeOK).Inc()
			}
			return
		}
		rt.canceled = r.Context().Err() != nil
		v := tryAgain(rt, err)
		if v != answerCanceled {
			f.m.errors.WithLabelValues(to.name).Inc()
		}
		if v != sendAgain {
			if v != answerCanceled {
				f.log.Warn("dispatch: master did not answer", "master", to.name, "addr", to.addr, "err", err)
			}
			f.answerFailure(w, v, to.name, err)
			return
		}
		f.m.forwarded.WithLabelValues(to.name, OutcomeRetried).Inc()
		f.log.Info("dispatch: master unreachable; holding the request for the next master",
			"master", to.name, "addr", to.addr, "err", err, "path", r.URL.Path, "keyed", rt.keyed)
		failed = to
	}
}

// takingOver reports whether the cluster names this board master while
// IsMaster still says no (its queue is not open yet): a request passed here
// by a follower then waits for the queue like any other, it is no loop.
func (f *Front) takingOver(self string) bool {
	name, _, ok := f.c.Master()
	return ok && name == self
}

// masterAt is a master as a follower reaches it.
type masterAt struct {
	name, addr string
	epoch      uint64
}

// nextMaster is the master to send a request to: the one known now, if it
// is another board with an address and not the one that failed this
// request (the same board at a new epoch is a new master).
func (f *Front) nextMaster(self string, failed masterAt) (masterAt, bool) {
	name, addr, ok := f.c.Master()
	epoch := f.c.Epoch()
	if !ok || name == "" || addr == "" || name == self || (name == failed.name && epoch == failed.epoch) {
		return masterAt{}, false
	}
	return masterAt{name: name, addr: addr, epoch: epoch}, true
}

// noMaster answers a request that found no master to take it in time.
func (f *Front) noMaster(w http.ResponseWriter, r *http.Request, failed string) {
	f.m.held.WithLabelValues(OutcomeError).Inc()
	switch {
	case r.Context().Err() != nil:
		unavailable(w, f.retry, "dispatch: client left while waiting for a master")
	case failed != "":
		unavailable(w, f.retry, "dispatch: master %s unreachable and no new master within %v", failed, f.masterWait)
	default:
		unavailable(w, f.retry, "dispatch: no master known (election in progress)")
	}
}
