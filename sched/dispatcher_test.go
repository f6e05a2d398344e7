package sched

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
)

func TestOrderAcrossAndWithinClasses(t *testing.T) {
	tests := []struct {
		policy string
		order  string   // Config.Order
		arrive []int    // classes in arrival order
		want   []string // dispatch order by id
	}{
		{"priority-lc", "", []int{browse, control, browse, control}, []string{"c1", "c3", "b0", "b2"}},
		{"priority-lc", "", []int{control, control, control}, []string{"c0", "c1", "c2"}},
		{"lc", "", []int{browse, control, browse, control}, []string{"b0", "c1", "b2", "c3"}},
		// Config.Order overrides the policy's queue: arrival order for a
		// priority policy (qsc without its priority queue), priority for lc
		{"qsc", OrderArrival, []int{browse, control, browse, control}, []string{"b0", "c1", "b2", "c3"}},
		{"random", OrderArrival, []int{browse, control, browse}, []string{"b0", "c1", "b2"}},
		{"lc", OrderPriority, []int{browse, control, browse, control}, []string{"c1", "c3", "b0", "b2"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.policy, tt.order, tt.arrive), func(t *testing.T) {
			cfg := schedCfg(tt.policy, 16)
			cfg.Order = tt.order
			h := newHarness(t, cfg, Options{}, board("a", 1))
			hold := h.now(&Request{Class: control})
			ids := map[*pending]string{}
			var ps []*pending
			for i, c := range tt.arrive {
				p := h.queue(&Request{Class: c})
				ids[p] = fmt.Sprintf("%c%d", "cb"[c], i)
				ps = append(ps, p)
			}
			var got []string
			for range ps {
				hold.Done()
				// exactly one request is dispatched per freed slot
				var next *pending
				h.poll("one dispatch", func() bool {
					for _, p := range ps {
						if o, ok := ready(p); ok {
							if next != nil {
								t.Fatalf("two requests dispatched for one slot")
							}
							if o.err != nil {
								t.Fatalf("%s: %v", ids[p], o.err)
							}
							next, hold = p, o.t
						}
					}
					return next != nil
				})
				got = append(got, ids[next])
			}
			hold.Done()
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("dispatch order %v, want %v", got, tt.want)
			}
			if n := h.linknum("a"); n != 0 {
				t.Errorf("linknum %d after all done", n)
			}
		})
	}
}

func TestEvictionAndFull(t *testing.T) {
	h := newHarness(t, schedCfg("priority-lc", 2), Options{}, board("a", 1))
	hold := h.now(&Request{Class: control})
	b1 := h.queue(&Request{Class: browse})
	b2 := h.queue(&Request{Class: browse})
	c1 := h.queue(&Request{Class: control})
	c2 := h.queue(&Request{Class: control})
	// control's own queue is full: the newest browse request makes room
	c3 := h.queue(&Request{Class: control})
	if o := h.result(b2); !isShed(o.err, ReasonEvicted) {
		t.Fatalf("newest browse request: %v, want evicted", o.err)
	}
	if _, ok := ready(b1); ok {
		t.Fatal("oldest browse request evicted before the newest")
	}
	c4 := h.queue(&Request{Class: control})
	if o := h.result(b1); !isShed(o.err, ReasonEvicted) {
		t.Fatalf("browse request: %v, want evicted", o.err)
	}
	// nothing lower left: full, for control and browse alike
	h.shed(&Request{Class: control}, ReasonFull)
	h.shed(&Request{Class: browse}, ReasonFull)
	if d := h.d.Depths(); d["control"] != 4 || d["browse"] != 0 {
		t.Errorf("depths %v", d)
	}
	for _, p := range []*pending{c1, c2, c3, c4} {
		hold.Done()
		o := h.result(p)
		if o.err != nil {
			t.Fatal(o.err)
		}
		hold = o.t
	}
	hold.Done()
}

func TestQueueTimeout(t *testing.T) {
	s := schedCfg("priority-lc", 4)
	s.QueueTimeout = 20 * time.Millisecond
	clk := newFakeClock()
	h := newHarness(t, s, Options{RetryAfter: 3 * time.Second, Clock: clk}, board("a", 1))
	hold := h.now(&Request{Class: control})
	p := h.queue(&Request{Class: browse})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := clk.BlockUntilContext(ctx, 1); err != nil { // its queue_timeout is armed
		t.Fatal(err)
	}
	clk.Advance(19 * time.Millisecond)
	if _, done := ready(p); done {
		t.Fatal("answered before its queue_timeout on the dispatcher's clock")
	}
	clk.Advance(time.Millisecond)
	o := h.result(p)
	var es *ErrShed
	if !errors.As(o.err, &es) || es.Reason != ReasonTimeout || es.Class != "browse" || es.RetryAfter != 3*time.Second {
		t.Fatalf("got %v, want browse timeout with retry 3s", o.err)
	}
	if h.queued() != 0 {
		t.Error("timed-out request still queued")
	}
	hold.Done()
	if n := h.linknum("a"); n != 0 {
		t.Errorf("linknum %d", n)
	}
}

