// Package procload samples this board's load from /proc: cpu, memory, network and disk use as shares in 0..1.
package procload

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/state"
)

// DefaultLinkMbps is the link speed assumed when /sys does not tell
// (virtual interfaces, Wi-Fi): 100 Mbit/s, a common dev-board Ethernet.
const DefaultLinkMbps = 100

// Sampler computes state.Load from /proc. Each figure is a share in 0..1:
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
	busy, total     uint64
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
	if st, err := os.ReadFile(filepath.Join(s.Proc, "stat")); err == nil {
		cur.busy, cur.total, cur.haveCPU = ParseStat(st)
	}
	if mi, err := os.ReadFile(filepath.Join(s.Proc, "meminfo")); err == nil {
		l.Mem = ParseMeminfo(mi)
	}
	if nd, err := os.ReadFile(filepath.Join(s.Proc, "net", "dev")); err == nil {
		cur.netBytes, cur.haveNt = ParseNetDev(nd)
	}
	if ds, err := os.ReadFile(filepath.Join(s.Proc, "diskstats")); err == nil {
		cur.diskMs = ParseDiskstats(ds)
	}

	p := s.prev
	switch {
	case cur.haveCPU && s.have && p.haveCPU && cur.total > p.total && cur.busy >= p.busy:
		l.CPU = float64(cur.busy-p.busy) / float64(cur.total-p.total)
	case cur.haveCPU && cur.total > 0:
		l.CPU = float64(cur.busy) / float64(cur.total)
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

// ParseStat reads the aggregate "cpu" line of /proc/stat: busy (all but
// idle and iowait) and total jiffies.
func ParseStat(b []byte) (busy, total uint64, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		var idle uint64
		for i, v := range f[1:] {
			if i >= 8 { // guest and guest_nice are already in user and nice
				break
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, 0, false
			}
			total += n
			if i == 3 || i == 4 { // idle, iowait
				idle += n
			}
		}
		return total - idle, total, true
	}
	return 0, 0, false
}

// ParseMeminfo returns 1 - MemAvailable/MemTotal; 0 when either is missing.
func ParseMeminfo(b []byte) float64 {
	var total, avail float64
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total = v
		case "MemAvailable:":
			avail = v
		}
	}
	if total <= 0 || avail < 0 || avail > total {
		return 0
	}
	return 1 - avail/total
}

// ParseNetDev sums received and transmitted bytes of every interface but lo.
func ParseNetDev(b []byte) (uint64, bool) {
	var sum uint64
	ok := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, found := strings.Cut(sc.Text(), ":")
		if !found || strings.TrimSpace(name) == "lo" {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 9 {
			continue
		}
		rx, err1 := strconv.ParseUint(f[0], 10, 64)
		tx, err2 := strconv.ParseUint(f[8], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		sum += rx + tx
		ok = true
	}
	return sum, ok
}

// ParseDiskstats returns io_ticks (ms spent doing I/O) per block device,
// skipping loop and ram devices.
func ParseDiskstats(b []byte) map[string]uint64 {
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 13 || strings.HasPrefix(f[2], "loop") || strings.HasPrefix(f[2], "ram") {
			continue
		}
		if v, err := strconv.ParseUint(f[12], 10, 64); err == nil {
			out[f[2]] = v
		}
	}
	return out
}
