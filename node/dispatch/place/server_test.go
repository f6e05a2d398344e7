package place

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state/row"
)

// queue is a master's queue for the channel's tests: one dispatcher, on
// which only ews2 runs.
type queue struct{ d *sched.Dispatcher }

func (q queue) Dispatcher() *sched.Dispatcher { return q.d }
func (q queue) Epoch() uint64                 { return 3 }

func newQueue(t *testing.T) queue {
	t.Helper()
	d, err := sched.NewDispatcher(sched.DefaultConfig(), sched.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	d.Update([]row.Board{
		{Name: "ews1", Rank: 0, HTTP: "127.0.0.1:1", Capacity: 4, Weight: 1, Runstate: row.Down, Linknum: 0},
		{Name: "ews2", Rank: 1, HTTP: "127.0.0.1:2", Capacity: 4, Weight: 1, Runstate: row.Running, Linknum: 0},
	})
	return queue{d: d}
}

func linknum(d *sched.Dispatcher, name string) int {
	for _, b := range d.Boards() {
		if b.Name == name {
			return b.Linknum
		}
	}
	return -1
}

// serve runs a channel's master end on one end of a pipe and returns the
// follower's end.
func serve(t *testing.T, q queue) (net.Conn, *frameReader) {
	t.Helper()
	master, follower := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Serve(context.Background(), master, bufio.NewReader(master), "ews2", true, q, func() {})
		master.Close()
	}()
	t.Cleanup(func() { follower.Close(); <-done })
	return follower, newFrameReader(follower)
}

// A bad frame closes the channel: every slot placed or leased on it goes
// back.
func TestServeBadFrames(t *testing.T) {
	q := newQueue(t)
	for _, bad := range [][]byte{
		appendCount(nil, frameReturn, 4), // more slots back than leased
		{0, 0},                           // length 0
		{0, 1, 9},                        // unknown type
		{0, 2, framePing, 1},             // ping with a payload
		{0, 3, frameEnd, 0, 1},           // short end
		{0, 4, framePlace, 0, 0},         // cut place
		{0, 3, frameRan, 0, 1},           // cut ran
	} {
		nc, rd := serve(t, q)
		place, _ := appendPlace(nil, &placeReq{id: 1, client: netip.MustParseAddr("10.0.0.1"), method: "GET", path: "/x"})
		if _, err := nc.Write(place); err != nil {
			t.Fatal(err)
		}
		typ, p, err := rd.next()
		var a placeAns
		if err != nil || decodeAns(typ, p, &a) != nil || !a.placed || a.board != "ews2" || a.epoch != 3 {
			t.Fatalf("placed: %d %v %+v", typ, err, a)
		}
		if n := linknum(q.d, "ews2"); n != 1 {
			t.Fatalf("linknum of ews2 placed on the channel: %d", n)
		}
		if _, err := nc.Write(appendCount(nil, frameLease, 3)); err != nil {
			t.Fatal(err)
		}
		if typ, p, err := rd.next(); err != nil || typ != frameGrant {
			t.Fatalf("lease: %d %v", typ, err)
		} else if n, _ := decodeCount(p); n != 3 || linknum(q.d, "ews2") != 4 {
			t.Fatalf("granted %d, linknum %d; want 3 and 4", n, linknum(q.d, "ews2"))
		}
		if _, err := nc.Write(bad); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, _, err := rd.next(); err == nil {
			t.Fatalf("bad frame %x: the master kept the channel open", bad)
		}
		nc.Close()
		testutil.Eventually(t, "the slots placed and leased on a closed channel go back", func() bool { return linknum(q.d, "ews2") == 0 })
	}
}

// An end of an unknown id is no error, nor a return of nothing.
func TestServeHarmlessFrames(t *testing.T) {
	nc, rd := serve(t, newQueue(t))
	var frames []byte
	frames = appendEnd(frames, 77)
	frames = appendCount(frames, frameReturn, 0)
	frames = appendEmpty(frames, framePing)
	if _, err := nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	if typ, _, err := rd.next(); err != nil || typ != framePong {
		t.Fatalf("after an end of an unknown id: %d %v, want a pong", typ, err)
	}
}

