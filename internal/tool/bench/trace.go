package bench

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/reqtrace"
)

// The per-request trace (Config.Trace, --trace; issue 49): every request
// asks the cluster for its marks (reqtrace.Header) and each answer's
// marks become the time spent between hand-offs, per class.

// TraceReport is one class's trace: how long its answered requests spent
// between hand-offs (Stages, in the order below), over all of them and
// over the slowest (at or above the class's p99).
type TraceReport struct {
	Traced int `json:"traced"` // answers that carried marks
	Joined int `json:"joined"` // reads that joined a read of their device under way on the board
	Cached int `json:"cached"` // reads answered from a young reading on the board
	Shared int `json:"shared"` // reads answered on the entry board from a read of the same device under way there
	// TailN is how many requests the tail means are over (latency >= p99).
	TailN int `json:"tail_n"`
	// Sent is the latency from each request's actual send, not its
	// intended one: without the sender's own lateness (lag_p99_ms), which
	// on a busy machine can be most of latency_ms's tail.
	Sent   Latency      `json:"sent_ms"`
	Stages []TraceStage `json:"stages"`
}

// TraceStage is the time between two hand-offs.
type TraceStage struct {
	Name     string  `json:"name"`
	N        int     `json:"n"` // requests that passed it
	Latency  Latency `json:"ms"`
	TailMean float64 `json:"tail_mean_ms"` // mean over those of the class's slowest requests (TailN) that passed it
}

// traceStages are the stages reported, each from one mark to the next:
//   - to_entry: the client's send to the entry board's accepting it
//   - queue: entry to placed (the master's queue and placement; a follower's placement round trip)
//   - device_queue, slot_wait: the queue of a device request the master placed itself, split
//     at the mark where its device could start it (free): before, its device's; after, a slot's
//   - forward: placed to the board that runs it starting it
//   - device_wait: run to its own device operation starting (the board's device lock)
//   - device: its own device operation
//   - shared: a read that joined one under way, to that read's end (on the board: joined to
//     done; at the entry: enter to the copy of the first read's answer)
//   - answer: the last mark to the client having the whole answer
var traceStages = []string{"to_entry", "queue", "forward", "device_wait", "device", "shared", "answer", "device_queue", "slot_wait"}

// traceSample is one answered request's stages (-1: not passed).
type traceSample struct {
	total  time.Duration
	sent   time.Duration // from the actual send
	stages [9]time.Duration
}

// traceStats collects a class's samples; bounded so a long run keeps memory flat.
type traceStats struct {
	mu                     sync.Mutex
	samples                []traceSample
	joined, cached, shared int
}

const maxTraceSamples = 200_000

// record turns an answer's marks into a sample: sent and got are the
// client's send and the end of the answer's body.
func (t *traceStats) record(h http.Header, sent, got time.Time, total time.Duration) {
	m := reqtrace.Parse(h)
	if len(m) == 0 {
		return
	}
	s := traceSample{total: total, sent: got.Sub(sent)}
	for i := range s.stages {
		s.stages[i] = -1
	}
	span := func(i int, from, to time.Time) {
		if !from.IsZero() && !to.IsZero() {
			s.stages[i] = max(to.Sub(from), 0)
		}
	}
	enter, placed, run := m[reqtrace.Enter], m[reqtrace.Placed], m[reqtrace.Run]
	last := run
	if sh, ok := m[reqtrace.Shared]; ok { // answered at the entry from the same read under way there
		last = sh
		span(5, enter, sh)
	}
	span(0, sent, enter)
	span(1, enter, placed)
	if free, ok := m[reqtrace.Free]; ok {
		if free.Before(enter) {
			free = enter
		}
		if free.After(placed) {
			free = placed
		}
		span(7, enter, free)
		span(8, free, placed)
	}
	span(2, placed, run)
	if lock, ok := m[reqtrace.Lock]; ok {
		span(3, run, lock)
		span(4, lock, m[reqtrace.Done])
	}
	if j, ok := m[reqtrace.Joined]; ok {
		span(3, run, j)
		span(5, j, m[reqtrace.Done])
	}
	if d, ok := m[reqtrace.Done]; ok {
		last = d
	}
	span(6, last, got)
	t.mu.Lock()
	defer t.mu.Unlock()
	_, j := m[reqtrace.Joined]
	_, c := m[reqtrace.Cached]
	_, sh := m[reqtrace.Shared]
	t.joined += b2i(j)
	t.cached += b2i(c)
	t.shared += b2i(sh)
	if len(t.samples) < maxTraceSamples {
		t.samples = append(t.samples, s)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// merge adds o's samples and counts to t (Report.Control's trace).
func (t *traceStats) merge(o *traceStats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.samples = append(t.samples, o.samples...)
	t.joined += o.joined
	t.cached += o.cached
	t.shared += o.shared
}

// report summarises the samples; nil when none carried marks.
func (t *traceStats) report() *TraceReport {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.samples) == 0 {
		return nil
	}
	totals, sents := make([]time.Duration, len(t.samples)), make([]time.Duration, len(t.samples))
	for i, s := range t.samples {
		totals[i], sents[i] = s.total, s.sent
	}
	slices.Sort(totals)
	cut := totals[min(max(int(0.99*float64(len(totals))+0.999999)-1, 0), len(totals)-1)]
	rep := &TraceReport{Traced: len(t.samples), Joined: t.joined, Cached: t.cached, Shared: t.shared, Sent: Summarize(sents)}
	for _, s := range t.samples {
		if s.total >= cut {
			rep.TailN++
		}
	}
	for i, name := range traceStages {
		var all []time.Duration
		var tail time.Duration
		tailN := 0
		for _, s := range t.samples {
			if s.stages[i] < 0 {
				continue
			}
			all = append(all, s.stages[i])
			if s.total >= cut {
				tail += s.stages[i]
				tailN++
			}
		}
		if len(all) == 0 {
			continue
		}
		st := TraceStage{Name: name, N: len(all), Latency: Summarize(all)}
		if tailN > 0 {
			st.TailMean = ms(tail) / float64(tailN)
		}
		rep.Stages = append(rep.Stages, st)
	}
	return rep
}
