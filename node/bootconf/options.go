package bootconf

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/automation"
	"github.com/ews-firmware/ews/node/backup"
	"github.com/ews-firmware/ews/node/cgi"
	"github.com/ews-firmware/ews/node/health"
	"github.com/ews-firmware/ews/node/rules"
	"github.com/ews-firmware/ews/node/supervise"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/vip"
)

// Each package's options from its sections of the boot config: the
// mappers Map (boot.go) calls.

// stateConfig maps [node] and [cluster] onto the cluster's own
// configuration, reading the key file. Errors name the key they come from.
func stateConfig(c *config.Config) (state.Config, error) {
	s := state.DefaultConfig()
	s.Name, s.Gossip, s.HTTP, s.Advertise = c.Node.Name, c.Node.Gossip, c.Node.HTTP, c.Node.Advertise
	s.Capacity, s.Weight = c.Node.Capacity, c.Node.Weight
	s.Simulated = simulated(c)
	s.Heartbeat, s.TMax, s.TThreshold = c.Cluster.Heartbeat.Duration, c.Cluster.TMax.Duration, c.Cluster.TThreshold.Duration
	s.Preempt, s.Insecure = c.Cluster.Preempt, c.Cluster.Insecure
	if c.Standalone() {
		return s, nil
	}
	peers, err := c.Peers()
	if err != nil {
		return s, c.Errorf("cluster.peers", "%v", err)
	}
	for _, p := range peers {
		s.Peers = append(s.Peers, state.Peer{Rank: p.Rank, Name: p.Name, Addr: p.Addr})
	}
	if s.Key, err = c.ClusterKey(); err != nil {
		return s, err
	}
	return s, nil
}

// schedConfig maps [sched] onto the scheduler's Config, with the
// cluster's devices it schedules for; a file without [[sched.class]] gets
// the policy's classes (sched.ClassesFor). Mode and assign are the front
// door's (dispatch), not the scheduler's.
func schedConfig(c *config.Config) sched.Config {
	s := c.Sched
	out := sched.Config{
		Policy:       s.Policy,
		Order:        s.Order,
		Queue:        s.Queue,
		QueueTimeout: s.QueueTimeout.Duration,
		QueueTarget:  s.QueueTarget.Duration,
		Reserve:      s.Reserve,
		Headroom:     s.Headroom,
		Stale:        s.Stale,
		Sticky:       s.Sticky,
		Adaptive:     loadModel(s.Adaptive),
		Integrated:   loadModel(s.Integrated),
		QSC:          loadModel(s.QSC),
		Socket:       loadModel(s.Socket),
		Devices:      schedDevices(c),
	}
	for _, cl := range s.Classes {
		out.Classes = append(out.Classes, sched.Class{Name: cl.Name, Match: cl.Match, Weight: cl.Weight})
	}
	if len(out.Classes) == 0 {
		out.Classes = sched.ClassesFor(out.Policy)
	}
	for _, p := range s.Proximity {
		out.Proximity = append(out.Proximity, sched.ProximityRule{CIDR: p.CIDR, Prefer: p.Prefer})
	}
	return out
}

func loadModel(m config.LoadModel) sched.LoadModel {
	return sched.LoadModel{Weights: m.Weights, Baselines: m.Baselines, Limits: m.Limits, Overload: m.Overload.Duration, Suspend: m.Suspend.Duration}
}

// schedDevices is every [[device]] as the scheduler sees it: each with
// its driver's concurrency, an interlock group sharing one lock.
func schedDevices(c *config.Config) []sched.Device {
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
		sd := sched.Device{Name: d.Name, Concurrency: hal.Concurrency(d)}
		if grouped[d.Name] {
			sd.Lock = "interlock:" + lock[d.Name]
		}
		out = append(out, sd)
	}
	return out
}

// deviceSpecs are the [[device]] entries in file order, so a
// hal.SpecError's Index is the entry's: the config's shape is hal's
// (internal/spec), copied so hal never writes the config's.
func deviceSpecs(c *config.Config) []hal.DeviceSpec { return slices.Clone(c.Devices) }

// halConfig maps the config onto what hal.New opens: this board, its kind
// (node.board), every device, and [sim] as written (a missing
// device_latency is 0; board = "sim" without [sim] is a bare [sim]).
func halConfig(c *config.Config) hal.Config {
	hc := hal.Config{Node: c.Node.Name, Board: c.Node.Board, Devices: deviceSpecs(c)}
	if c.Sim != nil {
		hc.Sim = &hal.SimConfig{DeviceLatency: c.Sim.Scaled(c.Sim.DeviceLatency.Duration)}
	} else if c.Node.Board == hal.BoardSim {
		hc.Sim = &hal.SimConfig{}
	}
	return hc
}

