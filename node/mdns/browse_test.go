package mdns

import (
	"net/netip"
	"reflect"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// What the browser makes of the answers it hears: our boards with their
// TXT, nothing of other services or of queries, no board said goodbye.
func TestCollector(t *testing.T) {
	src := netip.MustParseAddr("192.168.7.99")
	ews1 := testZone(false)
	ews2 := newZone(Options{Name: "EWS2", Port: 8443, TLS: true, Cluster: "ews1"}, "follower")
	ews3 := newZone(Options{Name: "ews3", Port: 8080, Cluster: "ews1"}, "follower")
	printer := dnsmessage.Message{Header: dnsmessage.Header{Response: true}, Answers: []dnsmessage.Resource{
		{Header: dnsmessage.ResourceHeader{Name: mustName("_ipp._tcp.local."), Class: dnsmessage.ClassINET, TTL: 4500}, Body: &dnsmessage.PTRResource{PTR: mustName("printer._ipp._tcp.local.")}},
		{Header: dnsmessage.ResourceHeader{Name: mustName("printer._ipp._tcp.local."), Class: dnsmessage.ClassINET, TTL: 120}, Body: &dnsmessage.SRVResource{Target: mustName("printer.local."), Port: 631}},
		// A PTR of our type to an instance of another type: not ours.
		{Header: dnsmessage.ResourceHeader{Name: mustName("_ews._tcp.local."), Class: dnsmessage.ClassINET, TTL: 4500}, Body: &dnsmessage.PTRResource{PTR: mustName("x._ipp._tcp.local.")}},
	}}
	// ews2 answered a legacy query with no address record: its source stands in.
	rep, ok := ews2.answer(query(t, question("_ews-https._tcp.local.", dnsmessage.TypePTR, false)), true, func() []netip.Addr { return nil })
	if !ok {
		t.Fatal("ews2 did not answer")
	}
	var c collector
	c.add(packR(t, ews1.announcement([]netip.Addr{testV6, testV4}, false)), testV4)
	c.add(packR(t, rep.msg), src)
	c.add(pack(t, printer), src)
	c.add(query(t, question("_ews._tcp.local.", dnsmessage.TypePTR, false)), src)
	c.add([]byte{1, 2, 3}, src)
	c.add(packR(t, ews3.announcement([]netip.Addr{testV4}, false)), testV4)
	c.add(packR(t, ews3.announcement([]netip.Addr{testV4}, true)), testV4)
	want := []Board{
		{Name: "ews1", Host: "ews1.local.", Port: 8080, Addrs: []netip.Addr{testV4, testV6}, Cluster: "ews1", Role: "master"},
		{Name: "EWS2", Host: "EWS2.local.", Port: 8443, TLS: true, Addrs: []netip.Addr{src}, Cluster: "ews1", Role: "follower"},
	}
	got := c.boards()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("boards\n%+v\nwant\n%+v", got, want)
	}
	if u := got[1].URL(); u != "https://192.168.7.99:8443" {
		t.Errorf("URL %q", u)
	}
	if u := (Board{Port: 1}).URL(); u != "" {
		t.Errorf("URL without an address: %q", u)
	}
}

// The browse query asks for both service types, and a zone answers it.
func TestBrowseQuery(t *testing.T) {
	q, err := browseQuery(9)
	if err != nil {
		t.Fatal(err)
	}
	for _, tls := range []bool{false, true} {
		z := testZone(tls)
		if _, ok := z.answer(q, true, func() []netip.Addr { return []netip.Addr{testV4} }); !ok {
			t.Errorf("tls=%v: the browse query is not answered", tls)
		}
	}
}
