package sched

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// propRun drives a Dispatcher through a random sequence of arrivals,
// completions, cancellations and table changes and checks the invariants
// after every step: no board over capacity at dispatch, linknum never
// negative and equal to the tickets in flight, FIFO within a class, every
// request answered exactly once.
type propRun struct {
	rt       *rapid.T
	d        *Dispatcher
	boards   []Board
	launched int
	outs     chan propOut
	got      map[int]outcome // answers by request id
	cancels  map[int]context.CancelFunc
	held     map[int]Ticket // tickets not yet done, by request id
	doneT    []Ticket       // tickets already done (Done again must do nothing)
	lastSeq  map[string]uint64
	problems []string         // found by the trace hook, under the lock
	reqs     map[int]*Request // by request id
}

type propOut struct {
	id int
	o  outcome
}

func TestDispatcherProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		policy := rapid.SampledFrom(PolicyNames()).Draw(rt, "policy")
		s := schedCfg(policy, rapid.IntRange(1, 4).Draw(rt, "queue"))
		s.Reserve = rapid.SampledFrom([]float64{0, 0.3}).Draw(rt, "reserve")
		s.Devices = propDevices
		d, err := NewDispatcher(s, Options{})
		if err != nil {
			rt.Fatal(err)
		}
		r := &propRun{rt: rt, d: d, outs: make(chan propOut, 128), got: map[int]outcome{},
			cancels: map[int]context.CancelFunc{}, held: map[int]Ticket{}, lastSeq: map[string]uint64{}, reqs: map[int]*Request{}}
		d.trace = r.trace
		for _, n := range []string{"a", "b", "c"} {
			b := board(n, rapid.IntRange(0, 3).Draw(rt, "cap-"+n))
			r.boards = append(r.boards, b)
		}
		d.Update(rows(r.boards))
		steps := rapid.IntRange(1, 50).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0, 1, 2, 3:
				r.arrive()
			case 4, 5, 6:
				r.complete()
			case 7:
				r.cancel()
			case 8:
				r.update()
			case 9:
				if len(r.doneT) > 0 {
					r.doneT[rapid.IntRange(0, len(r.doneT)-1).Draw(rt, "redone")].Done()
				}
			}
			r.settle()
			r.check()
		}
		d.Close()
		r.settle()
		r.check()
		for id, t := range r.held {
			t.Done()
			delete(r.held, id)
		}
		r.check()
		if len(r.got) != r.launched {
			rt.Fatalf("%d requests, %d answers", r.launched, len(r.got))
		}
		for _, b := range d.boards {
			if b.local != 0 || b.Linknum != 0 || b.ReqLoad != 0 {
				rt.Fatalf("board %s after all done: local %d linknum %d reqload %v", b.Name, b.local, b.Linknum, b.ReqLoad)
			}
		}
		for i, l := range d.locks {
			if l.busy != 0 || l.queued != 0 || l.actWait != 0 || l.readers != 0 {
				rt.Fatalf("device lock %d after all done: %+v", i, l)
			}
		}
	})
}

func (r *propRun) trace(req *Request, seq uint64, b *Board) {
	if !b.Running || b.Linknum >= b.Capacity || b.local >= b.Capacity {
		r.problems = append(r.problems, fmt.Sprintf("dispatch to %s at linknum %d local %d of capacity %d running %v",
			b.Name, b.Linknum, b.local, b.Capacity, b.Running))
	}
	if req.pinned() && req.Board != b.Name {
		r.problems = append(r.problems, fmt.Sprintf("request pinned to %s ran on %s", req.Board, b.Name))
	}
	if seq == 0 {
		return
	}
	q := req.Class
	if r.d.one {
		q = 0
	}
	key := fmt.Sprint(q, "/", req.Board)
	if !req.pinned() {
		key = fmt.Sprint(q, "/any")
	}
	if di := r.d.device(req); di >= 0 {
		key = fmt.Sprint(q, "/lock", r.d.devs[di].lock) // FIFO per device lock
	}
	if seq <= r.lastSeq[key] {
		r.problems = append(r.problems, fmt.Sprintf("FIFO broken in %s: %d after %d", key, seq, r.lastSeq[key]))
	}
	r.lastSeq[key] = seq
}

