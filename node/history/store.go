// Package history keeps each device's readings and state changes on its board, bounded, batched to the card, and serves them.
package history

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
)

// FileName is the history file inside Options.Dir.
const FileName = "history.log"

// Store holds every series of this board in memory and appends what is new
// to its file at each Flush. Safe for concurrent use.
type Store struct {
	opts Options
	log  *slog.Logger
	path string

	flushMu sync.Mutex // one flush or compaction at a time; taken before mu

	mu     sync.Mutex
	series map[string]*series
	f      *os.File
	size   int64 // bytes of the file that hold good blocks
	status Status
	closed bool

	m metrics
}

// series is one device's points: full resolution for Options.Full, and
// downsampled buckets for Options.Keep (the open bucket is not in agg yet).
type series struct {
	name, unit string
	raw        []rawPt
	agg        []aggPt
	open       acc
	hasOpen    bool
	last       int64 // newest point's time: a clock that steps back never makes a negative step
	flushedRaw int   // raw[:flushedRaw] are in the file
	flushedAgg int   // agg[:flushedAgg] are in the file
}

// Status is what the board page and /api/board show of the history store.
type Status struct {
	File      string    `json:"file"`
	Bytes     int64     `json:"bytes"`
	Series    int       `json:"series"`
	Points    int       `json:"points"`
	LastFlush time.Time `json:"last_flush,omitzero"`
	// Full: the last write failed for lack of space; the file stops
	// growing, points wait in memory (bounded by the retention) and go to
	// the card once it has room.
	Full  bool   `json:"full"`
	Error string `json:"error,omitempty"`
	// Dropped is what Open could not read (power loss, corruption).
	Dropped int64 `json:"dropped_bytes,omitempty"`
	// MemoryOnly: no file (Options.Dir empty); lost at restart.
	MemoryOnly bool `json:"memory_only,omitempty"`
}

type metrics struct {
	points, written, werrs, dropped *promx.Counter
	full, bytes                     *promx.Gauge
}

func newMetrics(r *promx.Registry) metrics {
	return metrics{
		points:  r.Counter("ews_history_points_total", "Readings and state changes recorded into the history."),
		written: r.Counter("ews_history_written_bytes_total", "Bytes the history wrote to its file (appends and compactions)."),
		werrs:   r.Counter("ews_history_write_errors_total", "History writes that failed (disk full, I/O error)."),
		dropped: r.Counter("ews_history_dropped_bytes_total", "Bytes of the history file dropped at start as torn or corrupt."),
		full:    r.Gauge("ews_history_disk_full", "1 while the history cannot write for lack of space: it stops growing."),
		bytes:   r.Gauge("ews_history_file_bytes", "Size of the history file."),
	}
}

