package procload

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/ews-firmware/ews/state"
)

// goodProc writes a complete, healthy /proc (and /sys unless noSys).
func goodProc(f *fakeProc, noSys bool) {
	f.write("proc/stat", "cpu  100 0 100 700 100 0 0 0 0 0\n")
	f.write("proc/meminfo", "MemTotal:       2097152 kB\nMemFree:  100 kB\nMemAvailable:    1048576 kB\n")
	f.write("proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 1200.000\n\n")
	f.write("proc/net/dev", sprintf(netdev, 0, 0, 1000, 1000))
	f.write("proc/diskstats", "   8       0 sda 10 0 0 0 20 0 0 0 0 100 100 0 0 0 0\n")
	if !noSys {
		f.write("sys/class/net/eth0/speed", "1000\n")
	}
}

// warnings counts the Sampler's warnings per figure.
type warnings struct {
	mu sync.Mutex
	n  map[string]int
}

func (w *warnings) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *warnings) WithGroup(string) slog.Handler            { return w }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.Level == slog.LevelWarn {
		w.n[strings.Fields(strings.TrimPrefix(r.Message, "procload: cannot read this board's "))[0]]++
	}
	return nil
}

func panicking(procfs.FS) ([]procfs.CPUInfo, error) {
	var fields []string
	_ = fields[1] // what procfs's ARM parser does on an x86 cpuinfo
	return nil, nil
}

// TestSamplerFigureOnItsOwn: a figure that cannot be read is unknown (0),
// warned about once, and costs no other figure.
func TestSamplerFigureOnItsOwn(t *testing.T) {
	for _, c := range []struct {
		name    string
		noSys   bool
		break_  func(f *fakeProc)
		unknown state.LoadFigures
	}{
		{"healthy", false, func(*fakeProc) {}, 0},
		{"missing /sys", true, func(*fakeProc) {}, 0},
		{"cpuinfo parser panics", false, func(f *fakeProc) { f.smpl.cpuInfo = panicking }, state.FigCPUMHz},
		{"cpuinfo parser fails", false, func(f *fakeProc) {
			f.smpl.cpuInfo = func(procfs.FS) ([]procfs.CPUInfo, error) { return nil, errors.New("no Features line") }
		}, state.FigCPUMHz},
		{"corrupt /proc/stat", false, func(f *fakeProc) { f.write("proc/stat", "cpu  x y z\n") }, state.FigCPU},
		{"truncated /proc/meminfo", false, func(f *fakeProc) { f.write("proc/meminfo", "MemTotal:       2097152 kB\nMemF") }, state.FigMem | state.FigMemMB},
		{"/proc/meminfo without what is free", false, func(f *fakeProc) { f.write("proc/meminfo", "MemTotal:       2097152 kB\n") }, state.FigMem},
		{"empty /proc/meminfo", false, func(f *fakeProc) { f.write("proc/meminfo", "") }, state.FigMem | state.FigMemMB},
		{"corrupt /proc/net/dev", false, func(f *fakeProc) { f.write("proc/net/dev", "Inter-|\n face |\n  eth0: 1 2\n") }, state.FigNet},
		{"no /proc/diskstats", false, func(f *fakeProc) { _ = os.Remove(filepath.Join(f.dir, "proc/diskstats")) }, state.FigDisk},
		{"root file system gone", false, func(f *fakeProc) { f.smpl.Root = filepath.Join(f.dir, "gone") }, state.FigDiskUsed},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeProc(t)
			f.smpl.Root = f.dir
			w := &warnings{n: map[string]int{}}
			f.smpl.Logger = slog.New(w)
			goodProc(f, c.noSys)
			c.break_(f)
			var l0, l1 = f.smpl.Load(), f.smpl.Load()
			for range 3 { // heartbeats: still one warning each
				f.now.Advance(time.Second)
				l1 = f.smpl.Load()
			}
			if got := f.smpl.Unknown(); got != c.unknown {
				t.Fatalf("Unknown() = [%v], want [%v]", got, c.unknown)
			}
			for _, fig := range c.unknown.Names() {
				if w.n[fig] != 1 {
					t.Errorf("%s: %d warnings over 5 samples, want 1", fig, w.n[fig])
				}
			}
			if len(w.n) != len(c.unknown.Names()) {
				t.Errorf("warnings %v, want one for each of [%v]", w.n, c.unknown)
			}
			// every figure not listed still reads as the healthy /proc says
			known := map[state.LoadFigures]bool{
				state.FigCPU: near(l0.CPU, 0.2), state.FigMem: near(l1.Mem, 0.5), state.FigMemMB: near(l1.MemMB, 2048),
				state.FigCPUMHz: near(l1.CPUMHz, 1200), state.FigDiskUsed: l1.DiskUsed > 0,
			}
			for fig, ok := range known {
				if want := c.unknown&fig == 0; ok != want {
					t.Errorf("%s read: %v, want %v (first sample %+v, last %+v)", fig, ok, want, l0, l1)
				}
			}
		})
	}
}

