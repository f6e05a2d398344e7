package config

import "time"

// validateSim checks the keys that make a simulated board unequal: shares
// in [0, 1], sizes and the speed above zero when given.
func (c *Config) validateSim(bad func(string, string, ...any)) {
	s := c.Sim
	if s == nil {
		return
	}
	for _, k := range []struct {
		key string
		v   float64
	}{{"sim.base_cpu", s.BaseCPU}, {"sim.busy_cpu", s.BusyCPU}, {"sim.disk_used", s.DiskUsed}, {"sim.jitter", s.Jitter}, {"sim.request_cpu", s.ReqCPU}} {
		if k.v != k.v || k.v < 0 || k.v > 1 {
			bad(k.key, "%v: want a share in [0, 1]", k.v)
		}
	}
	for _, k := range []struct {
		key string
		v   float64
	}{{"sim.speed", s.Speed}, {"sim.cpu_mhz", s.CPUMHz}, {"sim.mem_mb", s.MemMB}, {"sim.base_mem_mb", s.BaseMemMB}, {"sim.request_mb", s.RequestMB}} {
		if k.v != k.v || k.v < 0 || k.v > 1e9 {
			bad(k.key, "%v: want a positive number (0 or absent: the default)", k.v)
		}
	}
}

// Scaled is d on this simulated board: divided by its speed (default 1).
func (s *Sim) Scaled(d time.Duration) time.Duration {
	if s == nil || !(s.Speed > 0) {
		return d
	}
	return time.Duration(float64(d) / s.Speed)
}
