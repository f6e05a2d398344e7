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
	if cl.Insecure && (cl.Key != "" || cl.KeyFile != "") {
		// it would silently turn gossip encryption off despite the key
		bad("cluster.insecure", "insecure = true turns gossip encryption off, yet a key is set: remove insecure, or the key")
	}
	if cl.Key != "" {
		if _, err := DecodeKey(cl.Key); err != nil {
			bad("cluster.key", "%v", err)
		}
	}
	if len(cl.Peers) == 0 {
		return
	}
	if cl.Key == "" && cl.KeyFile == "" && cl.BundleFile == "" && !cl.Insecure {
		bad("cluster", "no key: set bundle_file, key_file or key (or insecure = true, never on a real network)")
	}
	peers, err := c.Peers()
	if err != nil {
		bad("cluster.peers", "%v", err)
		return
	}
	names, addrs := map[string]int{}, map[string]int{}
	self := false
	for _, p := range peers {
		if !nameRe.MatchString(p.Name) {
			bad("cluster.peers", "%q is not a board name", p.Name)
		}
		c.once(bad, names, "cluster.peers", "peer name", p.Name, p.Rank, "cluster.peers[%d]")
		c.once(bad, addrs, "cluster.peers", "peer address", p.Addr, p.Rank, "cluster.peers[%d]")
		self = self || p.Name == c.Node.Name
	}
	if !self {
		bad("node.name", "%q is not in cluster.peers %v", c.Node.Name, cl.Peers)
	}
}