func TestReserveShare(t *testing.T) {
	for _, tt := range []struct {
		reserve float64
		browse  int // browse requests among the first 8 dispatches
	}{{0, 0}, {0.25, 2}, {0.5, 4}} {
		t.Run(fmt.Sprint(tt.reserve), func(t *testing.T) {
			s := schedCfg("priority-lc", 16)
			s.Reserve = tt.reserve
			h := newHarness(t, s, Options{}, board("a", 1))
			hold := h.now(&Request{Class: control})
			classOf := map[*pending]int{}
			var ps []*pending
			for i := 0; i < 8; i++ {
				for _, c := range []int{control, browse} {
					p := h.queue(&Request{Class: c})
					classOf[p] = c
					ps = append(ps, p)
				}
			}
			got := 0
			for i := 0; i < 8; i++ {
				hold.Done()
				var next *pending
				h.poll("dispatch", func() bool {
					for _, p := range ps {
						if o, ok := ready(p); ok {
							next, hold = p, o.t
						}
					}
					return next != nil
				})
				if classOf[next] == browse {
					got++
				}
			}
			if got != tt.browse {
				t.Errorf("reserve %v: %d browse dispatches of 8, want %d", tt.reserve, got, tt.browse)
			}
			hold.Done()
		})
	}
}

func TestFailFast(t *testing.T) {
	clk := newFakeClock()
	s := schedCfg("priority-lc", 64)
	s.QueueTarget = 100 * time.Millisecond
	h := newHarness(t, s, Options{Clock: clk, Interval: 100 * time.Millisecond}, board("a", 1))
	hold := h.now(&Request{Class: control})
	c0 := h.queue(&Request{Class: browse})
	clk.Advance(150 * time.Millisecond) // head sojourn 150ms: above target, interval starts
	c1 := h.queue(&Request{Class: browse})
	clk.Advance(50 * time.Millisecond) // above for 50ms < interval
	c2 := h.queue(&Request{Class: browse})
	clk.Advance(60 * time.Millisecond) // above for 110ms: shed new arrivals at once
	h.shed(&Request{Class: browse}, ReasonOverload)
	h.shed(&Request{Class: browse}, ReasonOverload)
	// another class's queue is judged on its own
	c3 := h.queue(&Request{Class: control})
	// control goes first; then CoDel's head drop answers the browse
	// requests that waited past the target 503, and serves the first one
	// below it, which ends the shedding
	hold.Done()
	o := h.result(c3)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.t.Done()
	for _, p := range []*pending{c0, c1} {
		var es *ErrShed
		if o := h.result(p); !errors.As(o.err, &es) || es.Reason != ReasonOverload {
			t.Fatalf("stale browse request: %v, want a head drop (overload)", o.err)
		}
	}
	o = h.result(c2)
	if o.err != nil {
		t.Fatalf("browse request below the target: %v", o.err)
	}
	hold = o.t
	h.queue(&Request{Class: browse})
	if h.queued() != 1 {
		t.Fatal("browse arrival refused after the queue drained")
	}
	hold.Done()
}

func TestFailFastRecoversOnShortSojourn(t *testing.T) {
	clk := newFakeClock()
	s := schedCfg("priority-lc", 64)
	h := newHarness(t, s, Options{Clock: clk}, board("a", 1))
	hold := h.now(&Request{Class: control})
	p0 := h.queue(&Request{Class: browse})
	clk.Advance(150 * time.Millisecond)
	p1 := h.queue(&Request{Class: browse})
	clk.Advance(150 * time.Millisecond)
	h.shed(&Request{Class: browse}, ReasonOverload)
	p2 := h.queue(&Request{Class: control}) // judged on its own queue
	hold.Done()
	hold = h.result(p2).t
	hold.Done()
	for _, p := range []*pending{p0, p1} {
		var es *ErrShed
		if o := h.result(p); !errors.As(o.err, &es) || es.Reason != ReasonOverload {
			t.Fatalf("stale browse request: %v, want a head drop (overload)", o.err)
		}
	}
	hold = h.now(&Request{Class: browse})  // queue empty: taken at once
	p3 := h.queue(&Request{Class: browse}) // and queued again: shedding stopped
	hold.Done()
	o := h.result(p3)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.t.Done()
}

