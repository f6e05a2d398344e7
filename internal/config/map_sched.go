package config

import "github.com/ews-firmware/ews/sched"

// SchedConfig maps [sched] onto the scheduler's own Config. Mode is the
// node's business (proxy or redirect) and is not part of it.
func (s Sched) SchedConfig() sched.Config {
	out := sched.Config{
		Policy:       s.Policy,
		Order:        s.Order,
		Queue:        s.Queue,
		QueueTimeout: s.QueueTimeout.Duration,
		QueueTarget:  s.QueueTarget.Duration,
		Reserve:      s.Reserve,
		Headroom:     s.Headroom,
		Sticky:       s.Sticky,
		Adaptive:     s.Adaptive.schedModel(),
		Integrated:   s.Integrated.schedModel(),
		QSC:          s.QSC.schedModel(),
		Socket:       s.Socket.schedModel(),
	}
	for _, c := range s.Classes {
		out.Classes = append(out.Classes, sched.Class{Name: c.Name, Match: c.Match, Weight: c.Weight})
	}
	for _, p := range s.Proximity {
		out.Proximity = append(out.Proximity, sched.ProximityRule{CIDR: p.CIDR, Prefer: p.Prefer})
	}
	return out
}

func (m LoadModel) schedModel() sched.LoadModel {
	return sched.LoadModel{Weights: m.Weights, Baselines: m.Baselines, Limits: m.Limits, Overload: m.Overload.Duration, Suspend: m.Suspend.Duration}
}

// schedDefaults is sched.DefaultConfig in the file's types, plus the mode.
func schedDefaults() Sched {
	d := sched.DefaultConfig()
	return Sched{
		Policy:       d.Policy,
		Mode:         "proxy", // every request passes through the master
		Assign:       D(30e9), // redirect mode: redirect once, then 30 s straight to the board
		Queue:        d.Queue,
		QueueTimeout: D(d.QueueTimeout),
		QueueTarget:  D(d.QueueTarget),
		Reserve:      d.Reserve,
		Headroom:     d.Headroom,
		Sticky:       d.Sticky,
		Classes:      DefaultClasses(),
	}
}

// DefaultClasses are sched.DefaultClasses in the file's types.
func DefaultClasses() []Class { return classesFor("") }

// classesFor are sched.ClassesFor(policy) in the file's types: the classes
// of a file that configures none (qsc: the paper's four).
func classesFor(policy string) []Class {
	var out []Class
	for _, c := range sched.ClassesFor(policy) {
		out = append(out, Class{Name: c.Name, Match: c.Match, Weight: c.Weight})
	}
	return out
}

// SchedConfig is [sched] with the cluster's devices, which the master
// schedules for (issue 27): each with its driver's concurrency, an
// interlock group sharing one lock.
func (c *Config) SchedConfig() sched.Config {
	out := c.Sched.SchedConfig()
	out.Devices = c.SchedDevices()
	return out
}

// SchedDevices is every [[device]] as the scheduler sees it.
func (c *Config) SchedDevices() []sched.Device {
	if len(c.Devices) == 0 {
		return nil
	}
	lock := make(map[string]string, len(c.Devices)) // device -> its group's label
	for _, d := range c.Devices {
		lock[d.Name] = d.Name
	}
	grouped := map[string]bool{}
	for _, d := range c.Devices {
		for _, other := range d.Interlock {
			from, to := lock[other], lock[d.Name]
			if from == "" || from == to {
				continue
			}
			for n, l := range lock { // relabel the other's group
				if l == from {
					lock[n] = to
				}
			}
			grouped[d.Name], grouped[other] = true, true
		}
	}
	out := make([]sched.Device, 0, len(c.Devices))
	for _, d := range c.Devices {
		sd := sched.Device{Name: d.Name, Concurrency: d.Spec().Concurrency()}
		if grouped[d.Name] {
			sd.Lock = "interlock:" + lock[d.Name]
		}
		out = append(out, sd)
	}
	return out
}