// Open reads the history file under opts.Dir (creating the directory and
// file when missing) and returns the Store. A torn or corrupt file is not
// an error: what can be read is kept, the rest dropped, logged and counted,
// and the file rewritten clean.
func Open(opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if opts.Dir == "" {
		s := &Store{opts: opts, log: opts.Logger, series: map[string]*series{}, m: newMetrics(opts.Registerer)}
		s.status.MemoryOnly = true
		return s, nil
	}
	if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	s := &Store{opts: opts, log: opts.Logger, path: filepath.Join(opts.Dir, FileName), series: map[string]*series{}, m: newMetrics(opts.Registerer)}
	s.status.File = s.path
	data, err := os.ReadFile(s.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("history: read %q: %w", s.path, err)
	}
	good, dropped, reasons := scan(data, s.load)
	s.finishLoad()
	if dropped > 0 || (len(data) > 0 && good < int64(len(data))) {
		s.status.Dropped = dropped + max(0, int64(len(data))-good-dropped)
		s.m.dropped.Add(int(s.status.Dropped))
		if len(reasons) > 10 {
			reasons = append(reasons[:10], fmt.Sprintf("and %d more", len(reasons)-10))
		}
		s.log.Warn("history: dropped unreadable parts of the file (power loss?)", "file", s.path, "bytes", s.status.Dropped, "kept_points", s.points(), "why", reasons)
	}
	if len(data) == 0 || s.status.Dropped > 0 {
		// a fresh file, or a clean copy of what was readable
		s.flushMu.Lock()
		err := s.compact()
		s.flushMu.Unlock()
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	f, err := os.OpenFile(s.path, os.O_RDWR, 0o640)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	s.f, s.size = f, good
	s.m.bytes.Set(float64(good))
	return s, nil
}

// load merges one block read from the file.
func (s *Store) load(block []blockSeries) {
	for _, b := range block {
		se := s.get(b.Name)
		if b.Unit != "" {
			se.unit = b.Unit
		}
		se.raw = append(se.raw, b.Raw...)
		se.agg = append(se.agg, b.Agg...)
	}
}

// finishLoad orders each series, merges buckets written twice (a restart
// within a bucket) and trims what is past the retention.
func (s *Store) finishLoad() {
	for _, se := range s.series {
		slices.SortStableFunc(se.raw, func(a, b rawPt) int { return cmp.Compare(a.T, b.T) })
		slices.SortStableFunc(se.agg, func(a, b aggPt) int { return cmp.Compare(a.T, b.T) })
		out := se.agg[:0]
		for _, a := range se.agg {
			if n := len(out); n > 0 && out[n-1].T == a.T {
				out[n-1] = mergeAgg(out[n-1].acc(), a.acc()).pt()
				continue
			}
			out = append(out, a)
		}
		se.agg = out
		if n := len(se.raw); n > 0 {
			se.last = se.raw[n-1].T
		}
		if n := len(se.agg); n > 0 {
			se.last = max(se.last, se.agg[n-1].T)
		}
		se.flushedRaw, se.flushedAgg = len(se.raw), len(se.agg)
	}
	s.trim(s.opts.Now().UnixMilli())
}

func mergeAgg(a, b acc) acc {
	n := a.N + b.N
	if n == 0 {
		return a
	}
	return acc{T: a.T, N: n, Min: math.Min(a.Min, b.Min), Max: math.Max(a.Max, b.Max),
		Mean: (a.Mean*float64(a.N) + b.Mean*float64(b.N)) / float64(n)}
}

func (s *Store) get(name string) *series {
	se := s.series[name]
	if se == nil {
		se = &series{name: name}
		s.series[name] = se
	}
	return se
}

// Record adds a reading (or a state: 1 on, 0 off) of the device called
// name, stamped with the Store's clock. NaN and infinities are ignored.
func (s *Store) Record(name, unit string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	t := s.opts.Now().UnixMilli()
	res := s.opts.Resolution.Milliseconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	se := s.get(name)
	if unit != "" {
		se.unit = unit
	}
	if t < se.last {
		t = se.last // the clock stepped back: keep order, no negative step
	}
	se.last = t
	se.raw = append(se.raw, rawPt{T: t, V: v})
	b := t - t%res
	if se.hasOpen && se.open.T != b {
		se.agg = append(se.agg, se.open.pt())
		se.hasOpen = false
	}
	if !se.hasOpen {
		se.open, se.hasOpen = acc{T: b, N: 1, Min: v, Mean: v, Max: v}, true
	} else {
		o := &se.open
		o.N++
		o.Mean += (v - o.Mean) / float64(o.N)
		o.Min, o.Max = math.Min(o.Min, v), math.Max(o.Max, v)
	}
	s.m.points.Inc()
}

// trim drops what is past the retention at now (ms); held: mu or no
// concurrency yet.
func (s *Store) trim(now int64) {
	rawCut, aggCut := now-s.opts.Full.Milliseconds(), now-s.opts.Keep.Milliseconds()
	for _, se := range s.series {
		i, _ := slices.BinarySearchFunc(se.raw, rawCut, func(p rawPt, t int64) int { return cmp.Compare(p.T, t) })
		if i > 0 {
			se.raw = se.raw[i:] // the next append that grows it frees the old array
			se.flushedRaw = max(0, se.flushedRaw-i)
		}
		j, _ := slices.BinarySearchFunc(se.agg, aggCut, func(p aggPt, t int64) int { return cmp.Compare(p.T, t) })
		if j > 0 {
			se.agg = se.agg[j:]
			se.flushedAgg = max(0, se.flushedAgg-j)
		}
	}
}

// closeBuckets moves open buckets older than now's bucket into agg.
func (s *Store) closeBuckets(now int64, all bool) {
	res := s.opts.Resolution.Milliseconds()
	cur := now - now%res
	for _, se := range s.series {
		if se.hasOpen && (all || se.open.T < cur) {
			se.agg = append(se.agg, se.open.pt())
			se.hasOpen = false
		}
	}
}

func (s *Store) points() int {
	n := 0
	for _, se := range s.series {
		n += len(se.raw) + len(se.agg)
	}
	return n
}

// Status returns the store's state for the board page.
func (s *Store) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.Bytes, st.Series, st.Points = s.size, len(s.series), s.points()
	return st
}

// isFull reports whether err means the card has no room.
func isFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
