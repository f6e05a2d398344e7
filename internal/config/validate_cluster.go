package config

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
