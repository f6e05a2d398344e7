package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// buildEWS builds ./cmd/ews of the module at root into bin.
func buildEWS(root, bin string) error {
	goBin := "go"
	if _, err := exec.LookPath(goBin); err != nil { // e.g. a test run with a bare PATH
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", bin, "./cmd/ews")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("paper: build ews: %v: %s", err, out)
	}
	return nil
}

// machineNote describes the machine for the docs: CPU model, cores, kernel, Go, HAProxy.
func machineNote(haproxy string) string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	kernel := ""
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = "Linux " + strings.TrimSpace(string(b))
	}
	note := fmt.Sprintf("%s, %d cores visible (shared with other work), %s, %s", model, runtime.NumCPU(), kernel, runtime.Version())
	if haproxy != "" {
		if out, err := exec.Command(haproxy, "-v").Output(); err == nil {
			first, _, _ := strings.Cut(string(out), "\n")
			note += ", " + strings.TrimSpace(strings.SplitN(first, " - ", 2)[0])
		}
	}
	return note
}

// procStat is what the harness reads of a process in /proc.
type procStat struct {
	cpuSec float64 // utime + stime
	rssKB  int64   // VmRSS
}

// clockTicks is USER_HZ; 100 on every Linux the harness runs on.
const clockTicks = 100

func readProc(pid int) (procStat, error) {
	var s procStat
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// Fields after the command (which may hold spaces) start after the last ')'.
	rest := string(b)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return s, fmt.Errorf("paper: short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseFloat(f[11], 64) // field 14 utime (state is field 3 = f[0])
	st, _ := strconv.ParseFloat(f[12], 64) // field 15 stime
	s.cpuSec = (ut + st) / clockTicks
	st2, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(st2), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fs := strings.Fields(v)
			if len(fs) > 0 {
				s.rssKB, _ = strconv.ParseInt(fs[0], 10, 64)
			}
		}
	}
	return s, nil
}