// A ran frame counts what a follower ran on its lease in the master's
// per-class figures, by the master's classes; it takes no slot.
func TestServeRanFrames(t *testing.T) {
	q := newQueue(t)
	nc, rd := serve(t, q)
	var frames []byte
	frames, _ = appendRan(frames, &ranReq{n: 3, method: "GET", path: "/page"})
	frames, _ = appendRan(frames, &ranReq{n: 2, method: "POST", path: "/api/devices/r1/toggle"})
	frames = appendEmpty(frames, framePing)
	if _, err := nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	if typ, _, err := rd.next(); err != nil || typ != framePong { // the ran frames were read before the ping
		t.Fatalf("after the ran frames: %d %v, want a pong", typ, err)
	}
	if got := q.d.Started(); got["browse"] != 3 || got["control"] != 2 {
		t.Fatalf("Started %v, want browse 3 and control 2", got)
	}
	if n := linknum(q.d, "ews2"); n != 0 {
		t.Fatalf("linknum of ews2 after ran frames: %d, want 0", n)
	}
}

// A follower sends ran frames only to a master that takes them
// (HeaderRan): an older one closes the channel on an unknown type.
func TestFollowerRanOnlyWhenTheMasterTakesThem(t *testing.T) {
	for _, takes := range []bool{true, false} {
		q := newQueue(t)
		master, follower := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = Serve(context.Background(), master, bufio.NewReader(master), "ews2", true, q, func() {})
			master.Close()
		}()
		p := &Follower{
			Dial:  func(Master) (net.Conn, bool, time.Duration, error) { return follower, takes, 0, nil },
			Log:   slog.New(slog.DiscardHandler),
			Conns: &Set{},
		}
		c := p.Channel(context.Background(), Master{Name: "ews1", Addr: "127.0.0.1:1", Epoch: 3})
		if c == nil {
			t.Fatal("no channel")
		}
		c.Ran("GET", "/a")
		c.Ran("GET", "/a")
		c.Ran("POST", "/api/devices/r1/toggle")
		c.sendRan()
		want := map[string]uint64{"control": 0, "browse": 0}
		if takes {
			want = map[string]uint64{"control": 1, "browse": 2}
		}
		// a placement behind the ran frames: answered once they were read
		if _, err := c.Place(context.Background(), &Request{Method: "GET", Path: "/b"}); err != nil {
			t.Fatal(err)
		}
		if got := q.d.Started(); got["control"] != want["control"] || got["browse"] != want["browse"]+1 {
			t.Fatalf("master takes ran frames %v: Started %v, want %v and the placed /b", takes, got, want)
		}
		p.Close()
		<-done
	}
}

