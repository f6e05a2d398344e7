package place

import (
	"time"

	"github.com/ews-firmware/ews/sched"
)

// Leases (docs/notes/fast-entry.md): while the master's queue is empty
// and its policy is least connections, it grants a follower a few slots of
// the follower's own board, as tickets it holds in its dispatcher (so they
// count on that board, invariant 4, and every other request sees them). The
// follower runs requests that entered it on those slots without a
// placement round trip, as the master runs its own requests on itself. The
// moment a request waits in the master's queue the master revokes the
// leases: the followers give every free slot back at once and each busy
// one as its request ends, and place every request again, so priorities
// and least connections decide under load. A follower gives back slots it
// has not used for leaseIdle; a closed channel gives back all of them.
const (
	LeaseBatch = 8                      // slots a follower asks for at a time
	leaseWatch = 10 * time.Millisecond  // how often the master looks at its queue while it has leases out
	leaseIdle  = 200 * time.Millisecond // a follower gives back slots it did not use for this long
	leaseRetry = 20 * time.Millisecond  // a follower refused a lease asks again after this
)

// --- the master's end ---

// masterLease is a channel's lease on the master.
type masterLease struct {
	board    string         // the follower's board
	handsOn  bool           // the follower hands freed slots to its waiting placements (HeaderHandOn)
	tickets  []sched.Ticket // its slots
	revoked  bool           // the follower was told to run nothing on it
	watching bool           // the watch goroutine runs
}

// lease answers a follower's lease frame: up to n slots of its board, as
// many as the dispatcher grants (sched.Dispatcher.Lease decides).
func (s *server) lease(n int) {
	var got []sched.Ticket
	s.mu.Lock()
	board, revoked := s.ls.board, s.ls.revoked
	s.mu.Unlock()
	if d := s.q.Dispatcher(); d != nil && board != "" && !revoked {
		got = d.Lease(board, n)
	}
	s.mu.Lock()
	s.ls.tickets = append(s.ls.tickets, got...)
	watch := len(s.ls.tickets) > 0 && !s.ls.watching
	if watch {
		s.ls.watching = true
		s.wg.Add(1)
	}
	s.mu.Unlock()
	s.sendCount(frameGrant, uint16(len(got)))
	if watch {
		go s.watch()
	}
}

// watch revokes the leases when a request waits in the queue (or this
// board is master no more), and lifts the revocation when the queue is
// empty again; it ends when no slot is leased and nothing is revoked.
func (s *server) watch() {
	defer s.wg.Done()
	t := time.NewTicker(leaseWatch)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		d := s.q.Dispatcher()
		stop := d == nil || s.revokeFor(d)
		s.mu.Lock()
		change := stop != s.ls.revoked
		s.ls.revoked = stop
		end := !stop && len(s.ls.tickets) == 0
		if end {
			s.ls.watching = false
		}
		s.mu.Unlock()
		if change {
			s.sendRevoke(stop)
		}
		if end {
			return
		}
	}
}

// revokeFor reports whether d's queue calls for revoking the lease: a
// request waits that the lease could keep a slot from. For a follower
// that hands its freed slots on (HeaderHandOn), only one that is not its
// own of the lowest class (sched.Dispatcher.QueuedBesides); for an older
// one, any. The board and handsOn are set once, before the first frame.
func (s *server) revokeFor(d *sched.Dispatcher) bool {
	if s.ls.handsOn {
		return d.QueuedBesides(s.ls.board)
	}
	return d.Queued()
}

// giveBack is the follower's return frame: n of its slots go back.
func (s *server) giveBack(n int) error {
	s.mu.Lock()
	if n > len(s.ls.tickets) {
		s.mu.Unlock()
		return errFrame
	}
	back := s.ls.tickets[len(s.ls.tickets)-n:]
	s.ls.tickets = s.ls.tickets[:len(s.ls.tickets)-n]
	done := append([]sched.Ticket(nil), back...)
	clear(back)
	s.mu.Unlock()
	for _, t := range done {
		t.Done()
	}
	return nil
}

// endLease gives back every leased slot of a closed channel.
func (s *server) endLease() {
	s.mu.Lock()
	done := s.ls.tickets
	s.ls.tickets = nil
	s.mu.Unlock()
	for _, t := range done {
		t.Done()
	}
}

