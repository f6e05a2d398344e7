package nearnet

import (
	"fmt"
	"net/netip"
	"time"
)

// Net is one client network and a board's round trip to it.
type Net struct {
	Prefix netip.Prefix
	RTT    time.Duration
}

// The bounds of a report: what a board publishes and what a receiver keeps.
const (
	// MaxNets is how many networks a board reports, its nearest: a
	// report travels in gossip (the node meta, 512 bytes), so it names
	// the networks it is nearest to, not every one it served.
	MaxNets = 8
	// MaxRTT is the longest round trip taken; a longer one is absurd (a
	// TCP retransmission timeout, a clock gone wrong) and refused.
	MaxRTT = 30 * time.Second
	// V4Bits and V6Bits are the client network's size: a /24 for IPv4
	// (one LAN or one ISP's customer block), a /48 for IPv6 (one site).
	V4Bits = 24
	V6Bits = 48
)

// PrefixOf is client's network (V4Bits, V6Bits; an IPv4-mapped address is
// IPv4); ok false for an invalid address.
func PrefixOf(client netip.Addr) (netip.Prefix, bool) {
	if !client.IsValid() {
		return netip.Prefix{}, false
	}
	a, bits := client.Unmap(), V6Bits
	if a.Is4() {
		bits = V4Bits
	}
	p, err := a.Prefix(bits)
	return p, err == nil
}

// check says what is wrong with n, nil when it may be kept: a valid,
// masked prefix of the size PrefixOf makes, a round trip in (0, MaxRTT].
func (n Net) check() error {
	switch {
	case !n.Prefix.IsValid():
		return fmt.Errorf("nearnet: invalid prefix %v", n.Prefix)
	case n.Prefix.Masked() != n.Prefix:
		return fmt.Errorf("nearnet: prefix %v has host bits set", n.Prefix)
	case n.Prefix.Addr().Is4() && n.Prefix.Bits() != V4Bits, n.Prefix.Addr().Is6() && n.Prefix.Bits() != V6Bits:
		return fmt.Errorf("nearnet: prefix %v is not a /%d (IPv4) or /%d (IPv6)", n.Prefix, V4Bits, V6Bits)
	case n.RTT <= 0:
		return fmt.Errorf("nearnet: round trip %v to %v is not positive", n.RTT, n.Prefix)
	case n.RTT > MaxRTT:
		return fmt.Errorf("nearnet: round trip %v to %v is over %v", n.RTT, n.Prefix, MaxRTT)
	}
	return nil
}

// Clean is nets as a receiver keeps them: entries with a bad prefix or
// round trip left out, the same network twice kept once (the shorter), at
// most MaxNets (the nearest); problems says what was left out and why.
func Clean(nets []Net) (kept []Net, problems []string) {
	seen := map[netip.Prefix]int{}
	for _, n := range nets {
		if err := n.check(); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if i, ok := seen[n.Prefix]; ok {
			kept[i].RTT = min(kept[i].RTT, n.RTT)
			problems = append(problems, fmt.Sprintf("nearnet: %v listed twice", n.Prefix))
			continue
		}
		seen[n.Prefix] = len(kept)
		kept = append(kept, n)
	}
	sortNets(kept)
	if len(kept) > MaxNets {
		problems = append(problems, fmt.Sprintf("nearnet: %d networks, over the limit of %d: the nearest %d kept", len(kept), MaxNets, MaxNets))
		kept = kept[:MaxNets]
	}
	return kept, problems
}
