package history

import (
	"bytes"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func TestRecordFlushReopen(t *testing.T) {
	dir, c := t.TempDir(), newClock()
	s := openStore(t, dir, c)
	for i := range 10 {
		s.Record("temp1", "°C", 20+float64(i))
		s.Record("relay1", "", float64(i%2))
		c.Add(5 * time.Second)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s.Record("temp1", "°C", 99) // after the flush: written at Close
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, dir, c)
	got := all(s2, "temp1")
	if len(got) != 11 || got[0].V != 20 || got[10].V != 99 {
		t.Fatalf("temp1 after reopen: %d points %v", len(got), got)
	}
	if q, _ := s2.Query("temp1", time.Unix(0, 0), c.Now(), 0); q.Unit != "°C" {
		t.Errorf("unit = %q, want °C", q.Unit)
	}
	if got := all(s2, "relay1"); len(got) != 10 || got[1].V != 1 {
		t.Fatalf("relay1 after reopen: %v", got)
	}
	if st := s2.Status(); st.Dropped != 0 || st.Full {
		t.Errorf("status %+v: want nothing dropped, not full", st)
	}
}

// TestFlushBatches: between flushes nothing reaches the file; a flush is one
// append.
func TestFlushBatches(t *testing.T) {
	dir, c := t.TempDir(), newClock()
	s := openStore(t, dir, c)
	path := filepath.Join(dir, FileName)
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	for range 60 {
		s.Record("temp1", "°C", 21)
		c.Add(5 * time.Second)
	}
	if size() != before {
		t.Fatalf("file grew before the flush: %d -> %d", before, size())
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	grew := size() - before
	if grew <= 0 || grew > 60*rawCost+4*aggCost+100 {
		t.Fatalf("a flush of 60 points wrote %d bytes", grew)
	}
}

func TestDamagedFile(t *testing.T) {
	// three flushes of 5 points each: three blocks
	build := func(t *testing.T) (string, []byte) {
		dir, c := t.TempDir(), newClock()
		s := openStore(t, dir, c)
		for b := range 3 {
			for i := range 5 {
				s.Record("temp1", "°C", float64(b*10+i))
				c.Add(time.Second)
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		s.mu.Lock()
		s.closed = true // a crash: no Close
		s.mu.Unlock()
		data, err := os.ReadFile(filepath.Join(dir, FileName))
		if err != nil {
			t.Fatal(err)
		}
		return dir, data
	}
	_, clean := build(t)
	blocks := blockOffsets(clean)
	if len(blocks) != 3 {
		t.Fatalf("want 3 blocks, found %d", len(blocks))
	}
	cases := []struct {
		name    string
		damage  func([]byte) []byte
		minKept int
		maxKept int
	}{
		{"torn last block", func(b []byte) []byte { return b[:len(b)-7] }, 10, 10},
		{"torn frame header", func(b []byte) []byte { return b[:blocks[2]+5] }, 10, 10},
		{"flipped byte in the middle block", func(b []byte) []byte { b[blocks[1]+20] ^= 0xFF; return b }, 10, 10},
		{"zeroed tail (power loss on a fresh extent)", func(b []byte) []byte { return append(b, make([]byte, 4096)...) }, 15, 15},
		{"bad header", func(b []byte) []byte { copy(b, "XXXXXXXX"); return b }, 15, 15},
		{"garbage", func(b []byte) []byte { return []byte("this is not a history file at all") }, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, data := build(t)
			path := filepath.Join(dir, FileName)
			testutil.WriteFile(t, path, tc.damage(data), 0o640)
			c := newClock()
			c.Add(time.Minute)
			var logs bytes.Buffer
			s := openStore(t, dir, c, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			if !strings.Contains(logs.String(), "dropped unreadable parts") {
				t.Errorf("nothing logged about the drop: %q", logs.String())
			}
			got := all(s, "temp1")
			if len(got) < tc.minKept || len(got) > tc.maxKept {
				t.Fatalf("kept %d points, want %d..%d", len(got), tc.minKept, tc.maxKept)
			}
			if st := s.Status(); st.Dropped == 0 {
				t.Errorf("status %+v: want dropped bytes counted", st)
			}
			// the file was rewritten clean: it opens again with nothing dropped
			s.Record("temp1", "°C", 1)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2 := openStore(t, dir, c)
			if st := s2.Status(); st.Dropped != 0 {
				t.Errorf("second open dropped %d bytes", st.Dropped)
			}
			if n := len(all(s2, "temp1")); n != len(got)+1 {
				t.Errorf("second open: %d points, want %d", n, len(got)+1)
			}
		})
	}
}

func blockOffsets(data []byte) []int {
	var out []int
	for i := 0; i+4 <= len(data); i++ {
		if string(data[i:i+4]) == string(marker[:]) {
			out = append(out, i)
		}
	}
	return out
}

// TestClockStepsBack: points stay in order and no step is negative.
func TestClockStepsBack(t *testing.T) {
	dir, c := t.TempDir(), newClock()
	s := openStore(t, dir, c)
	for i, d := range []time.Duration{5 * time.Second, 5 * time.Second, -time.Hour, 5 * time.Second, -time.Minute, 2 * time.Hour} {
		c.Add(d)
		s.Record("temp1", "°C", float64(i))
	}
	check := func(ps []Point) {
		t.Helper()
		if len(ps) != 6 {
			t.Fatalf("%d points, want 6", len(ps))
		}
		for i := 1; i < len(ps); i++ {
			if ps[i].T.Before(ps[i-1].T) {
				t.Fatalf("point %d at %v before point %d at %v", i, ps[i].T, i-1, ps[i-1].T)
			}
			if ps[i].V != float64(i) {
				t.Fatalf("point %d = %v: order lost", i, ps[i].V)
			}
		}
	}
	check(all(s, "temp1"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check(all(openStore(t, dir, c), "temp1"))
}

// TestDiskFull: a write that fails for lack of space leaves the file as it
// was, says so in Status and the metric, keeps the points and writes them
// once there is room.
func TestDiskFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir, c := t.TempDir(), newClock()
	s := openStore(t, dir, c)
	s.Record("temp1", "°C", 1)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	good := s.Status().Bytes
	full, err := os.OpenFile("/dev/full", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	real := s.f
	s.f = full
	s.mu.Unlock()
	c.Add(time.Second)
	s.Record("temp1", "°C", 2)
	if err := s.Flush(); err == nil {
		t.Fatal("flush to a full disk: no error")
	}
	st := s.Status()
	if !st.Full || st.Error == "" || st.Bytes != good {
		t.Fatalf("status after ENOSPC: %+v (want full, error, %d bytes)", st, good)
	}
	if v := s.m.full.Get(); v != 1 {
		t.Errorf("ews_history_disk_full = %v, want 1", v)
	}
	c.Add(time.Second)
	s.Record("temp1", "°C", 3) // the board goes on recording
	if n := len(all(s, "temp1")); n != 3 {
		t.Fatalf("%d points in memory, want 3", n)
	}
	s.mu.Lock()
	s.f = real
	s.mu.Unlock()
	_ = full.Close()
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.Full || st.Error != "" || s.m.full.Get() != 0 {
		t.Fatalf("status after room came back: %+v", st)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := all(openStore(t, dir, c), "temp1"); len(got) != 3 {
		t.Fatalf("after reopen: %d points, want 3", len(got))
	}
}

// TestThirtyDays runs a month of a sensor read every 5 s on a fake clock:
// full resolution for the last day, 1-minute buckets for the month, and a
// file that stays bounded.
func TestThirtyDays(t *testing.T) {
	if testing.Short() {
		t.Skip("a month of points")
	}
	dir, c := t.TempDir(), newClock()
	start := c.Now()
	s := openStore(t, dir, c)
	const period = 5 * time.Second
	var maxSize int64
	for i := 0; c.Now().Sub(start) < 31*24*time.Hour; i++ {
		s.Record("temp1", "°C", 20+math.Sin(float64(i)/1000))
		c.Add(period)
		if i%60 == 59 { // every 5 minutes
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			maxSize = max(maxSize, s.Status().Bytes)
		}
	}
	now := c.Now()
	day, _ := s.Query("temp1", now.Add(-24*time.Hour), now, 0)
	raw := day.Points
	if day.Step != "" || len(raw) < 17000 {
		t.Fatalf("last day: step %q, %d points; want full resolution", day.Step, len(raw))
	}
	if got := now.Sub(raw[0].T); got > 24*time.Hour+period {
		t.Errorf("full resolution spans %v, want 24h", got)
	}
	month, _ := s.Query("temp1", now.Add(-30*24*time.Hour), now, time.Hour)
	if n := len(month.Points); n < 719 || n > 721 {
		t.Errorf("30 days at 1h: %d points, want 720", n)
	}
	for _, p := range month.Points {
		if p.Min == nil || *p.Min > *p.Mean || *p.Mean > *p.Max || *p.Min < 19 || *p.Max > 21 {
			t.Fatalf("bad bucket %+v", p)
		}
	}
	old, _ := s.Query("temp1", now.Add(-40*24*time.Hour), now.Add(-29*24*time.Hour), 0)
	if n := len(old.Points); n == 0 || n > 24*60+1 {
		t.Errorf("day 30 at 1m: %d points, want 1..1441", n)
	}
	if old.Points[0].T.Before(now.Add(-30*24*time.Hour - time.Minute)) {
		t.Errorf("a point older than 30 days kept: %v", old.Points[0].T)
	}
	live := int64(24*time.Hour/period)*rawCost + 30*24*60*aggCost
	if maxSize > 3*live {
		t.Errorf("file reached %d bytes, more than 3× the %d bytes it holds", maxSize, live)
	}
	t.Logf("file after 31 days: %d bytes (max %d)", s.Status().Bytes, maxSize)
}

func TestMaxBytes(t *testing.T) {
	dir, c := t.TempDir(), newClock()
	const limit = 64 << 10
	s := openStore(t, dir, c, func(o *Options) { o.MaxBytes = limit })
	for i := range 20000 {
		s.Record("temp1", "°C", float64(i))
		c.Add(5 * time.Second)
		if i%60 == 59 {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			if b := s.Status().Bytes; b > limit+60*rawCost+1024 {
				t.Fatalf("file %d bytes, cap %d", b, limit)
			}
		}
	}
	ps := all(s, "temp1")
	if len(ps) == 0 || ps[len(ps)-1].V != 19999 {
		t.Fatalf("the newest points must be kept, got %d points", len(ps))
	}
}

func TestNaNIgnored(t *testing.T) {
	s := openStore(t, t.TempDir(), newClock())
	s.Record("x", "", math.NaN())
	s.Record("x", "", math.Inf(1))
	if _, ok := s.Query("x", time.Unix(0, 0), time.Now(), 0); ok {
		t.Fatal("NaN/Inf recorded")
	}
}

func TestMemoryOnly(t *testing.T) {
	c := newClock()
	s, err := Open(Options{Now: c.Now, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	s.Record("temp1", "°C", 1)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); !st.MemoryOnly || st.File != "" || st.Points == 0 {
		t.Fatalf("status %+v", st)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
