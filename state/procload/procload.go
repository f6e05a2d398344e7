// Package procload samples this board's load from /proc and /sys: use shares, raw rates and capacities.
package procload

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"

	"github.com/ews-firmware/ews/state"
)

// DefaultLinkMbps is the link speed assumed when /sys does not tell
// (virtual interfaces, Wi-Fi): 100 Mbit/s, a common dev-board Ethernet.
const DefaultLinkMbps = 100

// Sampler computes state.Load from /proc, read with procfs. Each figure is
// a share in 0..1:
//
//   - cpu: busy time (all but idle and iowait) over total time since the
//     previous sample (/proc/stat);
//   - mem: 1 - MemAvailable/MemTotal (/proc/meminfo; MemFree+Buffers+Cached
//     stands in for MemAvailable on kernels before 3.14);
//   - net: (rx+tx bytes/s of every interface but lo) over twice the fastest
//     link's speed (/proc/net/dev, /sys/class/net/*/speed);
//   - disk: the busiest block device's time doing I/O over wall time
//     (/proc/diskstats, io_ticks).
//
// and the raw figures the papers' formulas need:
//
//   - disk_used: share of the root file system's space in use (statfs of Root);
//   - net_pps: packets/s received and sent, every interface but lo;
//   - disk_ops: reads and writes completed per second, every disk;
//   - cpu_mhz: Σ over cpus of cpufreq/cpuinfo_max_freq, else /proc/cpuinfo MHz,
//     else 1000 a cpu;
//   - mem_mb: MemTotal.
//
// The two capacities (cpu_mhz, mem_mb) are static: read once, at the first
// sample. Every figure is read on its own: a missing, unreadable or corrupt
// file, or a parser that panics on it (procfs's ARM /proc/cpuinfo parser
// does on the host's x86 cpuinfo under qemu-user), makes that figure
// unknown — 0, listed by Unknown, one warning for the life of the Sampler
// — and leaves the others as they are. A missing /sys costs only the link
// speed (DefaultLinkMbps) and cpufreq. The first sample has no previous
// one: cpu is the average since boot, net and disk are 0.
// Safe for concurrent use.
type Sampler struct {
	Proc   string          // "/proc"; tests point it elsewhere
	Sys    string          // "/sys"
	Root   string          // "/": the file system whose space disk_used is; "" skips it
	Clock  clockwork.Clock // when each sample is taken; nil: the real clock
	Logger *slog.Logger    // the one warning per unknown figure; slog.Default when nil

	// cpuInfo parses /proc/cpuinfo: procfs's parser for this GOARCH, which
	// tests replace with one that fails or panics.
	cpuInfo func(procfs.FS) ([]procfs.CPUInfo, error)

	mu      sync.Mutex
	prev    sample
	have    bool
	static  bool    // cpuMHz and memMB have been read
	cpuMHz  float64 // static figures, as read at the first sample
	memMB   float64
	unknown state.LoadFigures // figures that could not be read (statics: at the start)
	runQ    float64           // the last sample's run queue
	warned  state.LoadFigures // figures warned about: once each
}

type sample struct {
	at              time.Time
	busy, total     float64 // seconds of cpu time
	netBytes        uint64
	netPkts         uint64
	diskMs          map[string]uint64
	diskOps         uint64
	haveCPU, haveNt bool
}

// New returns a Sampler of the real /proc and /sys.
func New() *Sampler { return &Sampler{Proc: "/proc", Sys: "/sys", Root: "/"} }

