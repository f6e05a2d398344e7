package config

import "github.com/ews-firmware/ews/state"

// State maps [node] and [cluster] onto the cluster's own configuration,
// reading the key file. Errors name the key they come from.
func (c *Config) State() (state.Config, error) {
	s := state.DefaultConfig()
	s.Name, s.Gossip, s.HTTP, s.Advertise = c.Node.Name, c.Node.Gossip, c.Node.HTTP, c.Node.Advertise
	s.Capacity, s.Weight = c.Node.Capacity, c.Node.Weight
	s.Simulated = c.Simulated()
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