func TestPinnedRequests(t *testing.T) {
	h := newHarness(t, schedCfg("priority-lc", 8), Options{}, board("a", 1), board("b", 1), board("c", 1))
	onA := h.now(&Request{Class: control, Board: "a"})
	if onA.Board != "a" {
		t.Fatalf("pinned to a, ran on %s", onA.Board)
	}
	waitA := h.queue(&Request{Class: control, Board: "a"})
	// a request for any board is not blocked by the pinned one ahead of it
	anyT := h.now(&Request{Class: browse, Board: "any"})
	if anyT.Board == "a" {
		t.Fatal("request dispatched to a full board")
	}
	if _, ok := ready(waitA); ok {
		t.Fatal("pinned request ran while its board was full")
	}
	h.shed(&Request{Class: control, Board: "nope"}, ReasonNoBoard)
	onA.Done()
	o := h.result(waitA)
	if o.err != nil || o.t.Board != "a" {
		t.Fatalf("pinned request: %v on %q", o.err, o.t.Board)
	}
	o.t.Done()
	anyT.Done()
}

func TestCancelFreesPlace(t *testing.T) {
	h := newHarness(t, schedCfg("priority-lc", 1), Options{}, board("a", 1))
	hold := h.now(&Request{Class: browse})
	p := h.queue(&Request{Class: browse})
	h.shed(&Request{Class: browse}, ReasonFull)
	p.cancel()
	if o := h.result(p); !errors.Is(o.err, context.Canceled) {
		t.Fatalf("cancelled request: %v", o.err)
	}
	if h.queued() != 0 {
		t.Fatal("cancelled request still queued")
	}
	q := h.queue(&Request{Class: browse}) // its place is free again
	hold.Done()
	o := h.result(q)
	o.t.Done()
	if n := h.linknum("a"); n != 0 {
		t.Errorf("linknum %d after all done", n)
	}
	// an already cancelled context never queues
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.d.Acquire(ctx, &Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with dead context: %v", err)
	}
}

func TestDoneIdempotent(t *testing.T) {
	h := newHarness(t, schedCfg("priority-lc", 1), Options{}, board("a", 3))
	t1 := h.now(&Request{})
	t2 := h.now(&Request{})
	t1.Done()
	t1.Done()
	if n := h.linknum("a"); n != 1 {
		t.Fatalf("linknum %d after double Done of one of two tickets, want 1", n)
	}
	t3 := h.now(&Request{}) // reuses t1's flight: t1.Done must still do nothing
	t1.Done()
	if n := h.linknum("a"); n != 2 {
		t.Fatalf("stale ticket changed linknum to %d, want 2", n)
	}
	t2.Done()
	t3.Done()
	t3.Done()
	Ticket{}.Done()
	if n := h.linknum("a"); n != 0 {
		t.Fatalf("linknum %d, want 0", n)
	}
}

func TestCloseAnswersEveryone(t *testing.T) {
	d, err := NewDispatcher(schedCfg("priority-lc", 8), Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, d: d}
	d.Update(rows([]Board{board("a", 1)}))
	hold := h.now(&Request{})
	var ps []*pending
	for i := 0; i < 6; i++ {
		ps = append(ps, h.queue(&Request{Class: i % 2}))
	}
	d.Close()
	d.Close()
	for _, p := range ps {
		if o := h.result(p); !isShed(o.err, ReasonClosed) {
			t.Errorf("queued request at close: %v", o.err)
		}
	}
	h.shed(&Request{}, ReasonClosed)
	hold.Done()
	if n := h.linknum("a"); n != 0 {
		t.Errorf("linknum %d", n)
	}
}

func TestBoardReportsAreTheTruth(t *testing.T) {
	h := newHarness(t, schedCfg("priority-lc", 8), Options{}, board("a", 2))
	// a new master: the board reports 2 in flight that this master never sent
	rep := board("a", 2)
	rep.Linknum = 2
	h.d.Update(rows([]Board{rep}))
	p := h.queue(&Request{})
	if _, ok := ready(p); ok {
		t.Fatal("dispatched to a board whose report says it is full")
	}
	rep.Linknum = 1 // one finished
	h.d.Update(rows([]Board{rep}))
	o := h.result(p)
	if n := h.linknum("a"); n != 2 {
		t.Fatalf("linknum %d, want report 1 + our 1", n)
	}
	o.t.Done()
	if n := h.linknum("a"); n != 1 {
		t.Fatalf("linknum %d after our request finished, want the report's 1", n)
	}
	// the board leaves the table, then comes back stopped, then running
	h.d.Update(rows(nil))
	q := h.queue(&Request{})
	stopped := board("a", 2)
	stopped.Running = false
	h.d.Update(rows([]Board{stopped}))
	if _, ok := ready(q); ok {
		t.Fatal("dispatched to a board that is gone or not running")
	}
	h.d.Update(rows([]Board{board("a", 2)}))
	o = h.result(q)
	if o.err != nil || o.t.Board != "a" {
		t.Fatalf("after the board came back: %v", o.err)
	}
	o.t.Done()
	if got := h.d.Boards(); len(got) != 1 || got[0].Name != "a" || got[0].Linknum != 1 {
		t.Errorf("Boards() = %+v", got)
	}
}

