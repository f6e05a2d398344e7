package place

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/ews-firmware/ews/sched"
)

// The master's end of the placement channel (frame.go): each place
// frame is a request of a follower that takes the master's queue exactly
// like one the master received itself (admit, Acquire: class, priority,
// device waits, the policy's least-connections view), and holds its slot
// until the follower's end frame, or until the channel closes. So the
// ticket counts on the chosen board while the follower forwards the
// request there, as the master's own tickets do (invariant 3).

// Queue is the master's side of its channels: the dispatcher that places
// their requests. Safe for concurrent use.
type Queue interface {
	// Dispatcher is the master's dispatcher; nil when this board is not
	// master (or its queue is not open): a place frame is then answered
	// "not master" and leases are revoked.
	Dispatcher() *sched.Dispatcher
	Epoch() uint64 // the master's epoch, in which its placements are signed
}

// Serve serves one follower's channel on nc (already upgraded; br holds
// what arrived behind the upgrade) until it closes, then gives back every
// slot placed or leased on it. board names the follower (its leases are
// of that board); handsOn, that it named HeaderHandOn in its upgrade;
// served is called for each answer sent.
func Serve(ctx context.Context, nc net.Conn, br *bufio.Reader, board string, handsOn bool, q Queue, served func()) error {
	s := &server{q: q, served: served, live: map[uint32]*placement{}}
	s.ls.board, s.ls.handsOn = board, handsOn
	s.w.nc = nc
	s.ctx, s.cancel = context.WithCancel(ctx)
	return s.serve(br, nc)
}

// server is one follower's channel on the master.
type server struct {
	q      Queue
	served func()
	w      frameWriter
	ctx    context.Context // ends with the channel: every Acquire waiting on it gives up
	cancel context.CancelFunc
	wg     sync.WaitGroup // the placements' goroutines

	mu   sync.Mutex
	live map[uint32]*placement // by the follower's id: waiting or placed
	ls   masterLease           // the follower's lease (lease.go)
}

// placement is one request of the follower while the master holds it.
type placement struct {
	cancel context.CancelFunc
	t      sched.Ticket
	placed bool // t is its slot
	ended  bool // the follower ended it, or the channel closed
}

// maxLive bounds a channel's placements waiting or placed at once: a
// follower has no more requests than its connections.
const maxLive = 1 << 14

// serve reads frames until the channel fails, then gives back every slot
// placed on it and waits for the placements still waiting to give up.
func (s *server) serve(br *bufio.Reader, nc net.Conn) error {
	defer s.close()
	var in io.Reader = idleReader{nc}
	if n := br.Buffered(); n > 0 { // sent right behind the upgrade
		early, _ := br.Peek(n)
		in = io.MultiReader(bytes.NewReader(early), in)
	}
	rd := newFrameReader(in)
	rd.drained = s.w.release
	for {
		typ, p, err := rd.next()
		if err != nil {
			return err
		}
		s.w.hold() // the answers to what this read brought leave together (frameWriter.hold)
		switch typ {
		case framePlace:
			q := &placeReq{}
			if err := decodePlace(p, q); err != nil {
				return err
			}
			if err := s.start(q); err != nil {
				return err
			}
		case frameEnd:
			id, err := decodeEnd(p)
			if err != nil {
				return err
			}
			s.end(id)
		case frameLease:
			n, err := decodeCount(p)
			if err != nil {
				return err
			}
			s.lease(n)
		case frameReturn:
			n, err := decodeCount(p)
			if err != nil {
				return err
			}
			if err := s.giveBack(n); err != nil {
				return err
			}
		case frameRan:
			var r ranReq
			if err := decodeRan(p, &r); err != nil {
				return err
			}
			s.ran(&r)
		case framePing:
			if len(p) != 0 {
				return errFrame
			}
			if err := s.w.sendEmpty(framePong); err != nil {
				return err
			}
		default:
			return errFrame
		}
	}
}

// start takes q into the master's queue: placed at once in the reader
// when a board can take it (sched.Dispatcher.TryAcquire), else in a
// goroutine of its own that waits in Acquire.
func (s *server) start(q *placeReq) error {
	s.mu.Lock()
	if _, dup := s.live[q.id]; dup || len(s.live) >= maxLive {
		s.mu.Unlock()
		return errFrame
	}
	p := &placement{}
	s.live[q.id] = p
	s.mu.Unlock()
	d := s.q.Dispatcher()
	if d == nil {
		s.mu.Lock()
		delete(s.live, q.id)
		s.mu.Unlock()
		s.answer(&placeAns{id: q.id, code: placeNotMaster})
		return nil
	}
	req := admit(d, q)
	req.Entry = s.ls.board // ties to the follower: no second hop there
	if t, ok := d.TryAcquire(req); ok {
		s.placed(q.id, p, t)
		return nil
	}
	id := q.id
	req.Started = func(t sched.Ticket) { s.placed(id, p, t) } // answered by whoever freed the slot
	// end frames are read by this goroutine: none can come before cancel is set
	var ctx context.Context
	ctx, p.cancel = context.WithCancel(s.ctx)
	s.wg.Add(1)
	go s.place(ctx, q.id, p, d, req)
	return nil
}

