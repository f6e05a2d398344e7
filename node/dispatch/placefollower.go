package dispatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The follower's end of the placement channel (placeframe.go): one
// connection to the master at a time, opened by the first request that
// needs it, shared by every request, closed when the master changes.

// How long a follower stops asking a master that did not open a channel.
const (
	placeOffOld   = 10 * time.Second // it answered the upgrade with something else: an older build
	placeOffError = time.Second      // it could not be reached or failed the upgrade
	placeDial     = 2 * time.Second  // dial and upgrade
)

// errChannelDown: the placement channel closed before the master answered;
// the request did not run anywhere.
var errChannelDown = errors.New("dispatch: the placement channel to the master closed")

// placer holds a follower's channel to its master.
type placer struct {
	mu       sync.Mutex
	cur      *placeChan
	dialing  chan struct{} // closed when the dial under way ends
	offTo    masterAt      // the master not asked until offUntil
	offUntil time.Time
	closed   bool
}

// placeChan is an open channel to one master.
type placeChan struct {
	to masterAt
	nc net.Conn
	w  frameWriter

	mu      sync.Mutex
	pending map[uint32]chan placeAns // waiting for the master's answer
	next    uint32
	err     error         // why it closed
	done    chan struct{} // closed when it closed
	ls      followerLease // slots of this board the master leased it (placelease.go)
}

// channel returns the open channel to master to, opening one if none is
// (the first caller dials, the others wait for it), or nil when the
// master did not open one lately: the request then takes the path through
// the master.
func (f *Front) channel(ctx context.Context, to masterAt) *placeChan {
	p := &f.follow.placer
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
		c, off, err := f.dialPlace(to)
		p.mu.Lock()
		p.dialing = nil
		close(wait)
		if err != nil {
			p.offTo, p.offUntil = to, time.Now().Add(off)
			f.log.Info("dispatch: no placement channel to the master; requests go through it", "master", to.name, "err", err, "retry_in", off)
			continue // the loop returns nil: off now
		}
		if p.closed {
			p.mu.Unlock()
			c.close(errChannelDown)
			return nil
		}
		old := p.cur
		p.cur = c
		p.mu.Unlock()
		if old != nil {
			old.close(errChannelDown) // another master, or a dead channel
		}
		go c.read(f)
		go c.ping()
		return c
	}
}

// closePlacer closes the channel and opens no other (Front.Close).
func (p *placer) close() {
	p.mu.Lock()
	p.closed = true
	c := p.cur
	p.cur = nil
	p.mu.Unlock()
	if c != nil {
		c.close(errChannelDown)
	}
}

// dialPlace opens a channel to master to over this board's own
// connections to boards (conntransport.go), signed with a peer mark. off
// is how long not to try again after an error.
func (f *Front) dialPlace(to masterAt) (c *placeChan, off time.Duration, err error) {
	ct, ok := f.out.tr.(*connTransport)
	if !ok {
		return nil, placeOffOld, errors.New("dispatch: the transport cannot open a placement channel")
	}
	ctx, cancel := context.WithTimeout(context.Background(), placeDial)
	defer cancel()
	scheme := f.cfg.scheme
	bc, err := ct.dial(ctx, connKey{scheme: scheme, addr: hostPort(scheme, to.addr)}) // never pooled: the channel keeps it
	if err != nil {
		return nil, placeOffError, err
	}
	req, err := http.NewRequest(http.MethodGet, scheme+"://"+to.addr+PlacePath, nil)
	if err != nil {
		bc.nc.Close()
		return nil, placeOffError, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", PlaceProtocol)
	req.Header.Set(HeaderPlaceBoard, f.c.Self())
	f.marks.SignPeer(req, to.name)
	_ = bc.nc.SetDeadline(time.Now().Add(placeDial))
	stop := context.AfterFunc(ctx, bc.expire)
	defer stop()
	if err := req.Write(bc.bw); err != nil {
		bc.nc.Close()
		return nil, placeOffError, err
	}
	if err := bc.bw.Flush(); err != nil {
		bc.nc.Close()
		return nil, placeOffError, err
	}
	bc.head.left = maxAnswerHead
	resp, err := http.ReadResponse(bc.br, req)
	if err != nil {
		bc.nc.Close()
		return nil, placeOffError, err
	}
	bc.head.left = -1
	if resp.StatusCode != http.StatusSwitchingProtocols || !strings.EqualFold(resp.Header.Get("Upgrade"), PlaceProtocol) {
		resp.Body.Close()
		bc.nc.Close()
		return nil, placeOffOld, fmt.Errorf("dispatch: the master answered the placement channel %d (an older build, or refused)", resp.StatusCode)
	}
	if bc.br.Buffered() > 0 { // the master speaks only when asked
		bc.nc.Close()
		return nil, placeOffError, errFrame
	}
	_ = bc.nc.SetDeadline(time.Time{})
	c = &placeChan{to: to, nc: bc.nc, pending: map[uint32]chan placeAns{}, done: make(chan struct{})}
	c.w.nc = bc.nc
	f.placing.chans.add(bc.nc)
	return c, 0, nil
}

// alive reports whether c is still open.
func (c *placeChan) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// close closes c once: every request waiting for an answer gets err.
func (c *placeChan) close(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.pending = nil
	close(c.done)
	c.mu.Unlock()
	c.nc.Close()
}

// place asks the master where q runs; the answer's id is the one to end.
// An error means the master did not answer: the request did not run
// (errChannelDown), or the client left (ctx's error; the follower has
// told the master).
func (c *placeChan) place(ctx context.Context, q *placeReq) (placeAns, error) {
	ch := make(chan placeAns, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return placeAns{}, errChannelDown
	}
	c.next++
	q.id = c.next
	c.pending[q.id] = ch
	c.mu.Unlock()
	c.w.mu.Lock()
	buf, ok := appendPlace(c.w.buf, q)
	if !ok {
		c.w.mu.Unlock()
		c.forget(q.id)
		return placeAns{}, errChannelDown // fields over the wire's limits: the path through the master takes it
	}
	c.w.buf = buf
	if err := c.w.flush(); err != nil {
		c.close(err)
		return placeAns{}, errChannelDown
	}
	select {
	case a := <-ch:
		return a, nil
	case <-ctx.Done():
		c.forget(q.id)
		c.end(q.id) // placed meanwhile or still waiting: the master lets go either way
		return placeAns{}, ctx.Err()
	case <-c.done:
		return placeAns{}, errChannelDown
	}
}

// forget stops waiting for id's answer.
func (c *placeChan) forget(id uint32) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// end tells the master that placed request id is over: its slot goes
// back. On a closed channel there is nothing to tell: the master gave
// every slot of the channel back when it closed.
func (c *placeChan) end(id uint32) {
	c.w.mu.Lock()
	c.w.buf = appendEnd(c.w.buf, id)
	if err := c.w.flush(); err != nil {
		c.close(err)
	}
}

// read delivers the master's answers until the channel fails.
func (c *placeChan) read(f *Front) {
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
			f.log.Warn("dispatch: bad frame from the master; placement channel closed", "master", c.to.name, "err", err)
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
func (c *placeChan) ping() {
	const tick = leaseIdle / 2
	t := time.NewTicker(tick)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			c.returnIdle(now)
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
