package history

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Encoded sizes, about, of a point and of a series' header in a block: what
// the compaction and the size cap reckon with.
const (
	rawCost    = 10
	aggCost    = 16
	seriesCost = 24
	chunk      = 1 << 16 // points per block when the file is rewritten
)

// Run flushes every Options.Flush until ctx ends and returns nil: a failed
// flush is logged and tried again (the points stay in memory). The caller
// owns the goroutine; Close writes what is left.
func (s *Store) Run(ctx context.Context) error {
	t := time.NewTicker(s.opts.Flush)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := s.Flush(); err != nil {
				s.log.Warn("history: flush", "err", err)
			}
		}
	}
}

// Flush appends the points recorded since the last flush to the file in one
// write and syncs it; when the file has grown well past what it holds (old
// points expired) or past Options.MaxBytes, it is rewritten instead. On a
// failed write the file is cut back to its last good block and the points
// stay in memory for the next flush.
func (s *Store) Flush() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	_, err := s.closeAndFlush(false)
	return err
}

// closeAndFlush closes the buckets that are over (all: the open ones too)
// and writes them, with flushMu held; closed: the store was closed
// already, and nothing was done.
func (s *Store) closeAndFlush(all bool) (closed bool, err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return true, nil
	}
	now := s.opts.Now().UnixMilli()
	s.closeBuckets(now, all)
	return false, s.flushLocked(now)
}

// flushLocked is Flush with flushMu and mu held; it releases mu.
func (s *Store) flushLocked(now int64) error {
	s.trim(now)
	if s.status.MemoryOnly {
		s.capSize()
		s.mu.Unlock()
		return nil
	}
	var blocks []blockSeries
	type mark struct {
		se     *series
		nr, na int
	}
	var marks []mark
	for _, name := range s.names() {
		se := s.series[name]
		raw, agg := se.raw[se.flushedRaw:len(se.raw):len(se.raw)], se.agg[se.flushedAgg:len(se.agg):len(se.agg)]
		if len(raw)+len(agg) == 0 {
			continue
		}
		blocks = append(blocks, blockSeries{Name: se.name, Unit: se.unit, Raw: raw, Agg: agg})
		marks = append(marks, mark{se, len(raw), len(agg)})
	}
	live := s.liveBytes()
	f, size := s.f, s.size
	s.mu.Unlock()
	if f == nil || size > 2*live+64<<10 || size > s.opts.MaxBytes {
		return s.compact()
	}
	if len(blocks) == 0 {
		return nil
	}
	buf := appendBlock(nil, blocks)
	_, err := f.WriteAt(buf, size)
	if err == nil && !s.opts.noSync {
		err = f.Sync()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		_ = f.Truncate(size) // never leave a torn block behind a good one
		s.failed(err)
		return fmt.Errorf("history: write %q: %w", s.path, err)
	}
	for _, m := range marks {
		m.se.flushedRaw += m.nr
		m.se.flushedAgg += m.na
	}
	s.size += int64(len(buf))
	s.wrote(len(buf))
	return nil
}

