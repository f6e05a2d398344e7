package mdns

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/net/ipv4"
)

// Board is one board found on the LAN.
type Board struct {
	Name    string       `json:"name"`    // the instance name (the board's name)
	Host    string       `json:"host"`    // "ews1.local."
	Port    int          `json:"port"`    // its HTTP or HTTPS port
	TLS     bool         `json:"tls"`     // found as _ews-https._tcp
	Addrs   []netip.Addr `json:"addrs"`   // its A and AAAA records (IPv4 first)
	Cluster string       `json:"cluster"` // TXT cluster=
	Role    string       `json:"role"`    // TXT role=: "master" or "follower"
	Version string       `json:"version"` // TXT version=
}

// URL is the board's base URL on its first address ("" without one).
func (b Board) URL() string {
	if len(b.Addrs) == 0 {
		return ""
	}
	scheme := "http"
	if b.TLS {
		scheme = "https"
	}
	return scheme + "://" + netip.AddrPortFrom(b.Addrs[0], uint16(b.Port)).String()
}

// BrowseOptions tunes Browse.
type BrowseOptions struct {
	Timeout time.Duration // how long to listen for answers; default 2s
	Port    int           // the port of the responders; default 5353 (tests)
}

// Browse asks every multicast interface for the ews services and returns
// the boards that answered within the timeout, sorted by name. It queries
// as a one-shot (legacy) resolver from an ephemeral port, so it needs no
// privilege and does not compete with avahi for 5353; responders answer it
// by unicast.
func Browse(ctx context.Context, o BrowseOptions) ([]Board, error) {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Port == 0 {
		o.Port = Port
	}
	ifcs, err := multicastInterfaces(netip.Addr{})
	if err != nil {
		return nil, fmt.Errorf("mdns: list interfaces: %w", err)
	}
	if len(ifcs) == 0 {
		return nil, errors.New("mdns: no network interface is up with multicast")
	}
	c, err := net.ListenPacket("udp4", "0.0.0.0:0")
	if err != nil {
		return nil, fmt.Errorf("mdns: open a udp4 socket: %w", err)
	}
	defer c.Close()
	p := ipv4.NewPacketConn(c)
	_ = p.SetMulticastTTL(255)
	_ = p.SetMulticastLoopback(true) // boards on this host answer too
	query, err := browseQuery(uint16(rand.Uint32()))
	if err != nil {
		return nil, err
	}
	group := &net.UDPAddr{IP: groupV4.AsSlice(), Port: o.Port}
	send := func() int {
		sent := 0
		for i := range ifcs {
			if err := p.SetMulticastInterface(&ifcs[i]); err != nil {
				continue
			}
			if _, err := p.WriteTo(query, nil, group); err == nil {
				sent++
			}
		}
		return sent
	}
	if send() == 0 {
		return nil, fmt.Errorf("mdns: could not send a query on any of %d interfaces", len(ifcs))
	}
	deadline := time.Now().Add(o.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	resend := time.Now().Add(o.Timeout / 3) // one more query, for a lost datagram
	var col collector
	buf := make([]byte, 9000)
	for {
		wait := deadline
		if !resend.IsZero() && resend.Before(wait) {
			wait = resend
		}
		_ = c.SetReadDeadline(wait)
		n, src, err := c.ReadFrom(buf)
		if err == nil {
			var from netip.Addr
			if ua, ok := src.(*net.UDPAddr); ok {
				from = ua.AddrPort().Addr().Unmap()
			}
			col.add(buf[:n], from)
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			break
		}
		if !resend.IsZero() && !time.Now().Before(resend) {
			send()
			resend = time.Time{}
		}
		if err != nil && !isTimeout(err) {
			return nil, fmt.Errorf("mdns: read answers: %w", err)
		}
	}
	return col.boards(), nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// browseQuery asks for the PTR records of both service types.
func browseQuery(id uint16) ([]byte, error) {
	b := dnsmessage.NewBuilder(make([]byte, 0, 64), dnsmessage.Header{ID: id})
	if err := b.StartQuestions(); err != nil {
		return nil, fmt.Errorf("mdns: pack query: %w", err)
	}
	for _, typ := range []string{ServiceHTTP, ServiceHTTPS} {
		if err := b.Question(dnsmessage.Question{Name: mustName(serviceName(typ)), Type: dnsmessage.TypePTR, Class: dnsmessage.ClassINET}); err != nil {
			return nil, fmt.Errorf("mdns: pack query: %w", err)
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil, fmt.Errorf("mdns: pack query: %w", err)
	}
	return out, nil
}

// collector gathers the records of the answers Browse receives.
// Malformed packets, queries and records of other services are ignored.
type collector struct {
	instances map[string]string // "ews1._ews._tcp.local." (lower case) -> as the PTR spells it
	srv       map[string]dnsmessage.SRVResource
	txt       map[string][]string
	addrs     map[string][]netip.Addr // host (lower case) -> addresses
	from      map[string]netip.Addr   // instance -> the source of the answer naming it
	gone      map[string]bool         // instances whose PTR came with TTL 0 (goodbye)
}

// add reads one packet from src.
func (c *collector) add(pkt []byte, src netip.Addr) {
	var p dnsmessage.Parser
	h, err := p.Start(pkt)
	if err != nil || !h.Response || p.SkipAllQuestions() != nil {
		return
	}
	if c.instances == nil {
		c.instances, c.srv, c.txt = map[string]string{}, map[string]dnsmessage.SRVResource{}, map[string][]string{}
		c.addrs, c.from, c.gone = map[string][]netip.Addr{}, map[string]netip.Addr{}, map[string]bool{}
	}
	// Answers, then authorities (skipped), then additionals; a record that
	// does not parse ends the packet (what came before it is kept).
	if !c.section(&p, p.AnswerHeader, p.SkipAnswer, src) || p.SkipAllAuthorities() != nil {
		return
	}
	c.section(&p, p.AdditionalHeader, p.SkipAdditional, src)
}

// section reads the records of one section; false: malformed.
func (c *collector) section(p *dnsmessage.Parser, next func() (dnsmessage.ResourceHeader, error), skip func() error, src netip.Addr) bool {
	for {
		hdr, err := next()
		if err == dnsmessage.ErrSectionDone {
			return true
		}
		if err != nil || c.record(p, hdr, skip, src) != nil {
			return false
		}
	}
}

// record reads the body of one record (p just past its header hdr).
func (c *collector) record(p *dnsmessage.Parser, hdr dnsmessage.ResourceHeader, skip func() error, src netip.Addr) error {
	name := strings.ToLower(hdr.Name.String())
	switch hdr.Type {
	case dnsmessage.TypePTR:
		b, err := p.PTRResource()
		if err != nil {
			return err
		}
		inst := strings.ToLower(b.PTR.String())
		if name != serviceName(ServiceHTTP) && name != serviceName(ServiceHTTPS) || !strings.HasSuffix(inst, "."+name) {
			return nil
		}
		if hdr.TTL == 0 {
			c.gone[inst] = true
			return nil
		}
		c.instances[inst] = b.PTR.String()
		delete(c.gone, inst)
		c.from[inst] = src
	case dnsmessage.TypeSRV:
		b, err := p.SRVResource()
		if err != nil {
			return err
		}
		c.srv[name] = b
	case dnsmessage.TypeTXT:
		b, err := p.TXTResource()
		if err != nil {
			return err
		}
		c.txt[name] = b.TXT
	case dnsmessage.TypeA:
		b, err := p.AResource()
		if err != nil {
			return err
		}
		c.addAddr(name, netip.AddrFrom4(b.A))
	case dnsmessage.TypeAAAA:
		b, err := p.AAAAResource()
		if err != nil {
			return err
		}
		c.addAddr(name, netip.AddrFrom16(b.AAAA))
	default:
		return skip()
	}
	return nil
}
func (c *collector) addAddr(host string, ip netip.Addr) {
	for _, have := range c.addrs[host] {
		if have == ip {
			return
		}
	}
	c.addrs[host] = append(c.addrs[host], ip)
}

// boards assembles what was collected: one Board per instance that has an
// SRV record; without an address record, the source of the answer.
func (c *collector) boards() []Board {
	out := []Board{}
	for inst, spelt := range c.instances {
		if c.gone[inst] {
			continue
		}
		srv, ok := c.srv[inst]
		if !ok {
			continue
		}
		b := Board{Host: srv.Target.String(), Port: int(srv.Port)}
		b.TLS = strings.HasSuffix(inst, "."+serviceName(ServiceHTTPS))
		b.Name = instanceLabel(spelt, b.TLS)
		b.Addrs = append(b.Addrs, c.addrs[strings.ToLower(b.Host)]...)
		if len(b.Addrs) == 0 && c.from[inst].IsValid() {
			b.Addrs = []netip.Addr{c.from[inst]}
		}
		sort.SliceStable(b.Addrs, func(i, j int) bool { return b.Addrs[i].Is4() && !b.Addrs[j].Is4() })
		for _, kv := range c.txt[inst] {
			k, v, _ := strings.Cut(kv, "=")
			switch strings.ToLower(k) {
			case "cluster":
				b.Cluster = v
			case "role":
				b.Role = v
			case "version":
				b.Version = v
			}
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := strings.ToLower(out[i].Name), strings.ToLower(out[j].Name)
		if a != b {
			return a < b
		}
		return !out[i].TLS && out[j].TLS
	})
	return out
}

// instanceLabel is the instance part of "ews1._ews._tcp.local." (the
// suffix matched in any case).
func instanceLabel(inst string, tls bool) string {
	typ := ServiceHTTP
	if tls {
		typ = ServiceHTTPS
	}
	suffix := "." + serviceName(typ)
	if len(inst) >= len(suffix) && strings.EqualFold(inst[len(inst)-len(suffix):], suffix) {
		return inst[:len(inst)-len(suffix)]
	}
	return inst
}
