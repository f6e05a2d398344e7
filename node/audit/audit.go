// Package audit keeps this board's audit log: who did what to which target, with what result, in a bounded rotated file.
package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
)

// Entry is one audited act.
type Entry struct {
	Time   time.Time `json:"time"`
	User   string    `json:"user"`
	Role   string    `json:"role"`
	Action string    `json:"action"` // device.toggle, cgi, login, logout, user.create, firmware.upload, restart, upgrade, ...
	Target string    `json:"target"`
	Result int       `json:"result"` // the HTTP status of the answer
	Client string    `json:"client"`
	Board  string    `json:"board"`
}

// Options configure New.
type Options struct {
	Path string // the log file; "" keeps entries in memory only (Recent)
	// MaxBytes caps the file; past it the file moves to Path+".1" (the
	// one older generation kept) and a new one starts. Default 1 MiB: at
	// ~200 bytes an entry, two files hold about 10,000 entries.
	MaxBytes int64
	// Buffer is how many entries wait for the writer at most; past it an
	// entry is dropped and counted (ews_audit_dropped_total). Default
	// 16,384: 10,000 entries a minute never come near it. The queue takes
	// memory only for the entries waiting, to keep a board's idle RSS
	// small (docs/NOTES.md, Packaging and binary size).
	Buffer     int
	Board      string
	Registerer *promx.Registry // ews_audit_entries_total, ews_audit_dropped_total; nil: not registered
	Logger     *slog.Logger
	Now        func() time.Time
}

// Log is this board's audit log. Record never blocks; Run writes.
type Log struct {
	opts    Options
	qmu     sync.Mutex    // queue
	queue   []Entry       // recorded, not yet written: at most opts.Buffer
	kick    chan struct{} // one pending wake-up for Run
	dropped *promx.Counter
	written *promx.Counter
	mu      sync.Mutex // the files, and mem
	mem     []Entry    // without a Path: the newest entries
	size    int64
	synced  chan chan struct{}
}

// New returns the log; nothing runs until Run.
func New(opts Options) *Log {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 1 << 20
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 16384
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := &Log{opts: opts, kick: make(chan struct{}, 1), synced: make(chan chan struct{})}
	if opts.Path != "" {
		if st, err := os.Stat(opts.Path); err == nil {
			l.size = st.Size()
		}
	}
	l.written = opts.Registerer.Counter("ews_audit_entries_total", "Audit entries written by this board.")
	l.dropped = opts.Registerer.Counter("ews_audit_dropped_total", "Audit entries dropped because the writer fell behind (the buffer cap).")
	return l
}

// Record queues e (Time and Board filled when empty); a full buffer drops
// it and counts the drop.
func (l *Log) Record(e Entry) {
	if e.Time.IsZero() {
		e.Time = l.opts.Now()
	}
	if e.Board == "" {
		e.Board = l.opts.Board
	}
	l.qmu.Lock()
	full := len(l.queue) >= l.opts.Buffer
	if !full {
		l.queue = append(l.queue, e)
	}
	l.qmu.Unlock()
	if full {
		l.dropped.Inc()
		return
	}
	select {
	case l.kick <- struct{}{}:
	default: // Run is already woken
	}
}

// Dropped is how many entries the buffer cap dropped.
func (l *Log) Dropped() uint64 { return l.dropped.Get() }

// Run writes queued entries until ctx ends, then writes what is queued;
// it returns nil then.
func (l *Log) Run(ctx context.Context) error {
	for {
		select {
		case <-l.kick:
			l.drain()
		case done := <-l.synced:
			l.drain()
			close(done)
		case <-ctx.Done():
			l.drain()
			return nil
		}
	}
}

// Sync waits until what was recorded before it is written (or ctx ends).
func (l *Log) Sync(ctx context.Context) {
	done := make(chan struct{})
	select {
	case l.synced <- done:
		<-done
	case <-ctx.Done():
	}
}

// drain writes every queued entry. The queue's array is reused, and
// dropped once it has grown past a small burst, so a burst's memory does not
// stay with the board.
func (l *Log) drain() {
	var batch []Entry
	for {
		l.qmu.Lock()
		batch, l.queue = l.queue, batch[:0]
		l.qmu.Unlock()
		if len(batch) == 0 {
			return
		}
		for i, e := range batch {
			l.write(e)
			batch[i] = Entry{}
		}
		if cap(batch) > drainKeep {
			batch = nil
		}
	}
}

// drainKeep is the largest queue array drain keeps for reuse.
const drainKeep = 64

// memMax bounds the in-memory log (no Path).
const memMax = 10000

func (l *Log) write(e Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.written.Inc()
	if l.opts.Path == "" {
		l.mem = append(l.mem, e)
		if len(l.mem) > memMax {
			l.mem = slices.Delete(l.mem, 0, len(l.mem)-memMax)
		}
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	b = append(b, '\n')
	if l.size+int64(len(b)) > l.opts.MaxBytes && l.size > 0 {
		if err := os.Rename(l.opts.Path, l.opts.Path+".1"); err != nil && !os.IsNotExist(err) {
			l.opts.Logger.Warn("audit: rotate", "err", err)
		}
		l.size = 0
	}
	f, err := os.OpenFile(l.opts.Path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		l.opts.Logger.Warn("audit: open", "err", err)
		return
	}
	n, err := f.Write(b)
	l.size += int64(n)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		l.opts.Logger.Warn("audit: write", "err", err)
	}
}

// Filter selects entries.
type Filter struct {
	Limit  int       // default 100, at most 1000
	Before time.Time // only entries older than this; zero: any
	User   string
	Target string
}

// MaxLimit bounds Filter.Limit.
const MaxLimit = 1000

// Norm fills defaults and bounds.
func (f Filter) Norm() Filter {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	f.Limit = min(f.Limit, MaxLimit)
	return f
}

// Match reports whether e passes f.
func (f Filter) Match(e Entry) bool {
	return (f.Before.IsZero() || e.Time.Before(f.Before)) && (f.User == "" || e.User == f.User) && (f.Target == "" || e.Target == f.Target)
}

// Query returns this board's entries that pass f, newest first.
func (l *Log) Query(f Filter) ([]Entry, error) {
	f = f.Norm()
	l.mu.Lock()
	defer l.mu.Unlock()
	var all []Entry
	if l.opts.Path == "" {
		all = slices.Clone(l.mem)
	} else {
		for _, p := range []string{l.opts.Path + ".1", l.opts.Path} {
			b, err := os.ReadFile(p)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("audit: read %q: %w", p, err)
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 64<<10)
			for sc.Scan() {
				var e Entry
				if json.Unmarshal(sc.Bytes(), &e) == nil { // a torn last line after a crash is skipped
					all = append(all, e)
				}
			}
		}
	}
	out := make([]Entry, 0, min(len(all), f.Limit))
	for i := len(all) - 1; i >= 0 && len(out) < f.Limit; i-- {
		if f.Match(all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// Merge merges lists of entries (each newest first, from several boards)
// into one, newest first, at most limit.
func Merge(limit int, lists ...[]Entry) []Entry {
	var all []Entry
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.SortStableFunc(all, func(a, b Entry) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Board, b.Board)
	})
	return all[:min(len(all), limit)]
}