func (s *Store) names() []string {
	names := make([]string, 0, len(s.series))
	for n := range s.series {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// liveBytes is about what the points held would take in a fresh file.
func (s *Store) liveBytes() int64 {
	n := int64(len(fileHeader))
	for _, se := range s.series {
		n += seriesCost + int64(len(se.raw))*rawCost + int64(len(se.agg))*aggCost
	}
	return n
}

// failed records a failed write; mu held.
func (s *Store) failed(err error) {
	s.m.werrs.Inc()
	full := isFull(err)
	if full != s.status.Full || s.status.Error == "" {
		if full {
			s.log.Error("history: the card is full; history stops growing until it has room", "file", s.path, "err", err)
		} else {
			s.log.Error("history: write failed", "file", s.path, "err", err)
		}
	}
	s.status.Full, s.status.Error = full, err.Error()
	if full {
		s.m.full.Set(1)
	}
}

// wrote records a good write of n bytes; mu held.
func (s *Store) wrote(n int) {
	if s.status.Error != "" {
		s.log.Info("history: writing again", "file", s.path)
	}
	s.status.Full, s.status.Error, s.status.LastFlush = false, "", s.opts.Now()
	s.m.full.Set(0)
	s.m.written.Add(n)
	s.m.bytes.Set(float64(s.size))
}

// capSize drops the oldest points until what is kept fits in 3/4 of
// MaxBytes (room to append before the next rewrite); mu held.
func (s *Store) capSize() {
	target := s.opts.MaxBytes * 3 / 4
	for s.liveBytes() > target {
		oldest, found, raw := int64(0), false, false
		for _, se := range s.series {
			if len(se.agg) > 0 && (!found || se.agg[0].T < oldest) {
				oldest, found = se.agg[0].T, true
			}
		}
		if !found {
			raw = true
			for _, se := range s.series {
				if len(se.raw) > 0 && (!found || se.raw[0].T < oldest) {
					oldest, found = se.raw[0].T, true
				}
			}
		}
		if !found {
			return
		}
		cut := oldest + time.Hour.Milliseconds()
		for _, se := range s.series {
			if raw {
				i, _ := slices.BinarySearchFunc(se.raw, cut, func(p rawPt, t int64) int { return cmp.Compare(p.T, t) })
				se.raw = slices.Clone(se.raw[i:])
				se.flushedRaw = max(0, se.flushedRaw-i)
			} else {
				i, _ := slices.BinarySearchFunc(se.agg, cut, func(p aggPt, t int64) int { return cmp.Compare(p.T, t) })
				se.agg = slices.Clone(se.agg[i:])
				se.flushedAgg = max(0, se.flushedAgg-i)
			}
		}
	}
}

// compact rewrites the file with what is kept: write a new file, sync it,
// rename it over the old one, sync the directory. A crash at any point
// leaves either file whole. flushMu held.
func (s *Store) compact() error {
	s.mu.Lock()
	s.trim(s.opts.Now().UnixMilli())
	s.capSize()
	buf := []byte(fileHeader)
	counts := map[*series][2]int{}
	for _, name := range s.names() {
		se := s.series[name]
		counts[se] = [2]int{len(se.raw), len(se.agg)}
		for i := 0; i < len(se.raw); i += chunk {
			buf = appendBlock(buf, []blockSeries{{Name: se.name, Unit: se.unit, Raw: se.raw[i:min(i+chunk, len(se.raw))]}})
		}
		for i := 0; i < len(se.agg); i += chunk {
			buf = appendBlock(buf, []blockSeries{{Name: se.name, Unit: se.unit, Agg: se.agg[i:min(i+chunk, len(se.agg))]}})
		}
	}
	s.mu.Unlock()

	f, err := writeFile(s.path, buf)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed(err)
		return fmt.Errorf("history: rewrite %q: %w", s.path, err)
	}
	if s.f != nil {
		_ = s.f.Close()
	}
	s.f, s.size = f, int64(len(buf))
	for se, c := range counts {
		se.flushedRaw, se.flushedAgg = c[0], c[1]
	}
	s.wrote(len(buf))
	return nil
}

// writeFile replaces path with data (write-then-rename) and returns it
// open for appending.
func writeFile(path string, data []byte) (*os.File, error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return nil, err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the rename itself survives power loss
		_ = d.Close()
	}
	return f, nil
}

// Close closes the open buckets, writes what is left and closes the file.
// Later calls do nothing.
func (s *Store) Close() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	closed, err := s.closeAndFlush(true)
	if closed {
		return nil
	}
	s.mu.Lock()
	s.closed = true
	if s.f != nil {
		err = errors.Join(err, s.f.Close())
		s.f = nil
	}
	s.mu.Unlock()
	return err
}
