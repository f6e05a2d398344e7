package config

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
)

// Policies is every value sched.policy accepts.
var Policies = []string{"priority-lc", "lc", "wlc", "rr", "wrr", "random", "p2c",
	"source-hash", "dest-hash", "adaptive", "integrated", "qsc"}

// Drivers is every value device.driver accepts.
var Drivers = []string{"gpio-out", "gpio-in", "pwm", "bmxx80", "ds18b20",
	"modbus-coil", "modbus-register", "command", "sim-switch", "sim-sensor", "sim-button", "sim-pwm"}

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-]{0,62}$`)

// Validate checks every rule a file can break without hardware and returns
// each problem with its line; nil when the config is usable.
func (c *Config) Validate() Errors {
	var errs Errors
	bad := func(key, format string, args ...any) { errs = append(errs, c.Errorf(key, format, args...)) }

	if !nameRe.MatchString(c.Node.Name) {
		bad("node.name", "%q is not a board name (letters, digits, - _ . ; up to 63)", c.Node.Name)
	}
	if c.Node.Capacity < 1 {
		bad("node.capacity", "must be at least 1, got %d", c.Node.Capacity)
	}
	if c.Node.Weight < 0 {
		bad("node.weight", "must not be negative, got %d", c.Node.Weight)
	}
	for _, a := range [][2]string{{"node.http", c.Node.HTTP}, {"node.gossip", c.Node.Gossip}} {
		if _, _, err := net.SplitHostPort(a[1]); err != nil {
			bad(a[0], "%q is not host:port: %v", a[1], err)
		}
	}

	c.validateCluster(bad)
	c.validateSched(bad)
	c.validateHTTP(bad)
	c.validateDevices(bad)
	for i, h := range c.Health.Processes {
		if strings.TrimSpace(h.Name) == "" {
			bad(fmt.Sprintf("health.process[%d].name", i), "empty process name")
		}
	}
	for i, h := range c.Health.Checks {
		if strings.TrimSpace(h.Command) == "" {
			bad(fmt.Sprintf("health.check[%d].command", i), "empty command")
		}
		if h.Runstate != "down" && h.Runstate != "overloaded" {
			bad(fmt.Sprintf("health.check[%d].runstate", i), "%q: want down or overloaded", h.Runstate)
		}
	}
	for i, s := range c.Supervise {
		if len(s.Command) == 0 || s.Command[0] == "" {
			bad(fmt.Sprintf("supervise[%d].command", i), "empty command")
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func (c *Config) validateCluster(bad func(string, string, ...any)) {
	cl := c.Cluster
	if cl.Heartbeat.Duration <= 0 {
		bad("cluster.heartbeat", "must be positive")
	}
	if cl.TMax.Duration <= cl.Heartbeat.Duration {
		bad("cluster.tmax", "%v must be longer than heartbeat %v", cl.TMax.Duration, cl.Heartbeat.Duration)
	}
	if cl.TThreshold.Duration <= cl.Heartbeat.Duration {
		bad("cluster.tthreshold", "%v must be longer than heartbeat %v", cl.TThreshold.Duration, cl.Heartbeat.Duration)
	}
	if cl.Key != "" && cl.KeyFile != "" {
		bad("cluster.key", "set key or key_file, not both")
	}
	if cl.Key != "" {
		if _, err := DecodeKey(cl.Key); err != nil {
			bad("cluster.key", "%v", err)
		}
	}
	if len(cl.Peers) == 0 {
		return
	}
	if cl.Key == "" && cl.KeyFile == "" && !cl.Insecure {
		bad("cluster", "no key: set key_file or key (or insecure = true, never on a real network)")
	}
	peers, err := c.Peers()
	if err != nil {
		bad("cluster.peers", "%v", err)
		return
	}
	names, addrs := map[string]bool{}, map[string]bool{}
	self := false
	for _, p := range peers {
		if !nameRe.MatchString(p.Name) {
			bad("cluster.peers", "%q is not a board name", p.Name)
		}
		if names[p.Name] {
			bad("cluster.peers", "duplicate peer name %q", p.Name)
		}
		if addrs[p.Addr] {
			bad("cluster.peers", "duplicate peer address %q", p.Addr)
		}
		names[p.Name], addrs[p.Addr] = true, true
		self = self || p.Name == c.Node.Name
	}
	if !self {
		bad("node.name", "%q is not in cluster.peers %v", c.Node.Name, cl.Peers)
	}
}

func (c *Config) validateSched(bad func(string, string, ...any)) {
	s := c.Sched
	if !contains(Policies, s.Policy) {
		bad("sched.policy", "unknown policy %q; want one of %s", s.Policy, strings.Join(Policies, " "))
	}
	if s.Mode != "proxy" && s.Mode != "redirect" {
		bad("sched.mode", "%q: want proxy or redirect", s.Mode)
	}
	if s.Queue < 1 {
		bad("sched.queue", "must be at least 1, got %d", s.Queue)
	}
	if s.QueueTimeout.Duration <= 0 {
		bad("sched.queue_timeout", "must be positive")
	}
	if s.Reserve < 0 || s.Reserve >= 1 || s.Reserve != s.Reserve {
		bad("sched.reserve", "%v: want a share in [0, 1)", s.Reserve)
	}
	if s.Sticky != "" && s.Sticky != "cookie" && s.Sticky != "source-ip" {
		bad("sched.sticky", "%q: want cookie or source-ip", s.Sticky)
	}
	seen := map[string]bool{}
	sum := 0.0
	for i, cl := range s.Classes {
		key := fmt.Sprintf("sched.class[%d]", i)
		if !nameRe.MatchString(cl.Name) {
			bad(key+".name", "%q is not a class name", cl.Name)
		}
		if seen[cl.Name] {
			bad(key+".name", "duplicate class %q", cl.Name)
		}
		seen[cl.Name] = true
		if len(cl.Match) == 0 {
			bad(key+".match", "class %q matches nothing", cl.Name)
		}
		for _, m := range cl.Match {
			if err := CheckRule(m); err != nil {
				bad(key+".match", "%v", err)
			}
		}
		if cl.Weight < 0 || cl.Weight != cl.Weight {
			bad(key+".weight", "%v: must not be negative", cl.Weight)
		}
		sum += cl.Weight
	}
	if s.Policy == "qsc" && sum <= 0 {
		bad("sched.class", "qsc needs class weights that sum to more than zero")
	}
	validateLoadModel("sched.adaptive", s.Adaptive, bad)
	validateLoadModel("sched.integrated", s.Integrated, bad)
	for i, p := range s.Proximity {
		key := fmt.Sprintf("sched.proximity[%d]", i)
		if _, err := netip.ParsePrefix(p.CIDR); err != nil {
			bad(key+".cidr", "%q: %v", p.CIDR, err)
		}
		if len(p.Prefer) == 0 {
			bad(key+".prefer", "empty")
		}
		for _, n := range p.Prefer {
			if c.Rank(n) < 0 && n != c.Node.Name {
				bad(key+".prefer", "%q is not in cluster.peers", n)
			}
		}
	}
}

// validateLoadModel checks the keys and values of [sched.adaptive] and
// [sched.integrated]: known resources, finite non-negative numbers,
// baselines above zero.
func validateLoadModel(key string, m LoadModel, bad func(string, string, ...any)) {
	check := func(sub string, vals map[string]float64, known []string, positive bool) {
		for k, v := range vals {
			if !contains(known, k) {
				bad(key+"."+sub, "unknown key %q; want one of %s", k, strings.Join(known, " "))
			}
			if v != v || v < 0 || v > 1e9 || (positive && v == 0) {
				bad(key+"."+sub+"."+k, "%v: want a finite number above %s", v, map[bool]string{true: "0", false: "or equal to 0"}[positive])
			}
		}
	}
	check("weights", m.Weights, []string{"cpu", "mem", "net", "disk", "rt"}, false)
	check("baselines", m.Baselines, []string{"cpu", "mem", "net", "disk"}, true)
	check("limits", m.Limits, []string{"cpu", "cpu_overload", "mem", "disk", "rt"}, true)
}

// CheckRule validates a class rule: "*", or "METHOD /path-glob" where METHOD
// may be "*".
func CheckRule(rule string) error {
	if strings.TrimSpace(rule) == "*" {
		return nil
	}
	method, path, ok := strings.Cut(strings.TrimSpace(rule), " ")
	path = strings.TrimSpace(path)
	if !ok || method == "" || !strings.HasPrefix(path, "/") {
		return fmt.Errorf("rule %q: want \"*\" or \"METHOD /path/glob\"", rule)
	}
	if method != "*" && strings.ToUpper(method) != method {
		return fmt.Errorf("rule %q: method must be upper case or *", rule)
	}
	return nil
}

func (c *Config) validateHTTP(bad func(string, string, ...any)) {
	h := c.HTTP
	switch h.Auth {
	case "none":
	case "token":
		if h.Token == "" && h.TokenFile == "" {
			bad("http.token_file", "auth = \"token\" needs token_file or token")
		}
	case "basic":
		if len(h.Users) == 0 {
			bad("http.users", "auth = \"basic\" needs users = [\"name:$2a$...bcrypt\"]")
		}
		for _, u := range h.Users {
			name, hash, ok := strings.Cut(u, ":")
			if !ok || name == "" || !strings.HasPrefix(hash, "$2") {
				bad("http.users", "%q: want \"name:<bcrypt hash>\"", redact(u))
			}
		}
	default:
		bad("http.auth", "%q: want token, basic or none", h.Auth)
	}
	if h.MaxBody < 0 {
		bad("http.max_body", "must not be negative")
	}
}

func (c *Config) validateDevices(bad func(string, string, ...any)) {
	names := map[string]int{}
	pins := map[string]string{} // node/pin -> device
	for i, d := range c.Devices {
		key := fmt.Sprintf("device[%d]", i)
		if !nameRe.MatchString(d.Name) {
			bad(key+".name", "%q is not a device name (letters, digits, - _ .)", d.Name)
		}
		if _, dup := names[d.Name]; dup {
			bad(key+".name", "duplicate device %q", d.Name)
		}
		names[d.Name] = i
		if !contains(Drivers, d.Driver) {
			bad(key+".driver", "device %q: unknown driver %q; want one of %s", d.Name, d.Driver, strings.Join(Drivers, " "))
		}
		if d.Node != "any" && d.Node != c.Node.Name && !c.Standalone() && c.Rank(d.Node) < 0 {
			bad(key+".node", "device %q: board %q is not in cluster.peers", d.Name, d.Node)
		}
		if d.Pin != "" {
			k := d.Node + "/" + d.Pin
			if other, used := pins[k]; used {
				bad(key+".pin", "device %q: pin %s on %s is already used by %q", d.Name, d.Pin, d.Node, other)
			}
			pins[k] = d.Name
		}
		for _, v := range []struct{ k, val string }{{"initial", d.Initial}, {"on_stop", d.OnStop}} {
			if v.val != "" && v.val != "on" && v.val != "off" && !(v.k == "on_stop" && v.val == "keep") {
				bad(key+"."+v.k, "device %q: %q: want on or off", d.Name, v.val)
			}
		}
		if d.Min != nil && d.Max != nil && *d.Min > *d.Max {
			bad(key+".min", "device %q: min %v above max %v", d.Name, *d.Min, *d.Max)
		}
	}
	for i, d := range c.Devices {
		for _, other := range d.Interlock {
			if _, ok := names[other]; !ok {
				bad(fmt.Sprintf("device[%d].interlock", i), "device %q: interlock names unknown device %q", d.Name, other)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func redact(u string) string {
	name, _, _ := strings.Cut(u, ":")
	return name + ":…"
}
