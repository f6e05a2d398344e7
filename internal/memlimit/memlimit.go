// Package memlimit sets the Go runtime's soft memory limit on a small board from the memory the board reports.
package memlimit

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Small is the most memory a board may have for Set to limit the runtime:
// XScale-class boards have 32-64 MB (issue 49).
const Small = 64 << 20

// Share is the part of a small board's memory the runtime is held to
// (GOMEMLIMIT): the kernel, the page cache of the binary's text (up to
// 11 MB for the lite build) and the CGI programs need the rest. The lite
// build holds about 8-9 MiB under 100 req/s (docs/BENCHMARKS.md, RAM).
const Share = 0.5

// Decision is what Set did.
type Decision struct {
	Total int64  // MemTotal, bytes; 0 when unknown
	Limit int64  // the limit set, bytes; 0: none set
	Why   string // for the start's log line
}

// Set limits the runtime to Share of MemTotal (from meminfo, normally
// /proc/meminfo) when the board has at most Small and GOMEMLIMIT is not in
// the environment (getenv); else it leaves the runtime as it is.
func Set(meminfo string, getenv func(string) string) Decision {
	if v := getenv("GOMEMLIMIT"); v != "" {
		return Decision{Why: "GOMEMLIMIT=" + v + " from the environment"}
	}
	total, err := memTotal(meminfo)
	if err != nil {
		return Decision{Why: err.Error()}
	}
	if total > Small {
		return Decision{Total: total, Why: "a board of more than 64 MiB: no limit"}
	}
	limit := int64(float64(total) * Share)
	debug.SetMemoryLimit(limit)
	return Decision{Total: total, Limit: limit, Why: fmt.Sprintf("a board of %d MiB: the runtime is held to half of it", total>>20)}
}

// memTotal reads MemTotal (kB) from a meminfo file.
func memTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("memlimit: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "MemTotal" {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil || kb <= 0 {
			return 0, fmt.Errorf("memlimit: %s: MemTotal %q", path, strings.TrimSpace(v))
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("memlimit: %s: no MemTotal", path)
}
