// Package procload samples this board's load from /proc and /sys: use shares, raw rates and capacities.
package procload

import (
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
//   - mem: 1 - MemAvailable/MemTotal (/proc/meminfo);
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
// A missing or unreadable file gives 0 for its figure. The first sample has
// no previous one: cpu is the average since boot, net and disk are 0.
// Safe for concurrent use.
type Sampler struct {
	Proc  string          // "/proc"; tests point it elsewhere
	Sys   string          // "/sys"
	Root  string          // "/": the file system whose space disk_used is; "" skips it
	Clock clockwork.Clock // when each sample is taken; nil: the real clock

	mu   sync.Mutex
	prev sample
	have bool
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

// Load takes a sample and returns the load since the previous one.
func (s *Sampler) Load() state.Load {
	s.mu.Lock()
	defer s.mu.Unlock()
	clock := s.Clock
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	cur := sample{at: clock.Now()}
	var l state.Load
	if fs, err := procfs.NewFS(s.Proc); err == nil {
		cur.busy, cur.total, cur.haveCPU = cpu(fs)
		l.Mem = mem(fs)
		l.MemMB = memMB(fs)
		cur.netBytes, cur.netPkts, cur.haveNt = netBytes(fs)
		l.CPUMHz = s.cpuMHz(fs)
	}
	cur.diskMs, cur.diskOps = diskMs(s.Proc, s.Sys)
	l.DiskUsed = diskUsed(s.Root)

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
	s.prev, s.have = cur, true
	return clamp(l)
}

// cpu is busy (all but idle and iowait) and total cpu time since boot.
// Guest time is already counted in user and nice.
func cpu(fs procfs.FS) (busy, total float64, ok bool) {
	st, err := fs.Stat()
	if err != nil {
		return 0, 0, false
	}
	c := st.CPUTotal
	total = c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	return total - c.Idle - c.Iowait, total, true
}

// mem is 1 - MemAvailable/MemTotal; 0 when either is missing.
func mem(fs procfs.FS) float64 {
	mi, err := fs.Meminfo()
	if err != nil || mi.MemTotal == nil || mi.MemAvailable == nil {
		return 0
	}
	total, avail := float64(*mi.MemTotal), float64(*mi.MemAvailable)
	if total <= 0 || avail > total {
		return 0
	}
	return 1 - avail/total
}

// netBytes sums received and transmitted bytes and packets of every
// interface but lo.
func netBytes(fs procfs.FS) (bytes, pkts uint64, ok bool) {
	nd, err := fs.NetDev()
	if err != nil || len(nd) == 0 {
		return 0, 0, false
	}
	for name, line := range nd {
		if name == "lo" {
			continue
		}
		bytes += line.RxBytes + line.TxBytes
		pkts += line.RxPackets + line.TxPackets
		ok = true
	}
	return bytes, pkts, ok
}

// memMB is MemTotal in MB; 0 when missing.
func memMB(fs procfs.FS) float64 {
	mi, err := fs.Meminfo()
	if err != nil || mi.MemTotal == nil {
		return 0
	}
	return float64(*mi.MemTotal) / 1024 // kB
}

// cpuMHz is the board's cpu capacity: the sum of every cpu's maximum clock.
func (s *Sampler) cpuMHz(fs procfs.FS) float64 {
	infos, err := fs.CPUInfo()
	if err != nil || len(infos) == 0 {
		return 0
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
	return sum
}

// diskMs is io_ticks (ms spent doing I/O) per block device, and the reads
// and writes completed on all of them, loop and ram devices left out; nil
// when /proc/diskstats cannot be read.
func diskMs(proc, sys string) (map[string]uint64, uint64) {
	fs, err := blockdevice.NewFS(proc, sys)
	if err != nil {
		return nil, 0
	}
	stats, err := fs.ProcDiskstats()
	if err != nil {
		return nil, 0
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
	return out, ops
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
