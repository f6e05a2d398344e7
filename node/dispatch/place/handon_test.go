package place

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/sched"
)

// The master revokes a follower's lease when a request waits that the
// lease could keep a slot from: for a follower that hands its freed slots
// on (HeaderHandOn), anything but its own pages for any board; for an
// older one, anything.
func TestRevokeFor(t *testing.T) {
	tests := []struct {
		name    string
		handsOn bool
		waiting *sched.Request
		want    bool
	}{
		{name: "nothing waits", handsOn: true},
		{name: "its own page waits", handsOn: true, waiting: &sched.Request{Class: 1, Path: "/x", Entry: "ews2"}},
		{name: "its own page waits, an older follower", waiting: &sched.Request{Class: 1, Path: "/x", Entry: "ews2"}, want: true},
		{name: "another board's page waits", handsOn: true, waiting: &sched.Request{Class: 1, Path: "/x", Entry: "ews3"}, want: true},
		{name: "the master's own page waits", handsOn: true, waiting: &sched.Request{Class: 1, Path: "/x"}, want: true},
		{name: "its own control waits", handsOn: true, waiting: &sched.Request{Class: 0, Path: "/x", Entry: "ews2"}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQueue(t) // ews2: 4 slots
			var held []sched.Ticket
			for range 4 {
				tk, ok := q.d.TryAcquire(&sched.Request{Class: 1, Path: "/held"})
				if !ok {
					t.Fatal("no slot for a held request")
				}
				held = append(held, tk)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			if tt.waiting != nil {
				go func() {
					defer close(done)
					if tk, err := q.d.Acquire(ctx, tt.waiting); err == nil {
						tk.Done()
					}
				}()
				testutil.Eventually(t, "the request waits", func() bool { return q.d.Queued() })
			} else {
				close(done)
			}
			s := &server{q: q}
			s.ls.board, s.ls.handsOn = "ews2", tt.handsOn
			if got := s.revokeFor(q.d); got != tt.want {
				t.Errorf("revokeFor = %v, want %v", got, tt.want)
			}
			cancel()
			<-done
			for _, tk := range held {
				tk.Done()
			}
		})
	}
}

