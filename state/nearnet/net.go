package nearnet

import (
	"bytes"
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
	// TCP retransmission timeout, a clock gone wrong) and refused. It fits
	// the wire's 32 bits of µs.
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

// problem says what is wrong with n, "" when it may be kept: a valid,
// masked prefix of the size PrefixOf makes, a round trip in (0, MaxRTT].
func (n Net) problem() string {
	p := n.Prefix
	switch {
	case !p.IsValid():
		return "invalid prefix"
	case p.Masked() != p:
		return "host bits set"
	case p.Bits() != V4Bits && p.Addr().Is4(), p.Bits() != V6Bits && p.Addr().Is6():
		return "not a /24 (IPv4) or /48 (IPv6)"
	case n.RTT <= 0:
		return "round trip not positive"
	case n.RTT > MaxRTT:
		return "round trip over 30s"
	}
	return ""
}

// Clean is nets as a receiver keeps them: entries with a bad prefix or
// round trip left out, the same network twice kept once (the shorter), at
// most MaxNets (the nearest); problems says what was left out and why.
func Clean(nets []Net) (kept []Net, problems []string) {
next:
	for _, n := range nets {
		if why := n.problem(); why != "" {
			problems = append(problems, "nearnet: "+n.Prefix.String()+": "+why)
			continue
		}
		for i := range kept {
			if kept[i].Prefix == n.Prefix {
				kept[i].RTT = min(kept[i].RTT, n.RTT)
				problems = append(problems, "nearnet: "+n.Prefix.String()+": listed twice")
				continue next
			}
		}
		kept = append(kept, n)
	}
	sortNets(kept)
	if len(kept) > MaxNets {
		problems = append(problems, "nearnet: over the limit of 8 networks: the nearest 8 kept")
		kept = kept[:MaxNets]
	}
	return kept, problems
}

// sortNets orders nets by round trip, equal ones by address (an insertion
// sort: a report has a few networks, and the generic sort costs the small
// boards' flash 7 KB).
func sortNets(nets []Net) {
	for i := 1; i < len(nets); i++ {
		for j := i; j > 0 && nearer(nets[j], nets[j-1]); j-- {
			nets[j], nets[j-1] = nets[j-1], nets[j]
		}
	}
}

// nearer: a before b (shorter round trip, then lower address).
func nearer(a, b Net) bool {
	if a.RTT != b.RTT {
		return a.RTT < b.RTT
	}
	x, y := a.Prefix.Addr().As16(), b.Prefix.Addr().As16()
	return bytes.Compare(x[:], y[:]) < 0
}
