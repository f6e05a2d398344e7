package mdns

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// header builds a 12-byte DNS header with the given counts.
func header(flags uint16, qd, an, ns, ar uint16) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint16(b[2:], flags)
	binary.BigEndian.PutUint16(b[4:], qd)
	binary.BigEndian.PutUint16(b[6:], an)
	binary.BigEndian.PutUint16(b[8:], ns)
	binary.BigEndian.PutUint16(b[10:], ar)
	return b
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// ptrQuestion is "_ews._tcp.local. PTR IN" in wire form.
var ptrQuestion = []byte("\x04_ews\x04_tcp\x05local\x00\x00\x0c\x00\x01")

// Whatever arrives on 5353 from the LAN, the responder answers only good
// queries for its own names, and never panics.
func TestMalformedIgnored(t *testing.T) {
	z := testZone(false)
	for _, tc := range []struct {
		name string
		pkt  []byte
	}{
		{"empty", nil},
		{"one byte", []byte{0}},
		{"short header", header(0, 1, 0, 0, 0)[:11]},
		{"question count, no question", header(0, 1, 0, 0, 0)},
		{"truncated name", cat(header(0, 1, 0, 0, 0), []byte("\x04_ews\x04_tc"))},
		{"name without type", cat(header(0, 1, 0, 0, 0), []byte("\x04_ews\x04_tcp\x05local\x00"))},
		{"label longer than the packet", cat(header(0, 1, 0, 0, 0), []byte("\x3f_ews"))},
		{"pointer loop", cat(header(0, 1, 0, 0, 0), []byte{0xc0, 12, 0, 12, 0, 1})},
		{"pointer past the end", cat(header(0, 1, 0, 0, 0), []byte{0xc0, 0xff, 0, 12, 0, 1})},
		{"reserved label type", cat(header(0, 1, 0, 0, 0), []byte{0x80, 0, 0, 12, 0, 1})},
		{"good question, truncated answer", cat(header(0, 1, 1, 0, 0), ptrQuestion, []byte{0xc0, 12, 0, 12})},
		{"good question, answer rdlength past the end", cat(header(0, 1, 1, 0, 0), ptrQuestion, []byte{0xc0, 12, 0, 12, 0, 1, 0, 0, 0, 9, 0xff, 0xff})},
		{"a response (another responder's answer)", cat(header(1<<15, 1, 0, 0, 0), ptrQuestion)},
		{"an update, not a query", cat(header(5<<11, 1, 0, 0, 0), ptrQuestion)},
		{"query for no question", header(0, 0, 0, 0, 0)},
		{"two questions counted, one and garbage present", cat(header(0, 2, 0, 0, 0), ptrQuestion, []byte{1, 2, 3})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if rep, ok := z.answer(tc.pkt, false, func() []netip.Addr { return []netip.Addr{testV4} }); ok {
				t.Fatalf("answered %v", rep.msg.answers)
			}
		})
	}
	// The good packet the cases above spoil is answered: they test what they say.
	if _, ok := z.answer(cat(header(0, 1, 0, 0, 0), ptrQuestion), false, func() []netip.Addr { return nil }); !ok {
		t.Fatal("the well-formed query is not answered")
	}
}

// FuzzAnswer feeds the packet handler anything: it must not panic, and a
// reply it makes must pack.
func FuzzAnswer(f *testing.F) {
	f.Add(cat(header(0, 1, 0, 0, 0), ptrQuestion))
	f.Add(query(f, question("ews1.local.", dnsmessage.TypeALL, true), question("ews1._ews._tcp.local.", dnsmessage.TypeALL, false)))
	f.Add(cat(header(0, 1, 0, 0, 0), []byte{0xc0, 12, 0, 12, 0, 1}))
	f.Add([]byte{})
	z := testZone(false)
	addrs := func() []netip.Addr { return []netip.Addr{testV4, testV6} }
	f.Fuzz(func(t *testing.T, pkt []byte) {
		for _, legacy := range []bool{false, true} {
			rep, ok := z.answer(pkt, legacy, addrs)
			if !ok {
				continue
			}
			if _, err := rep.msg.pack(); err != nil {
				t.Fatalf("reply does not pack: %v", err)
			}
		}
		var c collector
		c.add(pkt, testV4)
		_ = c.boards()
	})
}