// Load takes a sample and returns the load since the previous one. It
// never panics: what it cannot read counts as 0 (see Unknown).
func (s *Sampler) Load() state.Load {
	s.mu.Lock()
	defer s.mu.Unlock()
	clock := s.Clock
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	fs, fsErr := procfs.NewFS(s.Proc)
	withFS := func(read func(procfs.FS) error) func() error {
		return func() error {
			if fsErr != nil {
				return fsErr
			}
			return read(fs)
		}
	}
	if !s.static {
		s.static = true
		s.figure(state.FigCPUMHz, withFS(func(fs procfs.FS) (err error) { s.cpuMHz, err = s.readCPUMHz(fs); return err }))
		s.figure(state.FigMemMB, withFS(func(fs procfs.FS) (err error) { s.memMB, err = memMB(fs); return err }))
	}

	cur := sample{at: clock.Now()}
	l := state.Load{CPUMHz: s.cpuMHz, MemMB: s.memMB}
	cur.haveCPU = s.figure(state.FigCPU, withFS(func(fs procfs.FS) (err error) {
		cur.busy, cur.total, l.RunQueue, err = cpu(fs)
		return err
	}))
	s.figure(state.FigMem, withFS(func(fs procfs.FS) (err error) { l.Mem, err = mem(fs); return err }))
	cur.haveNt = s.figure(state.FigNet, withFS(func(fs procfs.FS) (err error) { cur.netBytes, cur.netPkts, err = netBytes(fs); return err }))
	s.figure(state.FigDisk, func() (err error) { cur.diskMs, cur.diskOps, err = diskMs(s.Proc); return err })
	s.figure(state.FigDiskUsed, func() (err error) { l.DiskUsed, err = diskUsed(s.Root); return err })

	p := s.prev
	switch {
	case cur.haveCPU && s.have && p.haveCPU && cur.total > p.total && cur.busy >= p.busy:
		l.CPU = (cur.busy - p.busy) / (cur.total - p.total)
	case cur.haveCPU && cur.total > 0:
		l.CPU = cur.busy / cur.total
	}
	if dt := cur.at.Sub(p.at).Seconds(); s.have && dt > 0 {
		if cur.haveNt && p.haveNt && cur.netBytes >= p.netBytes {
			bps := float64(cur.netBytes-p.netBytes) * 8 / dt
			l.Net = bps / (2 * float64(s.linkMbps()) * 1e6)
			if cur.netPkts >= p.netPkts {
				l.NetPPS = float64(cur.netPkts-p.netPkts) / dt
			}
		}
		if cur.diskMs != nil && p.diskMs != nil && cur.diskOps >= p.diskOps {
			l.DiskOps = float64(cur.diskOps-p.diskOps) / dt
		}
		for dev, ms := range cur.diskMs {
			if before, ok := p.diskMs[dev]; ok && ms >= before {
				l.Disk = max(l.Disk, float64(ms-before)/(dt*1000))
			}
		}
	}
	s.prev, s.have, s.runQ = cur, true, l.RunQueue
	return clamp(l)
}

// Unknown is the set of figures the last sample could not read (the
// static ones: could not read at the start); 0 when every figure was read.
func (s *Sampler) Unknown() state.LoadFigures {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unknown
}

// RunQueue is the last sample's run queue (Load.RunQueue).
func (s *Sampler) RunQueue() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runQ
}

// figure reads one figure, turning an error or a panic of read into
// "unknown" and the first such failure of each figure into a warning.
// It reports whether the figure was read.
func (s *Sampler) figure(fig state.LoadFigures, read func() error) bool {
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return read()
	}()
	if err == nil {
		s.unknown &^= fig
		return true
	}
	s.unknown |= fig
	if s.warned&fig == 0 {
		s.warned |= fig
		log := s.Logger
		if log == nil {
			log = slog.Default()
		}
		log.Warn("procload: cannot read this board's "+fig.String()+" figure: it counts as unknown (0); the board stays in the cluster", "err", err)
	}
	return false
}

// cpu is busy (all but idle and iowait) and total cpu time since boot,
// and the run queue now: the tasks runnable besides this one. Guest time
// is already counted in user and nice.
func cpu(fs procfs.FS) (busy, total, runQueue float64, err error) {
	st, err := fs.Stat()
	if err != nil {
		return 0, 0, 0, err
	}
	runQueue = float64(max(st.ProcessesRunning, 1) - 1)
	c := st.CPUTotal
	total = c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	if total <= 0 {
		return 0, 0, 0, errors.New("procload: /proc/stat has no cpu time")
	}
	return total - c.Idle - c.Iowait, total, runQueue, nil
}