// TestSamplerStaticFiguresReadOnce: cpu_mhz and mem_mb are read at the
// first sample only; later changes (or failures) of their files do not move them.
func TestSamplerStaticFiguresReadOnce(t *testing.T) {
	f := newFakeProc(t)
	goodProc(f, false)
	calls := 0
	f.smpl.cpuInfo = func(fs procfs.FS) ([]procfs.CPUInfo, error) { calls++; return fs.CPUInfo() }
	first := f.smpl.Load()
	f.write("proc/meminfo", "MemTotal:       1024 kB\nMemAvailable:    512 kB\n")
	f.smpl.cpuInfo = panicking
	var l = first
	for range 3 {
		f.now.Advance(time.Second)
		l = f.smpl.Load()
	}
	if calls != 1 || l.CPUMHz != first.CPUMHz || l.MemMB != first.MemMB || !near(l.MemMB, 2048) {
		t.Fatalf("cpuinfo parsed %d times; cpu_mhz %v -> %v, mem_mb %v -> %v; want once, unchanged, 2048 MB",
			calls, first.CPUMHz, l.CPUMHz, first.MemMB, l.MemMB)
	}
	if !near(l.Mem, 0.5) {
		t.Fatalf("mem share %v, want 0.5 from the new meminfo (it is sampled each time)", l.Mem)
	}
	if u := f.smpl.Unknown(); u != 0 {
		t.Fatalf("Unknown() = [%v] after a good start, want none", u)
	}
}

// TestSamplerRecovers: a figure that reads again is no longer unknown.
func TestSamplerRecovers(t *testing.T) {
	f := newFakeProc(t)
	goodProc(f, false)
	f.write("proc/stat", "garbage\n")
	f.smpl.Logger = slog.New(&warnings{n: map[string]int{}})
	f.smpl.Load()
	if u := f.smpl.Unknown(); u != state.FigCPU {
		t.Fatalf("Unknown() = %v, want [cpu]", u)
	}
	f.write("proc/stat", "cpu  100 0 100 700 100 0 0 0 0 0\n")
	f.now.Advance(time.Second)
	if l := f.smpl.Load(); !near(l.CPU, 0.2) || f.smpl.Unknown() != 0 {
		t.Fatalf("cpu %v unknown %v after /proc/stat is good again, want 0.2 and none", l.CPU, f.smpl.Unknown())
	}
}

// TestSamplerMemBeforeMemAvailable: kernels before 3.14 (the XScale
// boards') have no MemAvailable; free + buffers + cached stands in.
func TestSamplerMemBeforeMemAvailable(t *testing.T) {
	f := newFakeProc(t)
	f.write("proc/meminfo", "MemTotal:  1000 kB\nMemFree:  100 kB\nBuffers:  50 kB\nCached:  100 kB\n")
	if l := f.smpl.Load(); !near(l.Mem, 0.75) {
		t.Fatalf("mem %v, want 1 - 250/1000", l.Mem)
	}
}