func (r *propRun) arrive() {
	id := r.launched
	r.launched++
	req := &Request{
		Class: rapid.IntRange(0, 2).Draw(r.rt, "class"), // 2 is out of range: last class
		Board: rapid.SampledFrom([]string{"", "", "any", "a", "b", "zz"}).Draw(r.rt, "pin"),
		Path:  fmt.Sprint("/p/", id%5),
		// devices: r one at a time, p two, g1 and g2 one lock; "x" unknown
		Device: rapid.SampledFrom([]string{"", "", "r", "r", "p", "g1", "g2", "x"}).Draw(r.rt, "device"),
		Read:   rapid.Bool().Draw(r.rt, "read"),
	}
	r.reqs[id] = req
	ctx, cancel := context.WithCancel(context.Background())
	r.cancels[id] = cancel
	go func() {
		t, err := r.d.Acquire(ctx, req)
		r.outs <- propOut{id, outcome{t, err}}
	}()
}

func (r *propRun) complete() {
	if len(r.held) == 0 {
		return
	}
	ids := r.heldIDs()
	id := ids[rapid.IntRange(0, len(ids)-1).Draw(r.rt, "done")]
	t := r.held[id]
	delete(r.held, id)
	t.Done()
	r.doneT = append(r.doneT, t)
}

func (r *propRun) heldIDs() []int {
	ids := make([]int, 0, len(r.held))
	for id := 0; id < r.launched; id++ {
		if _, ok := r.held[id]; ok {
			ids = append(ids, id)
		}
	}
	return ids
}

func (r *propRun) cancel() {
	var open []int
	for id := 0; id < r.launched; id++ {
		if _, ok := r.got[id]; !ok {
			open = append(open, id)
		}
	}
	if len(open) == 0 {
		return
	}
	r.cancels[open[rapid.IntRange(0, len(open)-1).Draw(r.rt, "cancel")]]()
}

func (r *propRun) update() {
	i := rapid.IntRange(0, len(r.boards)-1).Draw(r.rt, "board")
	b := &r.boards[i]
	b.Capacity = rapid.IntRange(0, 3).Draw(r.rt, "cap")
	b.Running = rapid.Bool().Draw(r.rt, "running")
	b.Load.CPU = rapid.Float64Range(0, 1).Draw(r.rt, "cpu")
	r.d.Update(rows(r.boards))
}

// settle waits until every request is either queued or answered to the test.
func (r *propRun) settle() {
	deadline := time.Now().Add(5 * time.Second)
	for {
		for drained := false; !drained; {
			select {
			case o := <-r.outs:
				if _, dup := r.got[o.id]; dup {
					r.rt.Fatalf("request %d answered twice", o.id)
				}
				r.got[o.id] = o.o
				if o.o.err == nil {
					r.held[o.id] = o.o.t
				}
			default:
				drained = true
			}
		}
		r.d.mu.Lock()
		queued := r.d.total
		r.d.mu.Unlock()
		if len(r.got)+queued == r.launched {
			return
		}
		if time.Now().After(deadline) {
			r.rt.Fatalf("requests neither queued nor answered: %d launched, %d answered, %d queued", r.launched, len(r.got), queued)
		}
		runtime.Gosched()
		time.Sleep(20 * time.Microsecond)
	}
}

