package dispatch

import (
	"net/http"
	"time"

	"github.com/ews-firmware/ews/node/dispatch/place"
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
	leaseable := f.leaseable(in)
	if leaseable && pc.TakeLease() { // place/lease.go
		f.placing.pm.lease.Inc()
		pc.Ran(r.Method, r.URL.Path) // the master's per-class figures
		hw := &heldWriter{w: w}
		f.runLeased(hw, r, pc)
		hw.finish() // the slot is free before the client reads (not reached when the handler aborted)
		return
	}
	f.route(w, &route{in: *in, start: time.Now()}, &chanPlacer{f: f, pc: pc, leaseable: leaseable})
	if leaseable {
		pc.AskLease()
	}
}

// runLeased runs r here on a slot of the lease taken for it, its answer
// held (heldWriter) so the slot frees, or passes to a request waiting for
// one (place.Chan.FreeLease), before the client reads it, as a placed
// request's does.
func (f *Front) runLeased(w http.ResponseWriter, r *http.Request, pc *place.Chan) {
	defer pc.FreeLease()
	f.runLocal(w, r)
}

// leaseable reports whether in's request may run here on a slot the master leased
// this board: no device of the master's device queues, not pinned to
// another board, no sticky cookie for the policy to read, and this board
// serving.
func (f *Front) leaseable(in *inbound) bool {
	if f.cfg.sticky || (f.clients.serving != nil && !f.clients.serving()) {
		return false
	}
	return in.dev == "" && (in.pin == "" || in.pin == "any" || in.pin == in.self)
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