// mem is 1 - MemAvailable/MemTotal; before Linux 3.14, which has no
// MemAvailable, MemFree+Buffers+Cached stands in for it.
func mem(fs procfs.FS) (float64, error) {
	mi, err := fs.Meminfo()
	if err != nil {
		return 0, err
	}
	if mi.MemTotal == nil || *mi.MemTotal == 0 {
		return 0, errors.New("procload: /proc/meminfo has no MemTotal")
	}
	total := float64(*mi.MemTotal)
	var avail float64
	switch {
	case mi.MemAvailable != nil:
		avail = float64(*mi.MemAvailable)
	case mi.MemFree != nil:
		avail = float64(*mi.MemFree)
		for _, v := range []*uint64{mi.Buffers, mi.Cached} {
			if v != nil {
				avail += float64(*v)
			}
		}
	default:
		return 0, errors.New("procload: /proc/meminfo has neither MemAvailable nor MemFree")
	}
	if avail > total {
		return 0, fmt.Errorf("procload: /proc/meminfo: %v kB available of %v kB", avail, total)
	}
	return 1 - avail/total, nil
}

// netBytes sums received and transmitted bytes and packets of every
// interface but lo.
func netBytes(fs procfs.FS) (bytes, pkts uint64, err error) {
	nd, err := fs.NetDev()
	if err != nil {
		return 0, 0, err
	}
	for name, line := range nd {
		if name == "lo" {
			continue
		}
		bytes += line.RxBytes + line.TxBytes
		pkts += line.RxPackets + line.TxPackets
	}
	return bytes, pkts, nil
}

// memMB is MemTotal in MB.
func memMB(fs procfs.FS) (float64, error) {
	mi, err := fs.Meminfo()
	if err != nil {
		return 0, err
	}
	if mi.MemTotal == nil || *mi.MemTotal == 0 {
		return 0, errors.New("procload: /proc/meminfo has no MemTotal")
	}
	return float64(*mi.MemTotal) / 1024, nil // kB
}

// readCPUMHz is the board's cpu capacity: the sum of every cpu's maximum clock.
func (s *Sampler) readCPUMHz(fs procfs.FS) (float64, error) {
	parse := s.cpuInfo
	if parse == nil {
		parse = procfs.FS.CPUInfo
	}
	infos, err := parse(fs)
	if err != nil {
		return 0, err
	}
	if len(infos) == 0 {
		return 0, errors.New("procload: /proc/cpuinfo lists no cpu")
	}
	sum := 0.0
	for _, ci := range infos {
		b, err := os.ReadFile(filepath.Join(s.Sys, "devices", "system", "cpu", "cpu"+strconv.Itoa(int(ci.Processor)), "cpufreq", "cpuinfo_max_freq"))
		if khz, perr := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && perr == nil && khz > 0 {
			sum += khz / 1000
		} else if ci.CPUMHz > 0 {
			sum += ci.CPUMHz
		} else {
			sum += 1000
		}
	}
	return sum, nil
}

// diskMs is io_ticks (ms spent doing I/O) per block device, and the reads
// and writes completed on all of them, loop and ram devices left out.
func diskMs(proc string) (map[string]uint64, uint64, error) {
	// Only /proc/diskstats is read, which needs no /sys: the proc root
	// stands in for it, so that a missing /sys does not cost this figure.
	fs, err := blockdevice.NewFS(proc, proc)
	if err != nil {
		return nil, 0, err
	}
	stats, err := fs.ProcDiskstats()
	if err != nil {
		return nil, 0, err
	}
	var ops uint64
	out := make(map[string]uint64, len(stats))
	for _, d := range stats {
		if d.IoStatsCount < 13 || strings.HasPrefix(d.DeviceName, "loop") || strings.HasPrefix(d.DeviceName, "ram") {
			continue
		}
		out[d.DeviceName] = d.IOsTotalTicks
		ops += d.ReadIOs + d.WriteIOs
	}
	return out, ops, nil
}

func clamp(l state.Load) state.Load {
	c := func(v float64) float64 { return min(max(v, 0), 1) }
	l.CPU, l.Mem, l.Net, l.Disk, l.DiskUsed = c(l.CPU), c(l.Mem), c(l.Net), c(l.Disk), c(l.DiskUsed)
	return l
}

// linkMbps is the fastest link speed in /sys/class/net, or DefaultLinkMbps.
func (s *Sampler) linkMbps() int {
	best := 0
	dir := filepath.Join(s.Sys, "class", "net")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() == "lo" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "speed"))
		if err != nil {
			continue
		}
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && v > best {
			best = v
		}
	}
	if best <= 0 {
		return DefaultLinkMbps
	}
	return best
}