// ran is the follower's ran frame: what it ran on its lease counts in the
// dispatcher's per-class figures, classified by this master's rules, as if
// each had been placed (sched.Dispatcher.RanOnLease).
func (s *server) ran(r *ranReq) {
	d := s.q.Dispatcher()
	if d == nil || s.ls.board == "" { // the board is set once, before the first frame
		return
	}
	d.RanOnLease(s.ls.board, d.Classifier().Classify(r.method, r.path), int(r.n))
}

func (s *server) sendCount(typ byte, n uint16) {
	s.w.mu.Lock()
	s.w.buf = appendCount(s.w.buf, typ, n)
	if s.w.flush() != nil {
		s.w.nc.Close()
	}
}

func (s *server) sendRevoke(on bool) {
	b := byte(0)
	if on {
		b = 1
	}
	s.w.mu.Lock()
	s.w.buf = append(s.w.buf, 0, 2, frameRevoke, b)
	if s.w.flush() != nil {
		s.w.nc.Close()
	}
}

// --- the follower's end ---

// followerLease is a follower's lease on its channel (under Chan.mu).
type followerLease struct {
	granted  int // slots held
	inUse    int // of them running a request now
	asking   bool
	revoked  bool
	lastUse  time.Time
	askAfter time.Time         // refused: not before then
	ran      map[ranKey]uint32 // run on the lease since the last ran frames
	waiting  []uint32          // leaseable placements waiting for the master, oldest first (Chan.leaseQ)
}

// ranKey is a method and path run on the lease (the master classifies it).
type ranKey struct{ method, path string }

// maxRanKeys bounds the method and paths counted between two ran flushes:
// one more sends the counts at once.
const maxRanKeys = 32

// TakeLease takes a free slot of the lease for a request that entered
// here; false: none, place the request (and askLease after it).
func (c *Chan) TakeLease() bool {
	c.mu.Lock()
	l := &c.ls
	if c.err != nil || l.revoked || l.inUse >= l.granted {
		c.mu.Unlock()
		return false
	}
	l.inUse++
	l.lastUse = time.Now()
	c.mu.Unlock()
	return true
}

// Ran counts a request that runs on a slot of the lease, for the master's
// per-class figures: the counts go in ran frames each leaseIdle/2 (with the
// idle slots' return) or once maxRanKeys method and paths are counted, and
// only to a master that takes them (HeaderRan). Counts not sent when the
// channel closes are lost (a figure, never a slot).
func (c *Chan) Ran(method, path string) {
	if !c.ranOK {
		return
	}
	c.mu.Lock()
	if c.ls.ran == nil {
		c.ls.ran = make(map[ranKey]uint32, maxRanKeys)
	}
	c.ls.ran[ranKey{method, path}]++
	full := len(c.ls.ran) >= maxRanKeys
	c.mu.Unlock()
	if full {
		c.sendRan()
	}
}

// sendRan sends the counts of Ran in ran frames, one per method and path.
func (c *Chan) sendRan() {
	c.mu.Lock()
	ran := c.ls.ran
	c.ls.ran = nil
	closed := c.err != nil
	c.mu.Unlock()
	if len(ran) == 0 || closed {
		return
	}
	c.w.mu.Lock()
	for k, n := range ran {
		c.w.buf, _ = appendRan(c.w.buf, &ranReq{n: n, method: k.method, path: k.path}) // over the wire's limits: left out
	}
	if err := c.w.flush(); err != nil {
		c.close(err)
	}
}

// AskLease asks the master for more slots, unless a question is under way,
// the lease is revoked, or the master refused one a moment ago. A request
// that found no free slot calls it once it was placed and ended, so its
// own slot is free again when the master weighs the question.
func (c *Chan) AskLease() {
	now := time.Now()
	c.mu.Lock()
	l := &c.ls
	ask := c.err == nil && !l.asking && !l.revoked && now.After(l.askAfter)
	if ask {
		l.asking = true
	}
	c.mu.Unlock()
	if ask {
		c.sendCount(frameLease, LeaseBatch)
	}
}

