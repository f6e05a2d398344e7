// Package procload samples this board's load from /proc: cpu, memory, network and disk use as shares in 0..1.
package procload

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

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
// A missing or unreadable file gives 0 for its figure. The first sample has
// no previous one: cpu is the average since boot, net and disk are 0.
// Safe for concurrent use.
type Sampler struct {
	Proc string           // "/proc"; tests point it elsewhere
	Sys  string           // "/sys"
	Now  func() time.Time // time.Now

	mu   sync.Mutex
	prev sample
	have bool
}

type sample struct {
	at              time.Time
	busy, total     float64 // seconds of cpu time
	netBytes        uint64
	diskMs          map[string]uint64
	haveCPU, haveNt bool
}

// New returns a Sampler of the real /proc and /sys.
func New() *Sampler { return &Sampler{Proc: "/proc", Sys: "/sys", Now: time.Now} }

// Load takes a sample and returns the load since the previous one.
func (s *Sampler) Load() state.Load {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	cur := sample{at: now()}
	var l state.Load
	if fs, err := procfs.NewFS(s.Proc); err == nil {
		cur.busy, cur.total, cur.haveCPU = cpu(fs)
		l.Mem = mem(fs)
		cur.netBytes, cur.haveNt = netBytes(fs)
	}
	cur.diskMs = diskMs(s.Proc, s.Sys)

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

// netBytes sums received and transmitted bytes of every interface but lo.
func netBytes(fs procfs.FS) (uint64, bool) {
	nd, err := fs.NetDev()
	if err != nil || len(nd) == 0 {
		return 0, false
	}
	var sum uint64
	ok := false
	for name, line := range nd {
		if name == "lo" {
			continue
		}
		sum += line.RxBytes + line.TxBytes
		ok = true
	}
	return sum, ok
}

// diskMs is io_ticks (ms spent doing I/O) per block device, loop and ram
// devices left out; nil when /proc/diskstats cannot be read.
func diskMs(proc, sys string) map[string]uint64 {
	fs, err := blockdevice.NewFS(proc, sys)
	if err != nil {
		return nil
	}
	stats, err := fs.ProcDiskstats()
	if err != nil {
		return nil
	}
	out := make(map[string]uint64, len(stats))
	for _, d := range stats {
		if d.IoStatsCount < 13 || strings.HasPrefix(d.DeviceName, "loop") || strings.HasPrefix(d.DeviceName, "ram") {
			continue
		}
		out[d.DeviceName] = d.IOsTotalTicks
	}
	return out
}

func clamp(l state.Load) state.Load {
	c := func(v float64) float64 { return min(max(v, 0), 1) }
	return state.Load{CPU: c(l.CPU), Mem: c(l.Mem), Net: c(l.Net), Disk: c(l.Disk)}
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
