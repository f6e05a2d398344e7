package procload

import (
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

type fakeProc struct {
	t    *testing.T
	dir  string
	now  *clockwork.FakeClock
	smpl *Sampler
}

func newFakeProc(t *testing.T) *fakeProc {
	f := &fakeProc{t: t, dir: t.TempDir(), now: clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	f.smpl = &Sampler{Proc: filepath.Join(f.dir, "proc"), Sys: filepath.Join(f.dir, "sys"), Clock: f.now,
		Logger: slog.New(slog.DiscardHandler)}
	return f
}

func (f *fakeProc) write(rel, data string) {
	p := filepath.Join(f.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

const netdev = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: %d 0 0 0 0 0 0 0 %d 0 0 0 0 0 0 0
  eth0: %d 0 0 0 0 0 0 0 %d 0 0 0 0 0 0 0
`

func near(a, b float64) bool { return math.Abs(a-b) < 1e-3 }

func TestSamplerDeltas(t *testing.T) {
	f := newFakeProc(t)
	f.write("proc/stat", "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2 3 4\n")
	f.write("proc/meminfo", "MemTotal:       1000 kB\nMemFree:  100 kB\nMemAvailable:    250 kB\n")
	f.write("proc/net/dev", sprintf(netdev, 5000, 5000, 1000, 1000))
	f.write("proc/diskstats", "   8       0 sda 1 0 0 0 0 0 0 0 0 100 100 0 0 0 0\n   7 0 loop0 1 0 0 0 0 0 0 0 0 900000 900000\n")
	f.write("sys/class/net/eth0/speed", "1000\n")

	l := f.smpl.Load()
	if !near(l.CPU, 0.2) || !near(l.Mem, 0.75) || l.Net != 0 || l.Disk != 0 {
		t.Fatalf("first sample %+v, want cpu 0.2 since boot, mem 0.75, net and disk 0", l)
	}
	f.now.Advance(time.Second)
	// 1 s later: 300 busy of 400 jiffies; 125 MB/s each way on a 1 Gbit/s link; sda busy 500 ms
	f.write("proc/stat", "cpu  300 0 200 800 100 0 0 0 0 0\nprocs_running 4\n")
	f.write("proc/net/dev", sprintf(netdev, 9e9, 9e9, 1000+125e6, 1000+125e6))
	f.write("proc/diskstats", "   8       0 sda 1 0 0 0 0 0 0 0 0 600 100 0 0 0 0\n   7 0 loop0 1 0 0 0 0 0 0 0 0 999999 900000\n")
	l = f.smpl.Load()
	if !near(l.CPU, 0.75) || !near(l.Net, 1) || !near(l.Disk, 0.5) {
		t.Fatalf("second sample %+v, want cpu 0.75, net 1 (lo ignored), disk 0.5 (loop ignored)", l)
	}
	if l.RunQueue != 3 {
		t.Fatalf("run queue %v, want 3 (procs_running 4, the sampler itself left out)", l.RunQueue)
	}
}

// The run queue is procs_running less the reader; a /proc/stat without the
// line (0) does not go below 0.
func TestSamplerRunQueue(t *testing.T) {
	for _, c := range []struct {
		stat string
		want float64
	}{
		{"cpu  1 0 1 7 1 0 0 0 0 0\nprocs_running 1\n", 0},
		{"cpu  1 0 1 7 1 0 0 0 0 0\nprocs_running 9\n", 8},
		{"cpu  1 0 1 7 1 0 0 0 0 0\n", 0},
	} {
		f := newFakeProc(t)
		f.write("proc/stat", c.stat)
		if got := f.smpl.Load().RunQueue; got != c.want {
			t.Errorf("%q: run queue %v, want %v", c.stat, got, c.want)
		}
	}
}

func TestSamplerToleratesMissingFiles(t *testing.T) {
	f := newFakeProc(t)
	if l := f.smpl.Load(); l.CPU != 0 || l.Mem != 0 || l.Net != 0 || l.Disk != 0 {
		t.Fatalf("no /proc at all: %+v, want zeros", l)
	}
	f.write("proc/stat", "garbage\n")
	f.write("proc/meminfo", "MemTotal: x\n")
	f.write("proc/net/dev", "garbage\n")
	f.write("proc/diskstats", "8 0\n")
	f.now.Advance(time.Second)
	if l := f.smpl.Load(); l.CPU != 0 || l.Mem != 0 || l.Net != 0 || l.Disk != 0 {
		t.Fatalf("garbage /proc: %+v, want zeros", l)
	}
	f.now.Advance(time.Second)
	if l := f.smpl.Load(); l.CPU != 0 || l.Mem != 0 || l.Net != 0 || l.Disk != 0 {
		t.Fatalf("garbage /proc twice: %+v, want zeros", l)
	}
}

func TestSamplerRealProc(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc here")
	}
	s := New()
	s.Load()
	l := s.Load()
	for name, v := range map[string]float64{"cpu": l.CPU, "mem": l.Mem, "net": l.Net, "disk": l.Disk} {
		if v < 0 || v > 1 || math.IsNaN(v) {
			t.Fatalf("%s = %v, want 0..1", name, v)
		}
	}
	if l.Mem == 0 {
		t.Fatal("real /proc/meminfo gave mem 0")
	}
}

// The raw load figures (docs/NOTES.md, Load inputs): packets/s, disk
// operations/s, capacities.
func TestSamplerRawFigures(t *testing.T) {
	f := newFakeProc(t)
	f.smpl.Root = f.dir // a real file system: its share is in 0..1
	const dev = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 0 %d 0 0 0 0 0 0 0 %d 0 0 0 0 0 0 0
  eth0: 0 %d 0 0 0 0 0 0 0 %d 0 0 0 0 0 0 0
`
	f.write("proc/stat", "cpu  100 0 100 700 100 0 0 0 0 0\n")
	f.write("proc/meminfo", "MemTotal:       2097152 kB\nMemAvailable:    1048576 kB\n")
	f.write("proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 1200.000\n\nprocessor\t: 1\ncpu MHz\t\t: 1200.000\n\n")
	f.write("sys/devices/system/cpu/cpu1/cpufreq/cpuinfo_max_freq", "1800000\n") // kHz: cpu1 runs up to 1800 MHz
	f.write("proc/net/dev", sprintf(dev, 7, 7, 100, 100))
	//                                      reads ... writes
	f.write("proc/diskstats", "   8       0 sda 10 0 0 0 20 0 0 0 0 100 100 0 0 0 0\n   7 0 loop0 500 0 0 0 500 0 0 0 0 9 9\n")
	f.smpl.Load()
	f.now.Advance(2 * time.Second)
	f.write("proc/net/dev", sprintf(dev, 9999, 9999, 1100, 2100)) // +3000 packets on eth0
	f.write("proc/diskstats", "   8       0 sda 110 0 0 0 120 0 0 0 0 100 100 0 0 0 0\n   7 0 loop0 900 0 0 0 900 0 0 0 0 9 9\n")
	l := f.smpl.Load()
	// by hand: 3000 packets / 2 s; 200 ops / 2 s (loop ignored); 1200 + 1800 MHz; 2 GiB
	if !near(l.NetPPS, 1500) || !near(l.DiskOps, 100) || !near(l.CPUMHz, 3000) || !near(l.MemMB, 2048) {
		t.Fatalf("raw figures %+v, want net_pps 1500 disk_ops 100 cpu_mhz 3000 mem_mb 2048", l)
	}
	if l.DiskUsed <= 0 || l.DiskUsed > 1 {
		t.Fatalf("disk_used %v, want a share of the temp dir's file system", l.DiskUsed)
	}
}
