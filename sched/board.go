package sched

import (
	"net/netip"
	"time"

	"github.com/ews-firmware/ews/state/row"
)

// Load is a board's dynamic load as it reports it (row.Load): each a
// fraction where 1.0 means fully used (cpu 0.5 = 50%). Bad values (NaN,
// negative, infinite) are tolerated: see clean.
type Load = row.Load

// Board is the Dispatcher's record of one board, what the policies choose
// from: Update fills the first fields from the board's row.Board row,
// the Dispatcher keeps the rest (linknum estimate, tickets, eligibility).
type Board struct {
	Name     string
	Rank     int
	Addr     string // the board's HTTP address, passed through for the caller
	Capacity int    // slots: requests it runs at once
	Weight   float64
	Running  bool // runstate running with an HTTP address; anything else gets no new requests
	// Load is the load the policies read: Reported, with the placements
	// since the report added to its cpu under Config.Stale "placed"
	// (fresh); as reported otherwise, and while a policy's Observe runs.
	Load     Load
	Reported Load          // the board's figures as its last row carried them
	RT       time.Duration // response time measured by the master's probes (Options.RT); 0 = unknown

	// Linknum is the number of requests in flight on the board. In
	// Dispatcher.Update it is the board's own report (the truth, invariant
	// 3; negative = no report yet); the policies see the Dispatcher's
	// estimate max(own tickets, report + own tickets since the report).
	Linknum int

	// ReqLoad is the sum of the class weights of the board's in-flight
	// requests (qsc's request load); kept by the Dispatcher with Linknum,
	// as the weighted count of the same tickets.
	ReqLoad float64

	// kept by the Dispatcher
	idx      int       // index in Dispatcher.boards, stable for its life: ID
	seen     uint64    // Update generation that last listed it
	present  bool      // listed by the last Update
	held     bool      // the policy's Observe holds it from new requests (integrated: overloaded)
	local    int       // tickets of this Dispatcher in flight on it
	reported int       // the board's last report; -1 none
	cost     cpuCost   // the cpu a request in flight takes on it, learned from its reports (stale_learn.go)
	flights  flightAvg // its linknum averaged over each report interval (stale_learn.go)
	atReport int       // local when that report was applied (Options.Proxy: plus finished)
	heard    time.Time // Options.Proxy: when that report was heard (the row's LastSeenMs)
	finished int       // Options.Proxy: tickets on it that finished since that report
	elig     bool      // eligible in the current dispatch round
	// when a first-class request pinned to it for no device last arrived,
	// and the devices such requests operated on (headroom_pinned.go)
	topPinned time.Time
	pinDevs   []pinDev
}

// ID is the board's index in its Dispatcher: 0, 1, ... in the order the
// boards were first seen, stable while the Dispatcher lives. Policies key
// their per-board state by it.
func (b *Board) ID() int { return b.idx }

// available says whether the board may take one more request.
func (b *Board) available() bool {
	return b.Running && !b.held && b.Capacity > 0 && b.Linknum < b.Capacity
}

// unlimited says whether the board may take a request when capacity is a
// size, not a limit (Options.Unlimited).
func (b *Board) unlimited() bool {
	return b.Running && !b.held && b.Capacity > 0
}

// Request is what the queue and the policies know of one client request.
type Request struct {
	Class  int        // index from Classifier.Classify; out of range = last class
	Board  string     // pinned board (device wired to it); "" or "any": every board
	Path   string     // URL path: dest-hash key
	Client netip.Addr // client address: source-hash, source-ip stickiness, proximity
	Sticky string     // board named by the client's sticky cookie, if any
	// Exclude names boards the request must not run on (a retry after
	// its board failed); nil in the common case costs nothing.
	Exclude []string
	// Device is the device the request operates (DeviceOf); one of
	// Config.Devices waits in the queue while that device is busy.
	Device string
	Read   bool // a read of Device: it may share the device read under way
	// Entry is the board the client reached, when a follower asks the
	// master to place its request (node/dispatch's fast entry): least
	// connections gives it the ties, since there it runs without another
	// hop. "": none.
	Entry string
	// Started, when set, is given the ticket of this request once it
	// waited in the queue and a slot freed: by the goroutine that freed it
	// (Ticket.Done of another request; after Update, a goroutine of its
	// own), once the Dispatcher's lock is released. The master answers a
	// follower's placement there, without waiting for the goroutine in
	// Acquire to be scheduled (node/dispatch/place). Acquire still returns
	// the same ticket; Done it once (Done is idempotent). It must not block
	// for long and is not called for a request placed at once or refused.
	Started func(Ticket)
}

// excludes reports whether the request may not run on the named board.
func (r *Request) excludes(name string) bool {
	for _, n := range r.Exclude {
		if n == name {
			return true
		}
	}
	return false
}

// pinned reports whether the request may run on one board only.
func (r *Request) pinned() bool { return r.Board != "" && r.Board != "any" }
