package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cpuCap is a cgroup that holds its processes to a share of one core with a CPU quota
// (cgroup v2 cpu.max, else v1 cpu.cfs_quota_us): the saturation cells give both fronts the
// same budget, so the front runs out before the generator and boards that share the machine.
type cpuCap struct{ dir string }

const cfsPeriodUs = 100000

// newCPUCap creates the cgroup name with a quota of cores (0.3 = 30 % of one core).
func newCPUCap(name string, cores float64) (*cpuCap, error) {
	quota := strconv.Itoa(int(cores * cfsPeriodUs))
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil { // v2
		dir := filepath.Join("/sys/fs/cgroup", name)
		_ = os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+cpu"), 0o644)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("paper: --front-cpu needs a writable cgroup: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(quota+" "+strconv.Itoa(cfsPeriodUs)), 0o644); err != nil {
			os.Remove(dir)
			return nil, fmt.Errorf("paper: --front-cpu: %w", err)
		}
		return &cpuCap{dir: dir}, nil
	}
	dir := filepath.Join("/sys/fs/cgroup/cpu", name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("paper: --front-cpu needs a writable cgroup (v2, or v1 at /sys/fs/cgroup/cpu): %w", err)
	}
	for file, v := range map[string]string{"cpu.cfs_period_us": strconv.Itoa(cfsPeriodUs), "cpu.cfs_quota_us": quota} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0o644); err != nil {
			os.Remove(dir)
			return nil, fmt.Errorf("paper: --front-cpu: %s: %w", file, err)
		}
	}
	return &cpuCap{dir: dir}, nil
}

// add moves a process, all its threads, into the cgroup.
func (c *cpuCap) add(pid int) error {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("paper: --front-cpu: moving %d into %s: %w", pid, c.dir, err)
	}
	return nil
}

// remove deletes the cgroup once its processes are gone (a cgroup with members cannot be
// removed: they are moved to the parent first).
func (c *cpuCap) remove() {
	if b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs")); err == nil {
		for _, pid := range strings.Fields(string(b)) {
			_ = os.WriteFile(filepath.Join(filepath.Dir(c.dir), "cgroup.procs"), []byte(pid), 0o644)
		}
	}
	_ = os.Remove(c.dir)
}
