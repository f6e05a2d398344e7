package sched

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/ews-firmware/ews/state/row"

	"github.com/jonboulle/clockwork"
)

// newFakeClock is the clock the timing tests drive: sojourn times and
// queue timeouts move only when the test advances it.
func newFakeClock() *clockwork.FakeClock { return clockwork.NewFakeClockAt(time.Unix(1_000_000, 0)) }

// schedCfg is a two-class config (control, browse) with the given queue.
func schedCfg(policy string, queue int) Config {
	s := DefaultConfig()
	s.Policy = policy
	s.Queue = queue
	s.QueueTimeout = time.Minute
	return s
}

const (
	control = 0
	browse  = 1
)

// harness drives a Dispatcher from a test: requests queue in goroutines,
// their outcomes arrive on per-request channels.
type harness struct {
	t *testing.T
	d *Dispatcher
}

type outcome struct {
	t   Ticket
	err error
}

type pending struct {
	out    chan outcome
	cancel context.CancelFunc
}

func newHarness(t *testing.T, s Config, opt Options, boards ...Board) *harness {
	t.Helper()
	d, err := NewDispatcher(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	d.Update(rows(boards))
	t.Cleanup(d.Close)
	return &harness{t: t, d: d}
}

// rows turns boards described as the policies see them into the rows
// Update takes (row.Board, as the state package builds them): running
// means runstate running with an HTTP address.
func rows(bs []Board) []row.Board {
	if bs == nil {
		return nil
	}
	out := make([]row.Board, len(bs))
	for i, b := range bs {
		r := row.Board{Name: b.Name, Rank: b.Rank, HTTP: b.Addr, Capacity: b.Capacity, Weight: int(b.Weight),
			Runstate: row.Down, Load: b.Load, Linknum: b.Linknum}
		if b.Running {
			r.Runstate = row.Running
			if r.HTTP == "" {
				r.HTTP = b.Name + ":8080"
			}
		}
		out[i] = r
	}
	return out
}

// board is a running board with the given capacity and no report yet.
func board(name string, capacity int) Board {
	return Board{Name: name, Rank: int(name[0]), Capacity: capacity, Weight: 1, Running: true, Linknum: -1}
}

// now acquires and expects an immediate dispatch.
func (h *harness) now(req *Request) Ticket {
	h.t.Helper()
	t, err := h.d.Acquire(context.Background(), req)
	if err != nil {
		h.t.Fatalf("Acquire(%+v): %v", req, err)
	}
	return t
}

// shed acquires and expects an immediate shed with reason.
func (h *harness) shed(req *Request, reason string) {
	h.t.Helper()
	_, err := h.d.Acquire(context.Background(), req)
	var es *ErrShed
	if !errors.As(err, &es) || es.Reason != reason {
		h.t.Fatalf("Acquire(%+v) = %v, want shed %q", req, err, reason)
	}
	if es.RetryAfter <= 0 {
		h.t.Errorf("shed without Retry-After")
	}
}

// queue starts an Acquire in a goroutine and returns once it is queued.
func (h *harness) queue(req *Request) *pending {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &pending{out: make(chan outcome, 1), cancel: cancel}
	h.d.mu.Lock()
	seq := h.d.seq
	h.d.mu.Unlock()
	go func() {
		t, err := h.d.Acquire(ctx, req)
		p.out <- outcome{t, err}
	}()
	h.poll("request to queue", func() bool {
		h.d.mu.Lock()
		defer h.d.mu.Unlock()
		return h.d.seq > seq
	})
	return p
}

// poll waits for cond with a deadline.
func (h *harness) poll(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
		time.Sleep(50 * time.Microsecond)
	}
}

// result waits for a pending request's outcome.
func (h *harness) result(p *pending) outcome {
	h.t.Helper()
	select {
	case o := <-p.out:
		return o
	case <-time.After(5 * time.Second):
		h.t.Fatal("no answer within 5s")
	}
	return outcome{}
}

// ready says whether the request was answered, without blocking.
func ready(p *pending) (outcome, bool) {
	select {
	case o := <-p.out:
		return o, true
	default:
		return outcome{}, false
	}
}

func (h *harness) linknum(name string) int {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	b := h.d.byName[name]
	if b.local < 0 {
		h.t.Fatalf("board %s local count %d below zero", name, b.local)
	}
	return b.Linknum
}

func (h *harness) queued() int {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	return h.d.total
}

func isShed(err error, reason string) bool {
	var es *ErrShed
	return errors.As(err, &es) && es.Reason == reason
}
