package reqtrace

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Header asks for a trace (value "1" on the request) and carries one
// mark per hand-off on the answer, each "STAGE=UNIXNANO" (wall clock of
// the board that passed it; the boards of a testbed share one clock).
// Every board the request crosses adds its own marks to the answer, so
// a client sees the whole way. Off unless a client asks; it tells a
// client only when its own request passed each stage.
const Header = "X-Ews-Trace"

// The stages, in the order a request passes them.
const (
	Enter  = "enter"  // the entry board accepted it (after the credentials and the body)
	Free   = "free"   // on the master, its device could start it: from here it waited for a slot
	Placed = "placed" // its Placer answered: a slot on a board (the master's queue and placement)
	Run    = "run"    // the board that runs it started it (its handlers)
	Lock   = "lock"   // the device was free for it: its own operation starts
	Joined = "joined" // a read joined the device's read under way instead
	Cached = "cached" // a read answered from a young reading (max_age)
	Done   = "done"   // the device operation (or the read it joined) ended
	Shared = "shared" // answered on the entry board from a read of the same device under way there
)

// Trace is one request's marks on this board. Safe for concurrent use.
type Trace struct {
	mu    sync.Mutex
	marks []string
}

type key struct{}

// Asked reports whether r asks for a trace.
func Asked(r *http.Request) bool { return r.Header.Get(Header) == "1" }

// With returns ctx carrying t.
func With(ctx context.Context, t *Trace) context.Context { return context.WithValue(ctx, key{}, t) }

// From is the trace ctx carries, nil for none.
func From(ctx context.Context) *Trace {
	t, _ := ctx.Value(key{}).(*Trace)
	return t
}

// Mark records stage now in the trace ctx carries; nothing without one.
func Mark(ctx context.Context, stage string) {
	if t := From(ctx); t != nil {
		t.Mark(stage, time.Now())
	}
}

// Mark records stage at at.
func (t *Trace) Mark(stage string, at time.Time) {
	t.mu.Lock()
	t.marks = append(t.marks, stage+"="+strconv.FormatInt(at.UnixNano(), 10))
	t.mu.Unlock()
}

// Flush adds the marks recorded so far to h (the answer's header) and
// forgets them, so a later Flush adds only newer ones.
func (t *Trace) Flush(h http.Header) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.marks) > 0 {
		h.Add(Header, strings.Join(t.marks, ","))
		t.marks = t.marks[:0]
	}
}

// Parse reads the marks of an answer's header: stage → time. A stage
// passed twice (a retry) keeps its last time. Malformed marks are
// skipped: the trace is a measurement, not part of the answer.
func Parse(h http.Header) map[string]time.Time {
	out := map[string]time.Time{}
	for _, v := range h.Values(Header) {
		for _, m := range strings.Split(v, ",") {
			stage, ns, ok := strings.Cut(strings.TrimSpace(m), "=")
			if !ok || stage == "" {
				continue
			}
			n, err := strconv.ParseInt(ns, 10, 64)
			if err != nil || n <= 0 {
				continue
			}
			out[stage] = time.Unix(0, n)
		}
	}
	return out
}
