// Package logring keeps a board's recent log lines in a bounded ring and tees slog records into it.
package logring

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"time"
)

// DefaultSize is how many lines a ring keeps unless told otherwise.
const DefaultSize = 500

// Line is one log record as the board page shows it.
type Line struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Level string    `json:"level"`
	Text  string    `json:"text"` // message and attributes, logfmt
}

// Ring holds the last Size lines. Safe for concurrent use.
type Ring struct {
	mu    sync.Mutex
	lines []Line // circular once full
	next  int
	seq   uint64
	size  int
	hook  func(Line)
	inner slog.Handler
}

// New returns a ring of size lines (DefaultSize when size <= 0).
func New(size int) *Ring {
	if size <= 0 {
		size = DefaultSize
	}
	return &Ring{size: size}
}

// OnLine sets f to be called, outside the ring's lock, with every new line.
// f must not log through the teed handler (it would call itself).
func (r *Ring) OnLine(f func(Line)) {
	r.mu.Lock()
	r.hook = f
	r.mu.Unlock()
}

// Add appends one line and returns it with its sequence number.
func (r *Ring) Add(t time.Time, level, text string) Line {
	r.mu.Lock()
	r.seq++
	l := Line{Seq: r.seq, Time: t, Level: level, Text: text}
	if len(r.lines) < r.size {
		r.lines = append(r.lines, l)
	} else {
		r.lines[r.next] = l
		r.next = (r.next + 1) % r.size
	}
	hook := r.hook
	r.mu.Unlock()
	if hook != nil {
		hook(l)
	}
	return l
}

// Lines returns the kept lines, oldest first.
func (r *Ring) Lines() []Line {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Line, 0, len(r.lines))
	out = append(out, r.lines[r.next:]...)
	return append(out, r.lines[:r.next]...)
}

// Inner is the handler Tee wrapped (nil before Tee): a logger that does not
// feed the ring, for code that runs inside OnLine.
func (r *Ring) Inner() slog.Handler {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inner
}

// Tee returns a handler that passes every record to h and also adds it,
// at h's level and above, to the ring.
func (r *Ring) Tee(h slog.Handler) slog.Handler {
	r.mu.Lock()
	r.inner = h
	r.mu.Unlock()
	return &tee{ring: r, next: h}
}

type tee struct {
	ring *Ring
	next slog.Handler
	ops  []func(slog.Handler) slog.Handler // WithAttrs/WithGroup calls, replayed on the ring's formatter
}

func (t *tee) Enabled(ctx context.Context, l slog.Level) bool { return t.next.Enabled(ctx, l) }

func (t *tee) Handle(ctx context.Context, rec slog.Record) error {
	t.ring.Add(rec.Time, rec.Level.String(), t.format(rec))
	return t.next.Handle(ctx, rec)
}

// format renders the message and attributes as logfmt, without time and
// level (the Line carries them).
func (t *tee) format(rec slog.Record) string {
	var buf bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&buf, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
				return slog.Attr{}
			}
			return a
		},
	})
	for _, op := range t.ops {
		h = op(h)
	}
	_ = h.Handle(context.Background(), rec)
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func (t *tee) with(next slog.Handler, op func(slog.Handler) slog.Handler) *tee {
	return &tee{ring: t.ring, next: next, ops: append(t.ops[:len(t.ops):len(t.ops)], op)}
}

func (t *tee) WithAttrs(as []slog.Attr) slog.Handler {
	return t.with(t.next.WithAttrs(as), func(h slog.Handler) slog.Handler { return h.WithAttrs(as) })
}

func (t *tee) WithGroup(name string) slog.Handler {
	return t.with(t.next.WithGroup(name), func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}
