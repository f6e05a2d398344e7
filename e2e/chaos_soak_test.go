package e2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/tool/chaos"
)

// sampler records every board's RSS, open fds and goroutines once a second,
// one series per process (a restarted board starts a new one).
type sampler struct {
	cn     *chaosNet
	mu     sync.Mutex
	series map[string][]chaos.Sample // "board pid"
}

func (s *sampler) run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, b := range s.cn.boards {
			pid := b.pid()
			if pid == 0 {
				continue
			}
			rss, err := vmRSS(pid)
			if err != nil {
				continue // gone: killed by a fault
			}
			fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
			if err != nil {
				continue
			}
			g := -1
			if !b.isDown() {
				if m, err := boardMetrics(&board{name: b.name, http: b.http()}); err == nil {
					g = int(m["go_goroutines"])
				}
			}
			s.mu.Lock()
			k := fmt.Sprintf("%s %d", b.name, pid)
			s.series[k] = append(s.series[k], chaos.Sample{At: time.Now(), RSS: rss, FDs: len(fds), Goroutines: g})
			s.mu.Unlock()
		}
	}
}

// verdict judges, per board, its longest-lived process: flat or not.
func (s *sampler) verdict() (lines, errs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	longest := map[string]string{}
	for k, v := range s.series {
		var name string
		var pid int
		fmt.Sscanf(k, "%s %d", &name, &pid)
		if cur, ok := longest[name]; !ok || len(v) > len(s.series[cur]) {
			longest[name] = k
		}
	}
	var names []string
	for n := range longest {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		k := longest[n]
		if len(s.series[k]) < 300 { // under 5 min: a trend cannot be told from the warm-up
			lines = append(lines, fmt.Sprintf("%s: longest process %d samples, too short to judge", n, len(s.series[k])))
			continue
		}
		tr, err := chaos.Flat(s.series[k], chaos.DefaultBounds)
		lines = append(lines, fmt.Sprintf("%s (pid %s, %d samples over %v): RSS %.1f -> %.1f MiB, goroutines %d -> %d, fds %d -> %d",
			n, k[len(n)+1:], tr.Samples, tr.Span.Round(time.Second), float64(tr.RSSStart)/(1<<20), float64(tr.RSSEnd)/(1<<20), tr.GorStart, tr.GorEnd, tr.FDStart, tr.FDEnd))
		if err != nil {
			errs = append(errs, fmt.Sprintf("soak: %s: %v", n, err))
		}
	}
	return lines, errs
}
