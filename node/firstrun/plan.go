package firstrun

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ews-firmware/ews/internal/clustertls"
)

// maxBoards is how many boards Start takes: a cluster's table of 32 rows
// is what fits one gossip packet (docs/DESIGN.md, Cluster invariants).
const maxBoards = 32

// defaultGossip is [node] gossip's default port.
const defaultGossip = "7946"

// plan is the cluster Start makes: the boards its CA may certify (in rank
// order, this board among them), their gossip addresses when the person
// gave them (then cluster.peers), and a DNS suffix the CA may certify
// boards under, so boards not named yet can still come (NAME.SUFFIX).
type plan struct {
	self   string
	boards []string // names, rank order, self included
	hosts  []string // boards[i]'s host, when addresses were given
	ports  []string // boards[i]'s gossip port, likewise
	domain string   // "" or a checked DNS suffix
}

var hostRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// parsePlan reads Start's form: self (checked already), boards (names, or
// NAME=HOST:PORT for all of them, separated by commas, spaces or lines)
// and domain (optional). Errors name the bad entry and say what is wanted.
func parsePlan(self, boards, domain string) (plan, error) {
	p := plan{self: self}
	entries := strings.FieldsFunc(boards, func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t' })
	if len(entries) > maxBoards {
		return p, fmt.Errorf("firstrun: %d boards: a cluster has at most %d", len(entries), maxBoards)
	}
	withAddr := 0
	for _, e := range entries {
		name, addr, hasAddr := strings.Cut(e, "=")
		name = strings.ToLower(name)
		if !nameRe.MatchString(name) {
			return p, fmt.Errorf("firstrun: board %q: a board name is 1 to 31 of a-z, 0-9 and -, starting with a letter or digit", name)
		}
		if slices.Contains(p.boards, name) {
			return p, fmt.Errorf("firstrun: board %q is listed twice", name)
		}
		var host, port string
		if hasAddr {
			withAddr++
			var err error
			if host, port, err = splitPeer(addr); err != nil {
				return p, fmt.Errorf("firstrun: board %s: %v", name, err)
			}
		}
		p.boards, p.hosts, p.ports = append(p.boards, name), append(p.hosts, host), append(p.ports, port)
	}
	switch {
	case withAddr > 0 && withAddr < len(entries):
		return p, fmt.Errorf("firstrun: give every board its address (NAME=HOST:PORT, the cluster's peers) or none (names only)")
	case withAddr > 0 && !slices.Contains(p.boards, self):
		return p, fmt.Errorf("firstrun: the boards do not name this board (%s): add %s=HOST:%s where its rank is", self, self, defaultGossip)
	case !slices.Contains(p.boards, self):
		if len(p.boards) == maxBoards {
			return p, fmt.Errorf("firstrun: %d boards and this one: a cluster has at most %d", maxBoards, maxBoards)
		}
		p.boards, p.hosts, p.ports = append([]string{self}, p.boards...), append([]string{""}, p.hosts...), append([]string{""}, p.ports...)
	}
	if domain = strings.ToLower(strings.TrimSpace(domain)); domain != "" {
		if err := clustertls.CheckDomain(domain); err != nil {
			return p, fmt.Errorf("firstrun: %w", err)
		}
		p.domain = domain
	}
	return p, nil
}

// splitPeer checks HOST:PORT: an IP address or a DNS name, a port number.
func splitPeer(addr string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("%q: want HOST:PORT (the gossip address, port %s by default)", addr, defaultGossip)
	}
	host = strings.ToLower(host)
	if net.ParseIP(host) == nil && (len(host) > 253 || !hostRe.MatchString(host)) {
		return "", "", fmt.Errorf("%q is neither an IP address nor a DNS name", host)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return host, port, nil
}

// scope is what the cluster CA may certify: the boards, their addresses,
// the suffix.
func (p plan) scope() clustertls.Scope {
	sc := clustertls.Scope{Boards: slices.Clone(p.boards)}
	for _, h := range p.hosts {
		switch n := clustertls.HostNet(h); {
		case h == "":
		case n != nil:
			sc.Nets = append(sc.Nets, n)
		default:
			sc.DNS = append(sc.DNS, h)
		}
	}
	if p.domain != "" {
		sc.DNS = append(sc.DNS, p.domain)
	}
	return sc
}

// certHosts are board name's further certificate names: its address and
// NAME.SUFFIX.
func (p plan) certHosts(name string) []string {
	var out []string
	if i := slices.Index(p.boards, name); i >= 0 && p.hosts[i] != "" {
		out = append(out, p.hosts[i])
	}
	if p.domain != "" {
		out = append(out, name+"."+p.domain)
	}
	return out
}

// peers is cluster.peers when addresses were given, else nil (this board
// alone until its boot config lists them).
func (p plan) peers() []string {
	if len(p.hosts) == 0 || p.hosts[0] == "" {
		return nil
	}
	out := make([]string, len(p.boards))
	for i, n := range p.boards {
		out[i] = n + "=" + net.JoinHostPort(p.hosts[i], p.ports[i])
	}
	return out
}

// gossip is this board's [node] gossip when its port is not the default.
func (p plan) gossip() string {
	i := slices.Index(p.boards, p.self)
	if p.hosts[i] == "" || p.ports[i] == defaultGossip {
		return ""
	}
	return ":" + p.ports[i]
}

// others are the boards after this one, to add next.
func (p plan) others() []string {
	return slices.DeleteFunc(slices.Clone(p.boards), func(n string) bool { return n == p.self })
}

// proposeBoards is the boards field's first value for this board's name:
// ews1 → "ews1, ews2, ews3" (a name ending in a number goes on counting),
// else the name alone.
func proposeBoards(name string) string {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(name[i:])
	if err != nil || i == 0 || n > 1000 {
		return name
	}
	stem := name[:i]
	return fmt.Sprintf("%s, %s%d, %s%d", name, stem, n+1, stem, n+2)
}
