package state

import (
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
)

// memberlistConfig derives memberlist's settings from the board's config.
// The LAN defaults take 5–7 s to declare a node dead in a 3-node cluster;
// here failure detection is the paper's protocol (tables every heartbeat,
// takeover after tmax), and memberlist only has to keep the membership and
// notice deaths on the same scale.
func memberlistConfig(cfg Config, self Peer, kr *memberlist.Keyring, logOut io.Writer) (*memberlist.Config, error) {
	hb, tmax := cfg.Heartbeat, cfg.TMax
	mc := memberlist.DefaultLANConfig()
	mc.Name = cfg.Name

	host, port, err := splitPort(cfg.Gossip)
	if err != nil {
		return nil, fmt.Errorf("state: node.gossip %q: %w", cfg.Gossip, err)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	mc.BindAddr, mc.BindPort = host, port
	mc.AdvertisePort = port
	// Advertise the address the other boards have in their peer lists.
	if ahost, aport, err := splitPort(self.Addr); err == nil {
		if ip := resolveIP(ahost); ip != "" {
			mc.AdvertiseAddr, mc.AdvertisePort = ip, aport
		}
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() && mc.AdvertiseAddr == "" {
		mc.AdvertiseAddr = host
	}
	if host == "0.0.0.0" && mc.AdvertiseAddr == "" {
		mc.AdvertiseAddr = privateIP() // what memberlist guessed with go-sockaddr (privateip.go)
	}

	mc.ProbeInterval = max(tmax/2, 50*time.Millisecond) // a dead board is probed and suspected within about tmax
	mc.ProbeTimeout = mc.ProbeInterval / 2              // an ack on a LAN takes well under this
	mc.SuspicionMult = 2                                // suspicion lasts 2 probe intervals in small clusters
	mc.SuspicionMaxTimeoutMult = 3                      // and at most 3x that in large ones
	mc.GossipInterval = max(2*hb, 20*time.Millisecond)  // membership gossip; our own messages go directly
	mc.GossipToTheDeadTime = 5 * tmax                   // keep telling a dead board it is dead, briefly
	mc.PushPullInterval = max(15*tmax, 5*time.Second)   // full state sync, low frequency
	mc.TCPTimeout = max(2*tmax, 500*time.Millisecond)   // bounds a join to a silent peer
	mc.DeadNodeReclaimTime = tmax                       // a restarted board may come back under its name at once
	mc.EnableCompression = false                        // our messages are tens of bytes: LZW costs CPU and adds bytes
	if cfg.relay || Relayed(names(cfg.Peers)) {
		mc.GossipInterval = relayGossipInterval(hb) // the master's messages ride on gossip (relaywire.go)
	}

	if kr != nil { // the cluster's keys (Cluster.Keyring)
		mc.Keyring = kr
		mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = true, true
	}
	mc.Logger = log.New(logOut, "", 0)
	return mc, nil
}

func splitPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	return host, port, nil
}

// resolveIP returns host as an IP string, resolving a name; "" when it
// cannot (memberlist then picks a private address itself).
func resolveIP(host string) string {
	if host == "" {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsUnspecified() {
			return ""
		}
		return ip.String()
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return ""
	}
	return ips[0].String()
}