func (r *propRun) check() {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	if len(r.problems) > 0 {
		r.rt.Fatal(r.problems)
	}
	inFlight := map[string]int{}
	for _, t := range r.held {
		inFlight[t.Board]++
	}
	for _, b := range r.d.boards {
		if b.local < 0 || b.Linknum < 0 || b.ReqLoad < 0 {
			r.rt.Fatalf("board %s: local %d linknum %d reqload %v", b.Name, b.local, b.Linknum, b.ReqLoad)
		}
		if b.local != inFlight[b.Name] || b.Linknum != b.local {
			r.rt.Fatalf("board %s: linknum %d (local %d), tickets in flight %d", b.Name, b.Linknum, b.local, inFlight[b.Name])
		}
	}
	// no device runs more operations than it may: the reads of one device
	// count once, the devices of one lock together; a lock of one place
	// may have one action more admitted ahead (device_ahead.go), on the
	// board its other operation runs on
	ops := map[int]int{}
	reads := map[int]bool{}
	on := map[int]map[string]bool{}
	for id := range r.held {
		di := r.d.device(r.reqs[id])
		if di < 0 {
			continue
		}
		li := r.d.devs[di].lock
		if on[li] == nil {
			on[li] = map[string]bool{}
		}
		on[li][r.held[id].Board] = true
		switch {
		case r.reqs[id].Read:
			if !reads[di] {
				reads[di] = true
				ops[li]++
			}
		default:
			ops[li]++
		}
	}
	for li, l := range r.d.locks {
		limit := l.conc
		if l.conc == 1 {
			limit = 2
		}
		if ops[li] > limit || ops[li] != l.busy {
			r.rt.Fatalf("device lock %d: %d operations held by tickets, busy %d, concurrency %d", li, ops[li], l.busy, l.conc)
		}
		if ops[li] > l.conc && (len(on[li]) > 1 || l.readers > 0) {
			r.rt.Fatalf("device lock %d: an action admitted ahead beside reads or on another board (%v)", li, on[li])
		}
	}
	n := 0
	for c, k := range r.d.depth {
		if k < 0 {
			r.rt.Fatalf("class %d depth %d", c, k)
		}
		n += k
	}
	if n != r.d.total || n > r.d.maxTotal {
		r.rt.Fatalf("depths sum %d, total %d, bound %d", n, r.d.total, r.d.maxTotal)
	}
}

// A queue flood far beyond `queue`: bounded queue, immediate 503s, and the
// goroutine count back to where it was.
func TestQueueFlood(t *testing.T) {
	base := runtime.NumGoroutine()
	cfg := schedCfg("priority-lc", 8)
	// The bound is under test, not fail fast: on a slow machine the flood
	// itself lasts longer than queue_target, and CoDel would join in.
	cfg.QueueTarget = 0
	d, err := NewDispatcher(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, d: d}
	d.Update(rows([]Board{board("a", 1)}))
	hold := h.now(&Request{})
	const n = 2000
	outs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			_, err := d.Acquire(context.Background(), &Request{Class: i % 2, Path: "/flood"})
			outs <- err
		}()
	}
	shed := 0
	h.poll("flood to settle", func() bool {
		for {
			select {
			case err := <-outs:
				if !isShed(err, ReasonFull) && !isShed(err, ReasonEvicted) {
					t.Fatalf("flooded request: %v", err)
				}
				shed++
				continue
			default:
			}
			return shed+h.queued() == n
		}
	})
	if q := h.queued(); q > 16 {
		t.Fatalf("%d queued, bound is 2 classes x 8", q)
	}
	d.Close()
	for shed < n {
		if err := <-outs; !isShed(err, ReasonClosed) && !isShed(err, ReasonFull) && !isShed(err, ReasonEvicted) {
			t.Fatalf("at close: %v", err)
		}
		shed++
	}
	hold.Done()
	h.poll("goroutines to exit", func() bool { return runtime.NumGoroutine() <= base })
}

// propDevices are the devices of the property test.
var propDevices = []Device{{Name: "r"}, {Name: "p", Concurrency: 2}, {Name: "g1", Lock: "g"}, {Name: "g2", Lock: "g"}}