// A slot of the lease that frees goes to the oldest leaseable placement
// still waiting for the master (its request gets Answer.Leased, the
// master an end frame for it), never to one that may not run on the
// lease; with none waiting, or the lease revoked, it goes back as before.
func TestFreeLeaseHandsOn(t *testing.T) {
	master, follower := net.Pipe()
	p := pipeFollower(follower)
	defer p.Close()
	c := p.Channel(context.Background(), Master{Name: "ews1", Addr: "127.0.0.1:1", Epoch: 3})
	frames := make(chan [2]any, 64) // type and id of what reaches the master
	go func() {
		rd := newFrameReader(master)
		for {
			typ, b, err := rd.next()
			if err != nil {
				close(frames)
				return
			}
			var id uint32
			if len(b) >= 4 && (typ == framePlace || typ == frameEnd) {
				id = uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
			}
			frames <- [2]any{typ, id}
		}
	}()
	expect := func(typ byte, id uint32) {
		t.Helper()
		for f := range frames {
			if f[0].(byte) == framePing {
				continue
			}
			if f[0].(byte) != typ || (id != 0 && f[1].(uint32) != id) {
				t.Fatalf("the master got frame %v, want type %d id %d", f, typ, id)
			}
			return
		}
		t.Fatal("the channel closed")
	}
	c.granted(2)
	if !c.TakeLease() || !c.TakeLease() || c.TakeLease() {
		t.Fatal("a lease of 2 did not give exactly 2 slots")
	}
	answers := make(chan Answer, 3)
	place := func(path string, leaseable bool) {
		a, err := c.Place(context.Background(), &Request{Method: "GET", Path: path, Leaseable: leaseable})
		if err != nil { // /b, when the channel closes at the end
			a = Answer{Reason: err.Error()}
		}
		answers <- a
	}
	go place("/a", true)
	expect(framePlace, 1)
	go place("/b", false) // a device, a pin elsewhere: never on the lease
	expect(framePlace, 2)
	go place("/c", true)
	expect(framePlace, 3)
	c.FreeLease()
	if a := <-answers; !a.Leased || a.ID != 1 {
		t.Fatalf("the first freed slot: %+v, want the oldest (1) leased", a)
	}
	expect(frameEnd, 1)
	c.FreeLease()
	if a := <-answers; !a.Leased || a.ID != 3 {
		t.Fatalf("the second freed slot: %+v, want 3 leased (2 may not run on the lease)", a)
	}
	expect(frameEnd, 3)
	if g, u, _ := p.Lease(); g != 2 || u != 2 {
		t.Fatalf("lease %d granted, %d in use; want 2 and 2 (handed on, not freed)", g, u)
	}
	c.FreeLease() // nothing leaseable waits: free
	if g, u, _ := p.Lease(); g != 2 || u != 1 {
		t.Fatalf("lease %d granted, %d in use; want 2 and 1", g, u)
	}
	go place("/d", true)
	expect(framePlace, 4)
	c.revoked(true) // the free slot goes back at once
	expect(frameReturn, 0)
	c.FreeLease() // revoked: back to the master, not to /d
	expect(frameReturn, 0)
	if g, u, _ := p.Lease(); g != 0 || u != 0 {
		t.Fatalf("lease %d granted, %d in use after the revocation; want none", g, u)
	}
	c.revoked(false)
	c.granted(1) // a grant goes to the waiting /d first
	if a := <-answers; !a.Leased || a.ID != 4 {
		t.Fatalf("a new grant: %+v, want 4 leased", a)
	}
	expect(frameEnd, 4)
	if g, u, _ := p.Lease(); g != 1 || u != 1 {
		t.Fatalf("lease %d granted, %d in use; want 1 and 1", g, u)
	}
	select {
	case a := <-answers:
		t.Fatalf("/b answered without the master: %+v", a)
	default:
	}
	p.Close()
	if a := <-answers; a.Reason != ErrChannelDown.Error() {
		t.Fatalf("/b when the channel closed: %+v", a)
	}
}

// A request that leaves after a slot of the lease was handed to it gives
// the slot on (dropAnswer): nothing stays in use.
func TestDropAnswerFreesAHandedSlot(t *testing.T) {
	master, follower := net.Pipe()
	go func() { // the master reads and never answers
		rd := newFrameReader(master)
		for {
			if _, _, err := rd.next(); err != nil {
				return
			}
		}
	}()
	p := pipeFollower(follower)
	defer p.Close()
	c := p.Channel(context.Background(), Master{Name: "ews1", Addr: "127.0.0.1:1", Epoch: 3})
	c.granted(1)
	if !c.TakeLease() {
		t.Fatal("no slot")
	}
	ch := make(chan placeAns, 1)
	c.mu.Lock()
	c.pending[7] = ch
	c.queueLeaseable(7)
	c.mu.Unlock()
	c.FreeLease() // handed to 7
	if c.forget(7) {
		t.Fatal("7 still waits after the hand-on")
	}
	c.dropAnswer(ch) // 7's request left: the slot frees
	if g, u, _ := p.Lease(); g != 1 || u != 0 {
		t.Fatalf("lease %d granted, %d in use; want 1 and 0", g, u)
	}
}

// pipeFollower is a Follower whose every dial to the master is conn (one
// end of a net.Pipe), logging nothing.
func pipeFollower(conn net.Conn) *Follower {
	return &Follower{
		Dial:  func(Master) (net.Conn, bool, time.Duration, error) { return conn, true, 0, nil },
		Log:   slog.New(slog.DiscardHandler),
		Conns: &Set{},
	}
}