// A placement that waits in the queue is answered once a slot frees, by
// the goroutine that freed it (sched.Request.Started) or its own; one the
// follower ended while it waited is never answered, and every slot goes
// back either way.
func TestServeQueuedPlacement(t *testing.T) {
	q := newQueue(t) // ews2: 4 slots
	nc, rd := serve(t, q)
	next := func(what string) placeAns {
		t.Helper()
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		typ, p, err := rd.next()
		var a placeAns
		if err != nil || decodeAns(typ, p, &a) != nil {
			t.Fatalf("%s: type %d, %v", what, typ, err)
		}
		return a
	}
	send := func(b []byte) {
		t.Helper()
		if _, err := nc.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	for id := uint32(1); id <= 6; id++ {
		b, _ := appendPlace(nil, &placeReq{id: id, method: "GET", path: "/x"})
		send(b)
		if id <= 4 {
			if a := next("placed at once"); !a.placed || a.id != id {
				t.Fatalf("request %d: %+v", id, a)
			}
		}
	}
	testutil.Eventually(t, "5 and 6 wait", func() bool { return q.d.Depths()["browse"] == 2 })
	send(appendEnd(nil, 5)) // 5 leaves while it waits
	testutil.Eventually(t, "5 left the queue", func() bool { return q.d.Depths()["browse"] == 1 })
	send(appendEnd(nil, 1))
	if a := next("a freed slot"); !a.placed || a.id != 6 {
		t.Fatalf("after the end of 1: %+v, want 6 placed", a)
	}
	if n := linknum(q.d, "ews2"); n != 4 {
		t.Fatalf("linknum %d, want 4", n)
	}
	var ends []byte
	for _, id := range []uint32{2, 3, 4, 6} {
		ends = appendEnd(ends, id)
	}
	send(append(ends, appendEmpty(nil, framePing)...))
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if typ, _, err := rd.next(); err != nil || typ != framePong {
		t.Fatalf("after the ends: type %d, %v; want a pong (no answer for 5)", typ, err)
	}
	testutil.Eventually(t, "every slot back", func() bool { return linknum(q.d, "ews2") == 0 })
}

// The answers to the frames one read brought leave in one write
// (frameWriter.hold): two places and a ping sent together are answered by
// one write, which one read of the pipe returns whole.
func TestServeAnswersABatchInOneWrite(t *testing.T) {
	q := newQueue(t)
	nc, _ := serve(t, q)
	var frames []byte
	for id := uint32(1); id <= 2; id++ {
		frames, _ = appendPlace(frames, &placeReq{id: id, method: "GET", path: "/x"})
	}
	frames = appendEmpty(frames, framePing)
	if _, err := nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4<<10)
	n, err := nc.Read(buf) // net.Pipe: one read returns at most one write
	if err != nil {
		t.Fatal(err)
	}
	rd := newFrameReader(bytes.NewReader(buf[:n]))
	var got []byte
	for {
		typ, _, err := rd.next()
		if err != nil {
			break
		}
		got = append(got, typ)
	}
	if want := []byte{framePlaced, framePlaced, framePong}; !bytes.Equal(got, want) {
		t.Fatalf("one write carried frames of types %v, want %v", got, want)
	}
}

// A place frame waits for another frame's write only while placements of
// the same follower wait for their answer, and never for a device.
func TestHoldPlace(t *testing.T) {
	tests := []struct {
		name         string
		waiting      int
		method, path string
		want         bool
	}{
		{"nothing waits", 0, "GET", "/", false},
		{"a page behind a waiting page", 1, "GET", "/", true},
		{"a device read behind a waiting page", 3, "POST", "/api/devices/s1/read", false},
		{"a device action behind a waiting page", 3, "POST", "/api/devices/r1/toggle", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := holdPlace(tt.waiting, tt.method, tt.path); got != tt.want {
				t.Fatalf("holdPlace(%d, %s %s) = %v, want %v", tt.waiting, tt.method, tt.path, got, tt.want)
			}
		})
	}
}

// A held place frame reaches the master without any other frame to carry
// it (placeHold), and the requests are placed in order as slots free.
func TestFollowerHeldPlaceArrives(t *testing.T) {
	q := newQueue(t) // ews2: 4 slots
	master, follower := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Serve(context.Background(), master, bufio.NewReader(master), "ews2", true, q, func() {})
		master.Close()
	}()
	p := pipeFollower(follower)
	defer func() { p.Close(); <-done }()
	c := p.Channel(context.Background(), Master{Name: "ews1", Addr: "127.0.0.1:1", Epoch: 3})
	var ids []uint32
	for range 4 {
		a, err := c.Place(context.Background(), &Request{Method: "GET", Path: "/x"})
		if err != nil || !a.Placed {
			t.Fatalf("placed at once: %+v %v", a, err)
		}
		ids = append(ids, a.ID)
	}
	answers := make(chan Answer, 2)
	place := func() {
		a, err := c.Place(context.Background(), &Request{Method: "GET", Path: "/x"})
		if err != nil {
			t.Error(err)
		}
		answers <- a
	}
	go place()
	testutil.Eventually(t, "the fifth waits in the master's queue", func() bool { return q.d.Depths()["browse"] == 1 })
	go place() // held behind the fifth: nothing else is written
	testutil.Eventually(t, "the held sixth reaches the queue", func() bool { return q.d.Depths()["browse"] == 2 })
	for i := range 2 {
		c.End(ids[i])
		if a := <-answers; !a.Placed {
			t.Fatalf("after an end: %+v, want placed", a)
		}
	}
}
