package dispatch

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/sched"
)

// redirectTo answers 307 to the chosen board with the mark in the query
// (a browser does not resend custom headers), and the client's assignment
// to that board (assign.go) in the query and the header X-Ews-Assign. The master never sees the
// request finish, so it keeps the slot for the hold time (one heartbeat)
// and then gives it back: by then the board's own report counts the
// request in its linknum (invariant 3), and the dispatcher's estimate
// max(own tickets, report + own tickets since) stays right. Giving the slot
// back at once would let a burst overfill a board between reports; holding
// it until the board reports completion would need a completion message the
// reports do not carry.
func (f *Front) redirectTo(w http.ResponseWriter, in *inbound, t sched.Ticket, start time.Time) {
	r, client := in.r, in.client
	bind := in.bind                     // assign adds to its query
	f.assign(w, t.Board, client, &bind) // redirect once, then direct (assign.go)
	tok := f.marks.SignString(KindRedirect, f.c.Epoch(), t.Board, &bind)
	var b strings.Builder
	q := bind.Query // the query without the mark, with the assignment
	b.Grow(len(f.cfg.scheme) + 3 + len(t.Addr) + len(r.URL.Path) + len(q) + len(QueryMark) + len(tok) + 8)
	b.WriteString(f.cfg.scheme)
	b.WriteString("://")
	b.WriteString(t.Addr)
	b.WriteString(r.URL.EscapedPath())
	b.WriteByte('?')
	if q != "" {
		b.WriteString(q)
		b.WriteByte('&')
	}
	b.WriteString(QueryMark)
	b.WriteByte('=')
	b.WriteString(tok)
	loc := b.String()
	h := w.Header()
	h.Set("Location", loc)
	h.Set("Cache-Control", "no-store")
	f.m.added.Update(time.Since(start).Seconds())
	writeJSON(w, http.StatusTemporaryRedirect, map[string]string{"location": loc, "board": t.Board})
	f.m.forwarded.WithLabelValues(t.Board, OutcomeRedirect).Inc()
	f.master.holds.add(t)
}

// holds keeps the tickets of redirected requests until their hold ends.
type holds struct {
	d      time.Duration
	mu     sync.Mutex
	m      map[*hold]struct{}
	closed bool
}

type hold struct {
	t     sched.Ticket
	timer *time.Timer
}

func (h *holds) init(d time.Duration) {
	if d <= 0 {
		d = DefaultRedirectHold
	}
	h.d, h.m = d, map[*hold]struct{}{}
}

// add holds t for the hold time, then calls t.Done.
func (h *holds) add(t sched.Ticket) {
	x := &hold{t: t}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		t.Done()
		return
	}
	h.m[x] = struct{}{}
	x.timer = time.AfterFunc(h.d, func() { h.release(x) })
	h.mu.Unlock()
}

func (h *holds) release(x *hold) {
	h.mu.Lock()
	_, ok := h.m[x]
	delete(h.m, x)
	h.mu.Unlock()
	if ok {
		x.t.Done()
	}
}

// pending is the number of tickets held now.
func (h *holds) pending() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m)
}

// close gives every held ticket back now; later adds are Done at once.
func (h *holds) close() {
	h.mu.Lock()
	h.closed = true
	xs := make([]*hold, 0, len(h.m))
	for x := range h.m {
		x.timer.Stop()
		xs = append(xs, x)
	}
	clear(h.m)
	h.mu.Unlock()
	for _, x := range xs {
		x.t.Done()
	}
}
