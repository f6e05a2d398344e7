package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// boxScript times 002's watchdog pair on ews under a real systemd with the
// shipped unit (scripts/watchdog-box.sh); boxRecord keeps its last output
// in the results dir, for runs where it cannot run (not root, no systemd).
const (
	boxScript = "scripts/watchdog-box.sh"
	boxRecord = "watchdog-box.txt"
	boxReps   = 3
)

// boxResult is what the box measured: per repetition, a killed helper
// back (answering /readyz) and a stalled watch loop to ews serving again,
// both in seconds, and the unit's watchdog settings as systemd read them.
type boxResult struct {
	helper, stall []float64
	unit          string
	source        string // "measured" or "recorded at DATE"
	missing       string // why there is no figure (empty when there is)
}

// parseBox reads the box's WATCHDOG lines.
func parseBox(out []byte) boxResult {
	var r boxResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "WATCHDOG" {
			continue
		}
		switch f[1] {
		case "unit":
			r.unit = strings.Join(f[2:], " ")
		case "helper", "stall":
			for _, kv := range f[2:] {
				k, v, _ := strings.Cut(kv, "=")
				if k != "killed_to_ready_s" && k != "stall_to_serving_s" {
					continue
				}
				if x, err := strconv.ParseFloat(v, 64); err == nil {
					if f[1] == "helper" {
						r.helper = append(r.helper, x)
					} else {
						r.stall = append(r.stall, x)
					}
				}
			}
		}
	}
	if len(r.helper) == 0 || len(r.stall) == 0 {
		r.missing = "no WATCHDOG lines"
	}
	return r
}

// boxCannot says why the box cannot run here ("" when it can).
func boxCannot() string {
	if os.Geteuid() != 0 {
		return "needs root"
	}
	for _, p := range []string{"/lib/systemd/systemd", boxScript} {
		if _, err := os.Stat(p); err != nil {
			return "no " + p
		}
	}
	for _, c := range []string{"unshare", "nsenter", "curl", "bc", "pgrep"} {
		if _, err := exec.LookPath(c); err != nil {
			return "no " + c
		}
	}
	return ""
}

// watchdogBox runs the box (an ews built with -tags ewsfault, this binary
// as the helper) and records its output; where it cannot run, it reads
// the last record.
func (h *harness) watchdogBox(ctx context.Context) boxResult {
	record := filepath.Join(h.opt.results, boxRecord)
	if why := boxCannot(); why != "" {
		return readBox(record, why)
	}
	ews := filepath.Join(h.tmp, "ews-fault")
	build := exec.CommandContext(ctx, "go", "build", "-tags", "ewsfault", "-o", ews, "./cmd/ews")
	build.Dir = h.opt.root
	if out, err := build.CombinedOutput(); err != nil {
		return readBox(record, "go build -tags ewsfault: "+firstLine(string(out)))
	}
	exe, err := os.Executable()
	if err != nil {
		return readBox(record, err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute) // the script's own waits are bounded too
	defer cancel()
	began := time.Now()
	run := exec.CommandContext(ctx, "bash", filepath.Join(h.opt.root, boxScript), ews, exe, strconv.Itoa(boxReps))
	out, err := run.CombinedOutput()
	if err != nil {
		return readBox(record, "watchdog-box.sh: "+firstLine(lastLines(string(out), 1)))
	}
	r := parseBox(out)
	if r.missing != "" {
		return readBox(record, "watchdog-box.sh: "+r.missing)
	}
	r.source = "measured"
	head := fmt.Sprintf("# %s: bash %s EWS(-tags ewsfault) BENCHPAPER %d, %s, %s\n", filepath.Base(record), boxScript, boxReps, began.UTC().Format("2006-01-02 15:04 UTC"), time.Since(began).Round(time.Second))
	if err := os.MkdirAll(h.opt.results, 0o755); err == nil {
		_ = os.WriteFile(record, append([]byte(head), out...), 0o644)
	}
	return r
}

// readBox is the last recorded run, or why there is none.
func readBox(record, why string) boxResult {
	b, err := os.ReadFile(record)
	if err != nil {
		return boxResult{missing: why + "; no record (" + record + ")"}
	}
	r := parseBox(b)
	if r.missing != "" {
		r.missing = why + "; record without figures"
		return r
	}
	r.source = "recorded (" + why + "): " + strings.TrimPrefix(firstLine(string(b)), "# ")
	return r
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// span is "min-max" of xs, in seconds.
func span(xs []float64) string {
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return fmt.Sprintf("%.2f-%.2fs", lo, hi)
}

// allWithin reports whether every x is at most bound.
func allWithin(xs []float64, bound float64) bool {
	for _, x := range xs {
		if x > bound {
			return false
		}
	}
	return len(xs) > 0
}