// place waits in the queue for a slot for request id and answers the follower.
func (s *server) place(ctx context.Context, id uint32, p *placement, d *sched.Dispatcher, req *sched.Request) {
	defer s.wg.Done()
	defer p.cancel()
	t, err := d.Acquire(ctx, req)
	s.mu.Lock()
	if p.ended || ctx.Err() != nil { // the follower ended it, or the channel closed, while it waited
		delete(s.live, id)
		s.mu.Unlock()
		if err == nil {
			t.Done()
		}
		return
	}
	if err != nil {
		delete(s.live, id) // a shed request has no end frame
		s.mu.Unlock()
		a := placeAns{id: id, code: placeNotMaster}
		var shed *sched.ErrShed
		if errors.As(err, &shed) {
			a.code, a.class, a.reason = placeShed, shed.Class, shed.Reason
			if shed.RetryAfter > 0 {
				a.retry = uint32(shed.RetryAfter / time.Millisecond)
			}
		}
		s.answer(&a)
		return
	}
	if p.placed { // Started answered it already
		s.mu.Unlock()
		return
	}
	p.t, p.placed = t, true
	s.mu.Unlock()
	s.answer(&placeAns{id: id, placed: true, epoch: s.q.Epoch(), board: t.Board, addr: t.Addr})
}

// placed answers request id placed on t's board: at once in the reader
// (TryAcquire), or once it waited, by the goroutine that freed its slot
// (sched.Request.Started: the end frame's reader, the master's own request
// ending), unless place's goroutine, back from Acquire, answered first.
// Nothing is answered for a request the follower ended meanwhile: place
// gives its slot back.
func (s *server) placed(id uint32, p *placement, t sched.Ticket) {
	s.mu.Lock()
	if p.ended || p.placed {
		s.mu.Unlock()
		return
	}
	p.t, p.placed = t, true
	s.mu.Unlock()
	s.answer(&placeAns{id: id, placed: true, epoch: s.q.Epoch(), board: t.Board, addr: t.Addr})
}

// answer sends a; a frame that cannot be written ends the channel (its
// reader fails next and serve closes everything).
func (s *server) answer(a *placeAns) {
	s.served()
	s.w.mu.Lock()
	buf, ok := appendAns(s.w.buf, a)
	if !ok { // a board name or address over the wire's limits: not placed here
		a.placed, a.code, a.class, a.reason = false, placeNotMaster, "", ""
		buf, _ = appendAns(s.w.buf, a)
	}
	s.w.buf = buf
	if s.w.flush() != nil {
		s.w.nc.Close()
	}
}

// end is the follower's end of request id: its slot goes back, or its
// wait in the queue ends.
func (s *server) end(id uint32) {
	s.mu.Lock()
	p := s.live[id]
	if p == nil { // shed, or ended twice: nothing held
		s.mu.Unlock()
		return
	}
	p.ended = true
	if !p.placed {
		s.mu.Unlock()
		if p.cancel != nil {
			p.cancel() // place sees ended and lets go
		}
		return
	}
	delete(s.live, id)
	s.mu.Unlock()
	p.t.Done()
}

// close ends every placement of a closed channel: slots go back, waits
// end; it returns when no placement goroutine is left.
func (s *server) close() {
	s.cancel()
	s.mu.Lock()
	var held []sched.Ticket
	for id, p := range s.live {
		p.ended = true
		if p.placed {
			held = append(held, p.t)
			delete(s.live, id)
		}
	}
	s.mu.Unlock()
	for _, t := range held {
		t.Done()
	}
	s.wg.Wait()
	s.endLease()
}

// admit describes a follower's request to the dispatcher, as the master
// does a request it received: the class and device by this master's
// rules, the pinned and sticky boards and the client as the follower
// found them.
func admit(d *sched.Dispatcher, q *placeReq) *sched.Request {
	req := &sched.Request{
		Class:  d.Classifier().Classify(q.method, q.path),
		Path:   q.path,
		Client: q.client,
		Board:  q.board,
		Sticky: q.sticky,
	}
	if len(q.exclude) > 0 {
		req.Exclude = q.exclude
	}
	req.Device, req.Read = sched.DeviceOf(q.method, q.path)
	return req
}

// Set is the placement channels open on a board (either end), closed
// with the board's front door. The zero Set is ready.
type Set struct {
	mu     sync.Mutex
	m      map[net.Conn]struct{}
	closed bool
}

func (c *Set) Add(nc net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		nc.Close()
		return
	}
	if c.m == nil {
		c.m = map[net.Conn]struct{}{}
	}
	c.m[nc] = struct{}{}
}

func (c *Set) Remove(nc net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, nc)
}

// Close closes every channel and any added later.
func (c *Set) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for nc := range c.m {
		nc.Close()
	}
	c.m = nil
}
