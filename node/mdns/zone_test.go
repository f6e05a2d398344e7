package mdns

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

var (
	testV4 = netip.MustParseAddr("192.168.7.11")
	testV6 = netip.MustParseAddr("fd00::11")
)

func testZone(tls bool) zone {
	return newZone(Options{Name: "ews1", Port: 8080, TLS: tls, Cluster: "ews1"}, "master")
}

func pack(t testing.TB, m dnsmessage.Message) []byte {
	t.Helper()
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// packR encodes a response the way the responder sends it.
func packR(t testing.TB, r *response) []byte {
	t.Helper()
	b, err := r.pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func question(name string, typ dnsmessage.Type, qu bool) dnsmessage.Question {
	c := dnsmessage.ClassINET
	if qu {
		c |= cacheFlush
	}
	return dnsmessage.Question{Name: mustName(name), Type: typ, Class: c}
}

func query(t testing.TB, qs ...dnsmessage.Question) []byte {
	return pack(t, dnsmessage.Message{Header: dnsmessage.Header{ID: 77}, Questions: qs})
}

// describe renders records as "TYPE name -> data ttl flush" lines to compare.
func describeRRs(rrs []dnsmessage.Resource) []string {
	var out []string
	for _, r := range rrs {
		var data string
		switch b := r.Body.(type) {
		case *dnsmessage.PTRResource:
			data = b.PTR.String()
		case *dnsmessage.SRVResource:
			data = b.Target.String() + ":" + strconv.Itoa(int(b.Port))
		case *dnsmessage.TXTResource:
			data = strings.Join(b.TXT, ",")
		case *dnsmessage.AResource:
			data = netip.AddrFrom4(b.A).String()
		case *dnsmessage.AAAAResource:
			data = netip.AddrFrom16(b.AAAA).String()
		}
		flush := ""
		if r.Header.Class&cacheFlush != 0 {
			flush = " flush"
		}
		out = append(out, strings.TrimPrefix(r.Header.Type.String(), "Type")+" "+r.Header.Name.String()+" -> "+data+" ttl="+strconv.Itoa(int(r.Header.TTL))+flush)
	}
	return out
}

// A query for our records is answered with the records of RFC 6763 (PTR,
// then SRV, TXT and addresses as additionals), by multicast unless the
// querier asked for unicast or is a one-shot resolver.
func TestAnswer(t *testing.T) {
	const (
		ptr  = "PTR _ews._tcp.local. -> ews1._ews._tcp.local. ttl=4500"
		srv  = "SRV ews1._ews._tcp.local. -> ews1.local.:8080 ttl=120 flush"
		txt  = "TXT ews1._ews._tcp.local. -> txtvers=1,cluster=ews1,role=master ttl=4500 flush"
		a    = "A ews1.local. -> 192.168.7.11 ttl=120 flush"
		aaaa = "AAAA ews1.local. -> fd00::11 ttl=120 flush"
	)
	both := []netip.Addr{testV4, testV6}
	for _, tc := range []struct {
		name    string
		tls     bool
		qs      []dnsmessage.Question
		known   []dnsmessage.Resource
		legacy  bool
		addrs   []netip.Addr
		unicast bool
		answers []string
		extras  []string
	}{
		{name: "browse QM", qs: []dnsmessage.Question{question("_ews._tcp.local.", dnsmessage.TypePTR, false)},
			addrs: both, answers: []string{ptr}, extras: []string{srv, txt, a, aaaa}},
		{name: "browse QU", qs: []dnsmessage.Question{question("_ews._tcp.local.", dnsmessage.TypePTR, true)},
			addrs: both, unicast: true, answers: []string{ptr}, extras: []string{srv, txt, a, aaaa}},
		{name: "legacy resolver", legacy: true, qs: []dnsmessage.Question{question("_ews._tcp.local.", dnsmessage.TypePTR, false)},
			addrs: []netip.Addr{testV4}, unicast: true,
			answers: []string{"PTR _ews._tcp.local. -> ews1._ews._tcp.local. ttl=10"},
			extras:  []string{"SRV ews1._ews._tcp.local. -> ews1.local.:8080 ttl=10", "TXT ews1._ews._tcp.local. -> txtvers=1,cluster=ews1,role=master ttl=10", "A ews1.local. -> 192.168.7.11 ttl=10"}},
		{name: "tls service", tls: true, qs: []dnsmessage.Question{question("_ews-https._tcp.local.", dnsmessage.TypePTR, false)},
			addrs:   []netip.Addr{testV4},
			answers: []string{"PTR _ews-https._tcp.local. -> ews1._ews-https._tcp.local. ttl=4500"},
			extras:  []string{"SRV ews1._ews-https._tcp.local. -> ews1.local.:8080 ttl=120 flush", "TXT ews1._ews-https._tcp.local. -> txtvers=1,cluster=ews1,role=master ttl=4500 flush", a}},
		{name: "plain service not served with tls", tls: true, qs: []dnsmessage.Question{question("_ews._tcp.local.", dnsmessage.TypePTR, false)}},
		{name: "srv and txt", qs: []dnsmessage.Question{question("ews1._ews._tcp.local.", dnsmessage.TypeSRV, false), question("ews1._ews._tcp.local.", dnsmessage.TypeTXT, false)},
			addrs: both, answers: []string{srv, txt}, extras: []string{a, aaaa}},
		{name: "host A, any case", qs: []dnsmessage.Question{question("EWS1.Local.", dnsmessage.TypeA, false)},
			addrs: both, answers: []string{a}},
		{name: "host ANY", qs: []dnsmessage.Question{question("ews1.local.", dnsmessage.TypeALL, false)},
			addrs: both, answers: []string{a, aaaa}},
		{name: "AAAA with only IPv4", qs: []dnsmessage.Question{question("ews1.local.", dnsmessage.TypeAAAA, false)},
			addrs: []netip.Addr{testV4}},
		{name: "service enumeration", qs: []dnsmessage.Question{question(metaQuery, dnsmessage.TypePTR, false)},
			answers: []string{"PTR _services._dns-sd._udp.local. -> _ews._tcp.local. ttl=4500"}},
		{name: "another service", qs: []dnsmessage.Question{question("_http._tcp.local.", dnsmessage.TypePTR, false)}, addrs: both},
		{name: "another host", qs: []dnsmessage.Question{question("ews2.local.", dnsmessage.TypeA, false)}, addrs: both},
		{name: "our name, a type we have not", qs: []dnsmessage.Question{question("ews1.local.", dnsmessage.TypeMX, false)}, addrs: both},
		{name: "known answer suppressed", qs: []dnsmessage.Question{question("_ews._tcp.local.", dnsmessage.TypePTR, false)},
			known: []dnsmessage.Resource{{Header: dnsmessage.ResourceHeader{Name: mustName("_ews._tcp.local."), Class: dnsmessage.ClassINET, TTL: 4000},
				Body: &dnsmessage.PTRResource{PTR: mustName("ews1._ews._tcp.local.")}}}, addrs: both},
		{name: "known answer about to expire is answered", qs: []dnsmessage.Question{question("_ews._tcp.local.", dnsmessage.TypePTR, false)},
			known: []dnsmessage.Resource{{Header: dnsmessage.ResourceHeader{Name: mustName("_ews._tcp.local."), Class: dnsmessage.ClassINET, TTL: 100},
				Body: &dnsmessage.PTRResource{PTR: mustName("ews1._ews._tcp.local.")}}}, addrs: both, answers: []string{ptr}, extras: []string{srv, txt, a, aaaa}},
		{name: "mixed QU and QM is multicast", qs: []dnsmessage.Question{question("ews1.local.", dnsmessage.TypeA, true), question("ews1.local.", dnsmessage.TypeAAAA, false)},
			addrs: both, answers: []string{a, aaaa}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := testZone(tc.tls)
			pkt := pack(t, dnsmessage.Message{Header: dnsmessage.Header{ID: 77}, Questions: tc.qs, Answers: tc.known})
			called := false
			rep, ok := z.answer(pkt, tc.legacy, func() []netip.Addr { called = true; return tc.addrs })
			if !ok {
				if tc.answers != nil {
					t.Fatalf("no reply; want %v", tc.answers)
				}
				return
			}
			if tc.answers == nil {
				t.Fatalf("replied %v; want silence", rep.msg.answers)
			}
			// The reply goes over the wire: check what a receiver parses.
			var got dnsmessage.Message
			if err := got.Unpack(packR(t, rep.msg)); err != nil {
				t.Fatal(err)
			}
			if !got.Response || !got.Authoritative {
				t.Errorf("header %+v: want a response with AA", got.Header)
			}
			if rep.unicast != tc.unicast {
				t.Errorf("unicast %v, want %v", rep.unicast, tc.unicast)
			}
			if tc.legacy && (got.ID != 77 || len(got.Questions) != len(tc.qs)) {
				t.Errorf("legacy reply: id %d, %d questions; want the query's id and questions", got.ID, len(got.Questions))
			}
			if !tc.legacy && (got.ID != 0 || len(got.Questions) != 0) {
				t.Errorf("mDNS reply: id %d, %d questions; want 0 and none (RFC 6762 §18)", got.ID, len(got.Questions))
			}
			if g := describeRRs(got.Answers); !slices.Equal(g, tc.answers) {
				t.Errorf("answers\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tc.answers, "\n"))
			}
			if g := describeRRs(got.Additionals); !slices.Equal(g, tc.extras) {
				t.Errorf("additionals\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tc.extras, "\n"))
			}
			if (tc.extras != nil || tc.answers[0][0] == 'A') != called {
				t.Errorf("addresses looked up %v; only when an address record goes out", called)
			}
		})
	}
}

// Announcements carry every record; a goodbye carries them at TTL 0.
func TestAnnouncement(t *testing.T) {
	z := testZone(false)
	for _, goodbye := range []bool{false, true} {
		var got dnsmessage.Message
		if err := got.Unpack(packR(t, z.announcement([]netip.Addr{testV4}, goodbye))); err != nil {
			t.Fatal(err)
		}
		if len(got.Answers) != 4 {
			t.Fatalf("goodbye=%v: %v; want PTR SRV TXT A", goodbye, describeRRs(got.Answers))
		}
		for _, rr := range got.Answers {
			if goodbye != (rr.Header.TTL == 0) {
				t.Errorf("goodbye=%v: %s has TTL %d", goodbye, rr.Header.Name, rr.Header.TTL)
			}
		}
	}
}

// A role change reaches the TXT record and asks Run to announce it.
func TestSetRole(t *testing.T) {
	r, err := New(Options{Name: "ews1", Port: 8080, Role: "follower"})
	if err != nil {
		t.Fatal(err)
	}
	r.SetRole("follower")
	if len(r.poke) != 0 {
		t.Fatal("the same role asked for an announcement")
	}
	r.SetRole("master")
	z := r.current()
	if !slices.Contains(z.txt, "role=master") || len(r.poke) != 1 {
		t.Fatalf("txt %v, %d pokes; want role=master and one announcement", z.txt, len(r.poke))
	}
	r.SetRole("follower")
	r.SetRole("master")
	if len(r.poke) != 1 {
		t.Fatal("pokes pile up; want one pending announcement")
	}
}

func TestNewRejects(t *testing.T) {
	for _, o := range []Options{{Port: 80}, {Name: "x"}, {Name: "x", Port: 70000}} {
		if _, err := New(o); err == nil || !strings.HasPrefix(err.Error(), "mdns: ") {
			t.Errorf("%+v: err %v; want an mdns: error", o, err)
		}
	}
}

// Board names may hold dots and underscores; the labels may not.
func TestLabel(t *testing.T) {
	z := newZone(Options{Name: "lab.board_2", Port: 1}, "")
	if z.host != "lab-board-2.local." || z.instance != "lab-board-2._ews._tcp.local." {
		t.Fatalf("host %q instance %q", z.host, z.instance)
	}
}
