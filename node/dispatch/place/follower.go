package place

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/sched"
)

// The follower's end of the placement channel (frame.go): one
// connection to the master at a time, opened by the first request that
// needs it, shared by every request, closed when the master changes.

// How long a follower stops asking a master that did not open a channel.
const (
	OffOld      = 10 * time.Second // it answered the upgrade with something else: an older build
	OffError    = time.Second      // it could not be reached or failed the upgrade
	DialTimeout = 2 * time.Second  // dial and upgrade
)

// ErrChannelDown: the placement channel closed before the master answered;
// the request did not run anywhere.
var ErrChannelDown = errors.New("place: the placement channel to the master closed")

// Master is a master as a follower reaches it (the same board at a new
// epoch is a new master).
type Master struct {
	Name, Addr string
	Epoch      uint64
}

// Follower holds a follower's channel to its master. Set Dial, Log and
// Conns before the first Channel.
type Follower struct {
	// Dial opens a connection to master to, upgraded to the channel's
	// protocol; ran reports that the master takes ran frames (HeaderRan);
	// off is how long not to ask that master again after an error (OffOld:
	// an older build; OffError).
	Dial  func(to Master) (nc net.Conn, ran bool, off time.Duration, err error)
	Log   *slog.Logger
	Conns *Set // the channels open on this board, closed with it

	mu       sync.Mutex
	cur      *Chan
	dialing  chan struct{} // closed when the dial under way ends
	offTo    Master        // the master not asked until offUntil
	offUntil time.Time
	closed   bool
}

// Chan is an open channel to one master. Its methods are safe for
// concurrent use.
type Chan struct {
	to Master
	nc net.Conn
	w  frameWriter

	mu      sync.Mutex
	pending map[uint32]chan placeAns // waiting for the master's answer
	next    uint32
	err     error         // why it closed
	done    chan struct{} // closed when it closed
	ls      followerLease // slots of this board the master leased it (lease.go)
	ranOK   bool          // the master takes ran frames; set before c is shared
	nagle   *time.Timer   // flushes place frames held behind others (placeHold)
	armed   atomic.Bool   // nagle runs: a held frame waits at most placeHold, never reset to later
}

// placeHold bounds how long a place frame may wait in the writer for
// another frame's write: while placements of this follower already wait
// in the master's queue, a new one would wait behind them anyway, and
// riding on the next end frame (a slot freed) costs it no syscall of its
// own. A place for a device (control) never waits.
const placeHold = time.Millisecond

// Channel returns the open channel to master to, opening one if none is
// (the first caller dials, the others wait for it), or nil when the
// master did not open one lately: the request then takes the path through
// the master.
func (p *Follower) Channel(ctx context.Context, to Master) *Chan {
	p.mu.Lock()
	for {
		switch c := p.cur; {
		case p.closed:
			p.mu.Unlock()
			return nil
		case c != nil && c.to == to && c.alive():
			p.mu.Unlock()
			return c
		case p.offTo == to && time.Now().Before(p.offUntil):
			p.mu.Unlock()
			return nil
		case p.dialing != nil:
			wait := p.dialing
			p.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return nil
			}
			p.mu.Lock()
			continue
		}
		wait := make(chan struct{})
		p.dialing = wait
		p.mu.Unlock()
		nc, ranOK, off, err := p.Dial(to)
		p.mu.Lock()
		p.dialing = nil
		close(wait)
		if err != nil {
			p.offTo, p.offUntil = to, time.Now().Add(off)
			p.Log.Info("place: no placement channel to the master; requests go through it", "master", to.Name, "err", err, "retry_in", off)
			continue // the loop returns nil: off now
		}
		c := &Chan{to: to, nc: nc, pending: map[uint32]chan placeAns{}, done: make(chan struct{}), ranOK: ranOK}
		c.w.nc = nc
		c.nagle = time.AfterFunc(time.Hour, c.flushHeld)
		c.nagle.Stop()
		p.Conns.Add(nc)
		if p.closed {
			p.mu.Unlock()
			c.close(ErrChannelDown)
			return nil
		}
		old := p.cur
		p.cur = c
		p.mu.Unlock()
		if old != nil {
			old.close(ErrChannelDown) // another master, or a dead channel
		}
		go c.read(p.Log)
		go c.ping()
		return c
	}
}

