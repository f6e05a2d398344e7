package bench

import (
	"sync"
	"time"
)

// job is one request to send: its class and when it was due.
type job struct {
	intended time.Time
	cls      int
	client   int // Config.Clients: the simulated client that sends it
}

// workers runs each request in flight on its own goroutine, and keeps those goroutines for the
// next requests instead of starting one per request: a fresh goroutine regrows its stack through
// net/http's deep call chain every time (about a fifth of the sender's CPU at a few thousand
// requests/s). A worker starts only when every existing one is busy, so the number of workers is
// the peak number of requests in flight, at most the cap. dispatch and close belong to the sender
// goroutine; the workers end after close, once their request is done.
type workers struct {
	run  func(job)
	idle chan chan job // inboxes of idle workers; room for all, so putting one back never blocks
	all  []chan job    // every inbox, to close at the end
	wg   sync.WaitGroup
}

func newWorkers(limit int, run func(job)) *workers {
	return &workers{run: run, idle: make(chan chan job, limit)}
}

// dispatch hands j to an idle worker, or starts one. The caller has checked that fewer than the
// cap of requests are in flight, so when all cap workers exist one of them is about to be idle.
func (p *workers) dispatch(j job) {
	select {
	case in := <-p.idle:
		in <- j
		return
	default:
	}
	if len(p.all) < cap(p.idle) {
		in := make(chan job, 1)
		p.all = append(p.all, in)
		p.wg.Add(1)
		go p.loop(in)
		in <- j
		return
	}
	in := <-p.idle // a worker between the end of its request and putting itself back
	in <- j
}

func (p *workers) loop(in chan job) {
	defer p.wg.Done()
	for j := range in {
		p.run(j) // recovers its own panics
		p.idle <- in
	}
}

// close lets every worker end after its current request; wait blocks until they have.
func (p *workers) close() {
	for _, in := range p.all {
		close(in)
	}
	p.all = nil
}

func (p *workers) wait() { p.wg.Wait() }