// FreeLease gives a slot taken with TakeLease (or handed with
// Answer.Leased) back to the lease, or to the master when the lease is
// revoked. While a leaseable placement of this follower waits in the
// master's queue, the slot goes to the oldest such instead (handOn): the
// master keeps the lease only while its queue holds nothing but this
// follower's own requests of the lowest class
// (sched.Dispatcher.QueuedBesides), so that slot, freed to the master,
// would have gone to one of them anyway; here it takes no round trip, and
// the follower's own requests keep their order.
func (c *Chan) FreeLease() {
	c.mu.Lock()
	if id, ok := c.handOn(); ok {
		c.mu.Unlock()
		c.End(id) // the master lets its wait go (or the slot it placed it on meanwhile)
		return
	}
	c.ls.inUse--
	back := c.ls.revoked && c.err == nil
	if back {
		c.ls.granted--
	}
	c.mu.Unlock()
	if back {
		c.sendCount(frameReturn, 1)
	}
}

// granted is the master's grant frame: the new slots go first to the
// leaseable placements waiting (handOn), oldest first.
func (c *Chan) granted(n int) {
	c.mu.Lock()
	c.ls.asking = false
	c.ls.granted += n
	if n == 0 {
		c.ls.askAfter = time.Now().Add(leaseRetry)
	} else {
		c.ls.lastUse = time.Now()
	}
	var ended []uint32
	for c.ls.inUse < c.ls.granted {
		c.ls.inUse++
		id, ok := c.handOn()
		if !ok {
			c.ls.inUse--
			break
		}
		ended = append(ended, id)
	}
	c.mu.Unlock()
	for _, id := range ended {
		c.End(id)
	}
}

// queueLeaseable notes placement id as one a slot of the lease may take
// (Request.Leaseable). Under c.mu. The ids grow, so the list is oldest
// first; ids answered meanwhile are dropped when met, and the list is
// compacted when they outnumber the waiting ones.
func (c *Chan) queueLeaseable(id uint32) {
	if len(c.ls.waiting) > 2*len(c.pending)+16 {
		kept := c.ls.waiting[:0]
		for _, w := range c.ls.waiting {
			if _, ok := c.pending[w]; ok {
				kept = append(kept, w)
			}
		}
		clear(c.ls.waiting[len(kept):])
		c.ls.waiting = kept
	}
	c.ls.waiting = append(c.ls.waiting, id)
}

// handOn gives a busy slot of the lease, about to free, to the oldest
// leaseable placement still waiting for the master's answer: its request
// gets Answer.Leased and the slot stays in use. false: none waits, the
// lease is revoked, or the channel closed. Under c.mu; the caller sends
// the end frame of the id it returns.
func (c *Chan) handOn() (uint32, bool) {
	if c.ls.revoked || c.err != nil {
		return 0, false
	}
	for len(c.ls.waiting) > 0 {
		id := c.ls.waiting[0]
		c.ls.waiting = c.ls.waiting[1:]
		ch, ok := c.pending[id]
		if !ok {
			continue // answered, or its request left
		}
		delete(c.pending, id)
		ch <- placeAns{id: id, leased: true} // cap 1, and no one else sends once it left pending
		c.ls.lastUse = time.Now()
		return id, true
	}
	return 0, false
}

// revoked is the master's revoke frame: on, every free slot goes back now
// and each busy one when its request ends.
func (c *Chan) revoked(on bool) {
	c.mu.Lock()
	c.ls.revoked = on
	free := 0
	if on {
		free = c.ls.granted - c.ls.inUse
		c.ls.granted = c.ls.inUse
	}
	c.mu.Unlock()
	if free > 0 {
		c.sendCount(frameReturn, uint16(free))
	}
}

// returnIdle gives back the free slots of a lease unused for leaseIdle.
func (c *Chan) returnIdle(now time.Time) {
	c.mu.Lock()
	free := 0
	if !c.ls.revoked && c.ls.granted > c.ls.inUse && now.Sub(c.ls.lastUse) >= leaseIdle {
		free = c.ls.granted - c.ls.inUse
		c.ls.granted = c.ls.inUse
	}
	c.mu.Unlock()
	if free > 0 {
		c.sendCount(frameReturn, uint16(free))
	}
}

func (c *Chan) sendCount(typ byte, n uint16) {
	c.w.mu.Lock()
	c.w.buf = appendCount(c.w.buf, typ, n)
	if err := c.w.flush(); err != nil {
		c.close(err)
	}
}
