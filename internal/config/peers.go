package config

import (
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/ews-firmware/ews/internal/bundle"
)

// Peer is one entry of cluster.peers; Rank is its index (0 = first = lowest).
type Peer struct {
	Rank int
	Name string
	Addr string // gossip host:port
}

// Peers parses cluster.peers in rank order.
func (c *Config) Peers() ([]Peer, error) {
	out := make([]Peer, 0, len(c.Cluster.Peers))
	for i, s := range c.Cluster.Peers {
		name, addr, ok := strings.Cut(s, "=")
		name, addr = strings.TrimSpace(name), strings.TrimSpace(addr)
		if !ok || name == "" || addr == "" {
			return nil, fmt.Errorf("peer %d %q: want \"name=host:port\"", i+1, s)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("peer %q: address %q: %v", name, addr, err)
		}
		out = append(out, Peer{Rank: i, Name: name, Addr: addr})
	}
	return out, nil
}

// Standalone reports whether no peers are configured.
func (c *Config) Standalone() bool { return len(c.Cluster.Peers) == 0 }

// Rank returns the rank of the named board, or -1.
func (c *Config) Rank(name string) int {
	ps, _ := c.Peers()
	for _, p := range ps {
		if p.Name == name {
			return p.Rank
		}
	}
	return -1
}

// ClusterKey returns the AES key for gossip and dispatch marks: the inline
// key, else the contents of key_file. Nil with no error when insecure.
func (c *Config) ClusterKey() ([]byte, error) {
	if c.Cluster.Key != "" {
		k, err := DecodeKey(c.Cluster.Key)
		if err != nil {
			return nil, c.Errorf("cluster.key", "%v", err)
		}
		return k, nil
	}
	if c.Cluster.KeyFile != "" {
		b, err := os.ReadFile(c.Cluster.KeyFile)
		if err != nil {
			return nil, c.Errorf("cluster.key_file", "cannot read key: %v", err)
		}
		k, err := DecodeKey(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, c.Errorf("cluster.key_file", "%s: %v", c.Cluster.KeyFile, err)
		}
		return k, nil
	}
	if c.Cluster.BundleFile != "" && !c.Cluster.Insecure {
		b, err := bundle.Read(c.Cluster.BundleFile)
		if err != nil {
			return nil, c.Errorf("cluster.bundle_file", "%v", err)
		}
		k, err := DecodeKey(b.Key)
		if err != nil {
			return nil, c.Errorf("cluster.bundle_file", "%s: %v", c.Cluster.BundleFile, err)
		}
		return k, nil
	}
	if c.Cluster.Insecure || c.Standalone() {
		return nil, nil
	}
	return nil, c.Errorf("cluster", "no key: set bundle_file, key_file or key (or insecure = true for tests)")
}

// DecodeKey decodes a base64 AES-128/192/256 key.
func DecodeKey(s string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("key is not valid base64: %v", err)
	}
	switch len(k) {
	case 16, 24, 32:
		return k, nil
	}
	return nil, fmt.Errorf("key is %d bytes, want 16, 24 or 32 bytes of base64", len(k))
}