// Close closes the channel and opens no other.
func (p *Follower) Close() {
	p.mu.Lock()
	p.closed = true
	c := p.cur
	p.cur = nil
	p.mu.Unlock()
	if c != nil {
		c.close(ErrChannelDown)
	}
}

// Lease is the current channel's lease: slots held and in use, and
// whether the master revoked it (zero without a channel).
func (p *Follower) Lease() (granted, inUse int, revoked bool) {
	p.mu.Lock()
	c := p.cur
	p.mu.Unlock()
	if c == nil {
		return 0, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ls.granted, c.ls.inUse, c.ls.revoked
}

// To is the master c is open to.
func (c *Chan) To() Master { return c.to }

// alive reports whether c is still open.
func (c *Chan) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// close closes c once: every request waiting for an answer gets err.
func (c *Chan) close(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.pending = nil
	close(c.done)
	c.mu.Unlock()
	if c.nagle != nil {
		c.nagle.Stop()
	}
	c.nc.Close()
}

// Request is a follower's question: where does this request run?
type Request struct {
	Client       netip.Addr
	Method, Path string
	Board        string   // pinned board
	Sticky       string   // the sticky cookie's board
	Exclude      []string // boards that failed it
	// Leaseable: it may run here on a slot of this board's lease (no
	// device, not pinned elsewhere, a first placement): while it waits in
	// the master's queue, a slot of the lease that frees is handed to it
	// (Answer.Leased) instead of a request that came after it.
	Leaseable bool
}

// Answer is the master's: placed on Board (at Addr, in the master's
// Epoch; End(ID) when it is over), or not.
type Answer struct {
	ID          uint32
	Placed      bool
	Epoch       uint64
	Board, Addr string
	NotMaster   bool          // not placed: the board is master no more
	RetryAfter  time.Duration // not placed: shed, with Class and Reason
	Class       string
	Reason      string
	// Leased: not placed by the master; a slot of this board's lease
	// freed while it waited and is now its own (the master was told to
	// let its wait go): it runs here, and FreeLease, not End, ends it.
	Leased bool
}

// Place asks the master where r runs; the answer's ID is the one to End.
// An error means the master did not answer: the request did not run
// (ErrChannelDown), or the client left (ctx's error; the follower has
// told the master).
func (c *Chan) Place(ctx context.Context, r *Request) (Answer, error) {
	q := placeReq{client: r.Client, method: r.Method, path: r.Path, board: r.Board, sticky: r.Sticky, exclude: r.Exclude}
	a, err := c.place(ctx, &q, r.Leaseable)
	if err != nil {
		return Answer{}, err
	}
	if a.leased {
		return Answer{ID: a.id, Leased: true}, nil
	}
	return Answer{ID: a.id, Placed: a.placed, Epoch: a.epoch, Board: a.board, Addr: a.addr, NotMaster: !a.placed && a.code == placeNotMaster,
		RetryAfter: time.Duration(a.retry) * time.Millisecond, Class: a.class, Reason: a.reason}, nil
}

// place is Place in the frames' terms.
func (c *Chan) place(ctx context.Context, q *placeReq, leaseable bool) (placeAns, error) {
	ch := make(chan placeAns, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return placeAns{}, ErrChannelDown
	}
	hold := c.nagle != nil && holdPlace(len(c.pending), q.method, q.path)
	c.next++
	q.id = c.next
	c.pending[q.id] = ch
	if leaseable {
		c.queueLeaseable(q.id)
	}
	c.mu.Unlock()
	c.w.mu.Lock()
	buf, ok := appendPlace(c.w.buf, q)
	if !ok {
		c.w.mu.Unlock()
		c.forget(q.id)
		return placeAns{}, ErrChannelDown // fields over the wire's limits: the path through the master takes it
	}
	c.w.buf = buf
	if hold { // queued behind placements that wait: the next write takes it, placeHold at the latest
		c.w.mu.Unlock()
		if c.armed.CompareAndSwap(false, true) {
			c.nagle.Reset(placeHold)
		}
	} else if err := c.w.flush(); err != nil {
		c.close(err)
		return placeAns{}, ErrChannelDown
	}
	select {
	case a := <-ch:
		return a, nil
	case <-ctx.Done():
		if !c.forget(q.id) {
			c.dropAnswer(ch) // answered meanwhile: a slot of the lease handed to it goes on
		}
		c.End(q.id) // placed meanwhile or still waiting: the master lets go either way
		return placeAns{}, ctx.Err()
	case <-c.done:
		c.dropAnswer(ch)
		return placeAns{}, ErrChannelDown
	}
}

// dropAnswer frees what an answer that nobody takes holds here: a slot of
// the lease handed to a request that left, or whose channel closed
// (handed under c.mu, so it is in ch by the time forget finds its request
// gone). A placement's slot goes back by its end frame.
func (c *Chan) dropAnswer(ch chan placeAns) {
	select {
	case a := <-ch:
		if a.leased {
			c.FreeLease()
		}
	default:
	}
}

// holdPlace reports whether a place frame may wait (placeHold) for
// another frame's write: only while others of this follower wait for
// their answer (waiting), and never for a device (control first).
func holdPlace(waiting int, method, path string) bool {
	if waiting == 0 {
		return false
	}
	dev, _ := sched.DeviceOf(method, path)
	return dev == ""
}

// flushHeld writes the place frames held for placeHold (and anything else
// queued).
func (c *Chan) flushHeld() {
	c.armed.Store(false)
	c.w.mu.Lock()
	if err := c.w.flush(); err != nil {
		c.close(err)
	}
}

// forget stops waiting for id's answer; false: it was answered already.
func (c *Chan) forget(id uint32) bool {
	c.mu.Lock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	return ok
}

// End tells the master that placed request id is over: its slot goes
// back. On a closed channel there is nothing to tell: the master gave
// every slot of the channel back when it closed.
func (c *Chan) End(id uint32) {
	c.w.mu.Lock()
	c.w.buf = appendEnd(c.w.buf, id)
	if err := c.w.flush(); err != nil {
		c.close(err)
	}
}

// read delivers the master's answers until the channel fails.
func (c *Chan) read(log *slog.Logger) {
	rd := newFrameReader(idleReader{c.nc})
	var a placeAns
	for {
		typ, p, err := rd.next()
		if err != nil {
			c.close(err)
			return
		}
		switch typ {
		case framePong:
			if len(p) != 0 {
				c.close(errFrame)
				return
			}
			continue
		case frameGrant:
			n, err := decodeCount(p)
			if err != nil {
				c.close(err)
				return
			}
			c.granted(n)
			continue
		case frameRevoke:
			on, err := decodeRevoke(p)
			if err != nil {
				c.close(err)
				return
			}
			c.revoked(on)
			continue
		}
		if err := decodeAns(typ, p, &a); err != nil {
			log.Warn("place: bad frame from the master; placement channel closed", "master", c.to.Name, "err", err)
			c.close(err)
			return
		}
		c.mu.Lock()
		ch := c.pending[a.id]
		delete(c.pending, a.id)
		c.mu.Unlock()
		if ch != nil {
			ch <- a
		} // else its request left before the answer, and its end frame lets the slot go

	}
}

// ping keeps an idle channel alive (the master closes one silent for
// placeIdle) and gives back the lease's idle slots, until it closes.
func (c *Chan) ping() {
	const tick = leaseIdle / 2
	t := time.NewTicker(tick)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			c.returnIdle(now)
			c.sendRan()
			if n%int(placePing/tick) != 0 {
				continue
			}
			if err := c.w.sendEmpty(framePing); err != nil {
				c.close(err)
				return
			}
		}
	}
}
