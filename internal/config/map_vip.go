package config

import "github.com/ews-firmware/ews/vip"

// VIP maps cluster.vip and cluster.vip_interface onto the virtual IP
// manager's Config; a zero Config (not Enabled) when vip is unset.
// Validate has checked the address.
func (c *Config) VIP() (vip.Config, error) {
	if c.Cluster.VIP == "" {
		return vip.Config{}, nil
	}
	p, err := parseVIP(c.Cluster.VIP)
	if err != nil {
		return vip.Config{}, c.Errorf("cluster.vip", "%v", err)
	}
	return vip.Config{Prefix: p, Interface: c.Cluster.VIPInterface}, nil
}
