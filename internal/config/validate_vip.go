package config

// validateVIP checks what cluster.vip needs of the rest of the file; the
// address itself and the interface name are vip's to judge
// (vip.ParsePrefix, vip.CheckInterface, called by node's mapping).
func (c *Config) validateVIP(bad func(string, string, ...any)) {
	cl := c.Cluster
	if cl.VIP == "" {
		if cl.VIPInterface != "" {
			bad("cluster.vip_interface", "set without cluster.vip")
		}
		return
	}
	if len(cl.Peers) == 0 {
		bad("cluster.vip", "needs cluster.peers: a virtual IP follows the master of a cluster")
	}
}
