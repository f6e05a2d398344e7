package mdns

import (
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// metaQuery is the DNS-SD service enumeration name (RFC 6763 §9).
const metaQuery = "_services._dns-sd._udp.local."

// cacheFlush is the top bit of a unique record's class in a multicast
// response (RFC 6762 §10.2); in a question the same bit asks for a
// unicast reply (QU, §5.4).
const cacheFlush = 1 << 15

// zone is the set of records one board owns. It is a value: the responder
// swaps in a new one when the role changes. Not safe to modify while
// shared.
type zone struct {
	service  string   // "_ews._tcp.local."
	instance string   // "ews1._ews._tcp.local."
	host     string   // "ews1.local."
	port     uint16   // SRV port
	txt      []string // "key=value" strings
}

func newZone(o Options, role string) zone {
	typ := ServiceHTTP
	if o.TLS {
		typ = ServiceHTTPS
	}
	svc := serviceName(typ)
	l := label(o.Name)
	return zone{
		service:  svc,
		instance: l + "." + svc,
		host:     l + ".local.",
		port:     uint16(o.Port),
		txt:      []string{"txtvers=1", "cluster=" + o.Cluster, "role=" + role},
	}
}

// kinds is a set of the records a zone holds.
type kinds uint8

const (
	kPTR  kinds = 1 << iota // service -> instance
	kSRV                    // instance -> host:port
	kTXT                    // instance -> TXT
	kA                      // host -> IPv4
	kAAAA                   // host -> IPv6
	kMeta                   // _services._dns-sd._udp -> service
	kAll  = kPTR | kSRV | kTXT | kA | kAAAA
)

// asked returns what of the zone a question asks for, and what to add
// as additional records (RFC 6763 §12).
func (z *zone) asked(q dnsmessage.Question) (answer, extra kinds) {
	name := q.Name.String()
	t := q.Type
	is := func(ts ...dnsmessage.Type) bool {
		for _, x := range ts {
			if t == x || t == dnsmessage.TypeALL {
				return true
			}
		}
		return false
	}
	switch {
	case strings.EqualFold(name, z.service) && is(dnsmessage.TypePTR):
		return kPTR, kSRV | kTXT | kA | kAAAA
	case strings.EqualFold(name, metaQuery) && is(dnsmessage.TypePTR):
		return kMeta, 0
	case strings.EqualFold(name, z.instance):
		if is(dnsmessage.TypeSRV) {
			answer |= kSRV
			extra |= kA | kAAAA
		}
		if is(dnsmessage.TypeTXT) {
			answer |= kTXT
		}
		return answer, extra
	case strings.EqualFold(name, z.host):
		if is(dnsmessage.TypeA) {
			answer |= kA
		}
		if is(dnsmessage.TypeAAAA) {
			answer |= kAAAA
		}
		return answer, 0
	}
	return 0, 0
}

// reply is how and where a query is answered.
type reply struct {
	msg     *response
	unicast bool // to the querier's address and port; else to the group
}

// answer builds the reply to the packet pkt, or returns false: not a
// query, malformed, or nothing in it is ours. legacy says the querier
// sent from another port than 5353: a one-shot resolver, which gets a
// conventional unicast answer (RFC 6762 §6.7). addrs gives the addresses
// to put in A/AAAA records (those of the interface the packet came in
// on); it is only called when a question is ours.
func (z *zone) answer(pkt []byte, legacy bool, addrs func() []netip.Addr) (reply, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(pkt)
	if err != nil || h.Response || h.OpCode != 0 {
		return reply{}, false
	}
	qs, err := p.AllQuestions()
	if err != nil {
		return reply{}, false
	}
	var ans, extra kinds
	allQU := len(qs) > 0
	var asked []dnsmessage.Question
	for _, qu := range qs {
		a, e := z.asked(qu)
		if a == 0 {
			continue
		}
		ans |= a
		extra |= e
		asked = append(asked, qu)
		if qu.Class&cacheFlush == 0 {
			allQU = false
		}
	}
	if ans == 0 {
		return reply{}, false
	}
	known, ok := z.known(&p)
	if !ok {
		return reply{}, false
	}
	ans &^= known
	if ans == 0 {
		return reply{}, false
	}
	var ips []netip.Addr
	if (ans|extra)&(kA|kAAAA) != 0 {
		ips = addrs()
	}
	extra &^= ans
	out := &response{}
	r := reply{msg: out, unicast: legacy || allQU}
	ttl := func(t uint32) uint32 { return t }
	if legacy {
		out.id = h.ID
		for _, qu := range asked {
			qu.Class &^= cacheFlush
			out.questions = append(out.questions, qu)
		}
		ttl = func(t uint32) uint32 { return min(t, legacyTTL) }
	}
	out.answers = z.records(ans, ips, ttl, !legacy)
	out.extras = z.records(extra, ips, ttl, !legacy)
	if len(out.answers) == 0 { // asked for AAAA with only IPv4 up, say
		return reply{}, false
	}
	return r, true
}

// known reads the answer section of a query (p past its questions): the
// records the querier already holds with more than half their TTL left,
// which the answer leaves out (known-answer suppression, RFC 6762 §7.1).
// Only the PTR is worth it: it is what browsers repeat. False: malformed.
func (z *zone) known(p *dnsmessage.Parser) (kinds, bool) {
	var k kinds
	for {
		h, err := p.AnswerHeader()
		if err == dnsmessage.ErrSectionDone {
			return k, true
		}
		if err != nil {
			return 0, false
		}
		if h.Type != dnsmessage.TypePTR {
			if err := p.SkipAnswer(); err != nil {
				return 0, false
			}
			continue
		}
		ptr, err := p.PTRResource()
		if err != nil {
			return 0, false
		}
		if strings.EqualFold(h.Name.String(), z.service) && strings.EqualFold(ptr.PTR.String(), z.instance) && h.TTL >= otherTTL/2 {
			k |= kPTR
		}
	}
}

// announcement is the unsolicited response a board multicasts at start
// and when its TXT changes (RFC 6762 §8.3), or with goodbye its records at
// TTL 0 (§10.1).
func (z *zone) announcement(ips []netip.Addr, goodbye bool) *response {
	ttl := func(t uint32) uint32 { return t }
	if goodbye {
		ttl = func(uint32) uint32 { return 0 }
	}
	return &response{answers: z.records(kAll, ips, ttl, true)}
}

// records returns the records of the kinds in k; flush sets the
// cache-flush bit on the unique ones (all but the PTRs).
func (z *zone) records(k kinds, ips []netip.Addr, ttl func(uint32) uint32, flush bool) []record {
	var out []record
	hdr := func(name string, t uint32, unique bool) dnsmessage.ResourceHeader {
		c := dnsmessage.ClassINET
		if unique && flush {
			c |= cacheFlush
		}
		return dnsmessage.ResourceHeader{Name: mustName(name), Class: c, TTL: ttl(t)}
	}
	if k&kMeta != 0 {
		out = append(out, record{hdr: hdr(metaQuery, otherTTL, false), body: &dnsmessage.PTRResource{PTR: mustName(z.service)}})
	}
	if k&kPTR != 0 {
		out = append(out, record{hdr: hdr(z.service, otherTTL, false), body: &dnsmessage.PTRResource{PTR: mustName(z.instance)}})
	}
	if k&kSRV != 0 {
		out = append(out, record{hdr: hdr(z.instance, hostTTL, true), body: &dnsmessage.SRVResource{Target: mustName(z.host), Port: z.port}})
	}
	if k&kTXT != 0 {
		out = append(out, record{hdr: hdr(z.instance, otherTTL, true), body: &dnsmessage.TXTResource{TXT: z.txt}})
	}
	for _, ip := range ips {
		switch {
		case ip.Is4() && k&kA != 0:
			out = append(out, record{hdr: hdr(z.host, hostTTL, true), body: &dnsmessage.AResource{A: ip.As4()}})
		case ip.Is6() && !ip.Is4In6() && k&kAAAA != 0:
			out = append(out, record{hdr: hdr(z.host, hostTTL, true), body: &dnsmessage.AAAAResource{AAAA: ip.As16()}})
		}
	}
	return out
}

// mustName makes a dnsmessage.Name of a name the zone built itself (at
// most 63+1+16+6 bytes: never over the 255 limit).
func mustName(s string) dnsmessage.Name {
	n, err := dnsmessage.NewName(s)
	if err != nil {
		panic("mdns: " + err.Error())
	}
	return n
}

// record is one resource record to send. body is a *dnsmessage.PTRResource,
// SRVResource, TXTResource, AResource or AAAAResource: kept apart from
// dnsmessage.Resource, whose use links the code for every record type.
type record struct {
	hdr  dnsmessage.ResourceHeader
	body any
}

// response is a DNS response to send.
type response struct {
	id              uint16                // legacy unicast: the query's ID; else 0
	questions       []dnsmessage.Question // legacy unicast: the questions answered
	answers, extras []record
}

// pack encodes the response (names compressed).
func (r *response) pack() ([]byte, error) {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), dnsmessage.Header{ID: r.id, Response: true, Authoritative: true})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	for _, q := range r.questions {
		if err := b.Question(q); err != nil {
			return nil, err
		}
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	for _, rr := range r.answers {
		if err := put(&b, rr); err != nil {
			return nil, err
		}
	}
	if err := b.StartAdditionals(); err != nil {
		return nil, err
	}
	for _, rr := range r.extras {
		if err := put(&b, rr); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

func put(b *dnsmessage.Builder, rr record) error {
	switch v := rr.body.(type) {
	case *dnsmessage.PTRResource:
		return b.PTRResource(rr.hdr, *v)
	case *dnsmessage.SRVResource:
		return b.SRVResource(rr.hdr, *v)
	case *dnsmessage.TXTResource:
		return b.TXTResource(rr.hdr, *v)
	case *dnsmessage.AResource:
		return b.AResource(rr.hdr, *v)
	case *dnsmessage.AAAAResource:
		return b.AAAAResource(rr.hdr, *v)
	}
	return fmt.Errorf("mdns: no packer for %T", rr.body)
}