// simulated reports whether the board runs on the simulated board.
func simulated(c *config.Config) bool {
	kind, err := halConfig(c).Kind()
	return err == nil && kind == hal.BoardSim
}

// vipConfig maps cluster.vip and cluster.vip_interface onto the virtual
// IP manager's Config; a zero Config (not Enabled) when vip is unset.
func vipConfig(c *config.Config) (vip.Config, error) {
	if c.Cluster.VIP == "" {
		return vip.Config{}, nil
	}
	p, err := vip.ParsePrefix(c.Cluster.VIP)
	if err != nil {
		return vip.Config{}, c.Errorf("cluster.vip", "%s", strings.TrimPrefix(err.Error(), "vip: "))
	}
	return vip.Config{Prefix: p, Interface: c.Cluster.VIPInterface}, nil
}

// ruleList parses the [[rule]]s against the devices; a rule the check
// refuses is left out (CheckConfig reports it).
func ruleList(c *config.Config) []rules.Rule {
	rs, _ := parseRules(c)
	return rs
}

// parseRules parses every [[rule]] with node/rules' grammar and returns
// the good ones and every problem at its rule[i] key.
func parseRules(c *config.Config) ([]rules.Rule, config.Errors) {
	var (
		out  []rules.Rule
		errs config.Errors
	)
	drivers := func(name string) (hal.Driver, bool) {
		for _, d := range c.Devices {
			if d.Name == name {
				return hal.LookupDriver(d.Driver)
			}
		}
		return hal.Driver{}, false
	}
	for i, r := range c.Rules {
		rule, bad := rules.Parse(i, rules.Text{When: r.When, At: r.At, Then: r.Then}, drivers)
		for _, e := range bad {
			key := fmt.Sprintf("rule[%d]", i)
			if e.Key != "" {
				key += "." + e.Key
			}
			errs = append(errs, c.Errorf(key, "%v", e.Err))
		}
		if len(bad) == 0 {
			out = append(out, rule)
		}
	}
	return out, errs
}

// AuthConfig maps [http]'s credentials.
func AuthConfig(c *config.Config) auth.Config {
	return auth.Config{Mode: c.HTTP.Auth, Token: c.HTTP.Token, TokenFile: c.HTTP.TokenFile, Users: c.HTTP.Users}
}

// AuthKey is the config key an auth.New error is about.
func AuthKey(c *config.Config) string {
	switch h := c.HTTP; {
	case h.Auth == auth.ModeBasic:
		return "http.users"
	case h.Auth == auth.ModeToken && h.Token != "":
		return "http.token"
	case h.Auth == auth.ModeToken:
		return "http.token_file"
	}
	return "http.auth"
}

// cgiConfig maps [cgi].
func cgiConfig(c *config.Config) cgi.Config {
	g := c.CGI
	return cgi.Config{Dir: g.Dir, Timeout: g.Timeout.Duration, MaxOutput: g.MaxOutput, User: g.User,
		CPUSeconds: uint64(max(g.CPUSeconds, 0)), MaxMemory: uint64(max(g.MaxMemory, 0)), MaxProcesses: uint64(max(g.MaxProcesses, 0))}
}

// healthConfig maps [[health.process]] and [[health.check]].
func healthConfig(c *config.Config) health.Config {
	var h health.Config
	for _, p := range c.Health.Processes {
		h.Processes = append(h.Processes, p.Name)
	}
	for _, k := range c.Health.Checks {
		h.Checks = append(h.Checks, health.Check{Command: k.Command, Interval: k.Interval.Duration, Timeout: k.Timeout.Duration, Runstate: k.Runstate})
	}
	return h
}

// supervised maps [[supervise]].
func supervised(c *config.Config) []supervise.Helper {
	out := make([]supervise.Helper, 0, len(c.Supervise))
	for _, s := range c.Supervise {
		out = append(out, supervise.Helper{Name: s.Name, Command: s.Command})
	}
	return out
}

// BackupOptions maps the boot config: its file, the lines of its inline
// secrets and the cluster's identity (its key id is the store secret's,
// the first cluster key: the same on every board before, during and after
// a rotation, which a board started before it and one restarted after it
// would otherwise disagree on).
func (b *Boot) BackupOptions() backup.Options {
	o := backup.Options{Name: b.State.Name, ConfigPath: b.File, Secrets: map[string]int{},
		Cluster: backup.Cluster{Peers: b.PeerList, KeyID: backup.KeyID(b.StoreKey)}}
	for k, l := range b.SecretLines {
		o.Secrets[k] = l
	}
	return o
}

// Automation is the automation's config of b: [mqtt] and [[rule]] with
// the rules' key secret, the board's clock and the config's citations.
func (b *Boot) Automation() automation.Config {
	c := b.Auto
	c.KeySecret, c.Clock, c.Cite = ruleKeySecret(b), b.Clock, b.Cite
	return c
}
