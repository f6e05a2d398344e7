package bench

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// runClosed is the closed loop (Config.Closed): that many clients, each
// sends a request, waits for its answer, thinks an exponential time of
// mean Config.Think, and sends again (the shape of WebBench and httperf's
// sessions), until the window, Max or ctx ends. The load is what the
// server lets through: its latency slows the clients, so unlike the open
// loop this measures the throughput N users get, not the latency at a
// fixed rate. Latency runs from the send to the end of the answer. It
// returns after every client has stopped (each request bounded by Timeout).
func (r *runner) runClosed(ctx context.Context) *Report {
	cfg := r.cfg
	r.start = time.Now()
	stopProgress := r.startProgress()
	window, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var n atomic.Int64
	var wg sync.WaitGroup
	for i := range cfg.Closed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.client(window, i, &n)
		}()
	}
	wg.Wait()
	elapsed := min(time.Since(r.start), cfg.Duration)
	stopProgress()
	return r.report(elapsed, ctx.Err() != nil)
}

// client is one closed-loop client: its class draws and think times come
// from its own seeded stream (seed, client number).
func (r *runner) client(ctx context.Context, i int, n *atomic.Int64) {
	cfg := r.cfg
	classes := NewArrivals(cfg.Seed+uint64(i)*0x9e37, 1, cfg.Classes)
	think := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for ctx.Err() == nil {
		if cfg.Max > 0 && n.Add(1) > cfg.Max {
			return
		}
		cls := classes.Next().Class
		st := r.stats[cls]
		st.due.Add(1)
		st.sent.Add(1)
		r.inflight.Add(1)
		r.send(time.Now(), cls, i)
		d := time.Duration(think.ExpFloat64() * float64(cfg.Think))
		if d <= 0 {
			continue
		}
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
	}
}