func TestIntegratedOverloadExcludesBoard(t *testing.T) {
	clk := newFakeClock()
	s := schedCfg("integrated", 8)
	s.Integrated.Overload = time.Second
	hot, cool := board("a", 4), board("b", 4)
	hot.Load.CPU, cool.Load.CPU = 0.9, 0.6 // both over the 0.5 limit, only a over 0.7
	h := newHarness(t, s, Options{Clock: clk}, hot, cool)
	clk.Advance(1500 * time.Millisecond)
	h.d.Update(rows([]Board{hot, cool}))
	for i := 0; i < 4; i++ {
		if tk := h.now(&Request{}); tk.Board != "b" {
			t.Fatalf("request %d went to the overloaded board", i)
		}
	}
	p := h.queue(&Request{}) // b is full, a is overloaded: wait
	hot.Load.CPU = 0.3
	h.d.Update(rows([]Board{hot, cool}))
	if o := h.result(p); o.err != nil || o.t.Board != "a" {
		t.Fatalf("after recovery: %v on %q", o.err, o.t.Board)
	}
}

func TestMetrics(t *testing.T) {
	reg := promx.NewRegistry()
	h := newHarness(t, schedCfg("priority-lc", 1), Options{Registerer: reg}, board("a", 1))
	tk := h.now(&Request{Class: control})
	p := h.queue(&Request{Class: browse})
	h.shed(&Request{Class: browse}, ReasonFull)
	if got := float64(h.d.m.depth[browse].Get()); got != 1 {
		t.Errorf("browse depth gauge %v", got)
	}
	tk.Done()
	h.result(p).t.Done()
	want := `
# HELP ews_sched_dispatch_total Requests dispatched, by board and class.
# TYPE ews_sched_dispatch_total counter
ews_sched_dispatch_total{board="a",class="browse"} 1
ews_sched_dispatch_total{board="a",class="control"} 1
# HELP ews_sched_linknum Requests in flight per board as the master counts them.
# TYPE ews_sched_linknum gauge
ews_sched_linknum{board="a"} 0
`
	if got := "\n" + reg.Family("ews_sched_dispatch_total") + reg.Family("ews_sched_linknum"); got != want {
		t.Errorf("scrape:\n%s\nwant:\n%s", got, want)
	}
	if got := float64(h.d.m.shed[browse][rFull].Get()); got != 1 {
		t.Errorf("shed{browse,full} = %v", got)
	}
	if n := reg.Count("ews_sched_queue_wait_seconds"); n != 2 {
		t.Errorf("wait histograms: %d series, want 2", n)
	}
	// a second Dispatcher on the same registry (after a takeover) shares the series
	d2, err := NewDispatcher(schedCfg("priority-lc", 1), Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	d2.Update(rows([]Board{board("a", 1)}))
	tk2, _ := d2.Acquire(context.Background(), &Request{Class: control})
	tk2.Done()
	if got := float64(d2.m.dispatch[0][control].Get()); got != 2 {
		t.Errorf("shared dispatch counter = %v, want 2", got)
	}
}

// A request pinned to a stopped board is refused at once (it cannot run
// anywhere else), and the refusal does not make its class shed requests
// that running boards can take.
func TestFailFastIgnoresRequestsForStoppedBoards(t *testing.T) {
	clk := newFakeClock()
	stopped := board("z", 1)
	stopped.Running = false
	h := newHarness(t, schedCfg("priority-lc", 64), Options{Clock: clk}, board("a", 1), stopped)
	h.shed(&Request{Class: browse, Board: "z"}, ReasonNoBoard)
	for i := 0; i < 3; i++ {
		clk.Advance(time.Second)
		tk := h.now(&Request{Class: browse}) // a is free: runs at once
		p := h.queue(&Request{Class: browse})
		tk.Done()
		h.result(p).t.Done()
	}
	hold := h.now(&Request{Class: browse})
	clk.Advance(time.Second)
	h.queue(&Request{Class: browse}) // waits for a, not refused
	hold.Done()
}

func TestQSCRequestLoadFollowsDispatches(t *testing.T) {
	s := schedCfg("qsc", 8)
	s.Classes[0].Weight, s.Classes[1].Weight = 4, 1
	h := newHarness(t, s, Options{}, board("a", 8))
	reqLoad := func() float64 {
		h.d.mu.Lock()
		defer h.d.mu.Unlock()
		return h.d.byName["a"].ReqLoad
	}
	c := h.now(&Request{Class: control})
	b := h.now(&Request{Class: browse})
	if got := reqLoad(); got != 5 {
		t.Fatalf("request load %v, want 4+1", got)
	}
	c.Done()
	if got := reqLoad(); got != 1 {
		t.Fatalf("request load %v after the control request, want 1", got)
	}
	b.Done()
	b.Done()
	if got := reqLoad(); got != 0 {
		t.Fatalf("request load %v, want 0", got)
	}
}

func TestBadInputToDispatcher(t *testing.T) {
	h := newHarness(t, schedCfg("wlc", 2), Options{},
		Board{Name: "", Capacity: 5, Running: true},                     // no name: ignored
		Board{Name: "a", Capacity: 0, Running: true, Linknum: -1},       // no slots
		Board{Name: "b", Capacity: -3, Running: true, Linknum: -7},      // nonsense capacity
		Board{Name: "c", Capacity: 1, Running: true, Weight: -1},        // bad weight
		Board{Name: "c", Capacity: 1, Running: true, Weight: 0, RT: -1}, // duplicate: last wins
	)
	if _, err := h.d.Acquire(context.Background(), nil); err == nil {
		t.Error("nil request accepted")
	}
	tk := h.now(&Request{Class: 99}) // out of range: last class
	if tk.Board != "c" || tk.Class != browse {
		t.Fatalf("got board %q class %d, want c and the last class", tk.Board, tk.Class)
	}
	if got := len(h.d.Boards()); got != 3 {
		t.Errorf("%d boards known, want 3 (a, b, c)", got)
	}
	p := h.queue(&Request{Class: -1})
	tk.Done()
	h.result(p).t.Done()
	for _, n := range []string{"a", "b", "c"} {
		if l := h.linknum(n); l != 0 {
			t.Errorf("board %s linknum %d", n, l)
		}
	}
}

// A retry excludes the board that failed it: the one selector places it
// elsewhere, sheds it at once when nowhere else is left, and while it waits
// it holds up nobody whose board is free.
func TestExclude(t *testing.T) {
	t.Run("placed on another board", func(t *testing.T) {
		h := newHarness(t, schedCfg("priority-lc", 8), Options{}, board("a", 4), board("b", 4))
		for i := 0; i < 3; i++ {
			if tk := h.now(&Request{Class: browse, Exclude: []string{"a"}}); tk.Board != "b" {
				t.Fatalf("retry %d ran on %s, want b", i, tk.Board)
			}
		}
	})
	t.Run("nowhere else: shed at once", func(t *testing.T) {
		h := newHarness(t, schedCfg("priority-lc", 8), Options{}, board("a", 4))
		h.shed(&Request{Class: browse, Exclude: []string{"a"}}, ReasonNoBoard)
		h.shed(&Request{Class: browse, Board: "a", Exclude: []string{"a"}}, ReasonNoBoard)
	})
	t.Run("waits without blocking the queue", func(t *testing.T) {
		h := newHarness(t, schedCfg("priority-lc", 8), Options{}, board("a", 1), board("b", 1))
		ha, hb := h.now(&Request{Class: browse}), h.now(&Request{Class: browse})
		if ha.Board == hb.Board {
			t.Fatalf("both on %s", ha.Board)
		}
		onA, onB := ha, hb
		if ha.Board == "b" {
			onA, onB = hb, ha
		}
		retry := h.queue(&Request{Class: browse, Exclude: []string{"a"}})
		plain := h.queue(&Request{Class: browse})
		onA.Done() // a frees: the retry may not take it, the request behind it does
		if o := h.result(plain); o.err != nil || o.t.Board != "a" {
			t.Fatalf("request behind the retry: %+v, want a", o)
		}
		if _, done := ready(retry); done {
			t.Fatal("retry answered while only its excluded board was free")
		}
		onB.Done()
		if o := h.result(retry); o.err != nil || o.t.Board != "b" {
			t.Fatalf("retry: %+v, want b", o)
		}
	})
}
