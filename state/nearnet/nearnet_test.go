package nearnet

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestPrefixOf(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"10.1.2.3", "10.1.2.0/24"},
		{"::ffff:10.1.2.3", "10.1.2.0/24"}, // IPv4-mapped is IPv4
		{"2001:db8:1:2::5", "2001:db8:1::/48"},
		{"127.0.0.1", "127.0.0.0/24"},
	} {
		got, ok := PrefixOf(addr(c.in))
		if !ok || got.String() != c.want {
			t.Errorf("PrefixOf(%s) = %v, %v; want %s", c.in, got, ok, c.want)
		}
	}
	if _, ok := PrefixOf(netip.Addr{}); ok {
		t.Error("PrefixOf(invalid) ok")
	}
}

// TestMeterAggregates: samples of one network are smoothed (gain 1/4),
// networks are kept apart per /24 and /48, bad samples refused, and Best
// returns the nearest first.
func TestMeterAggregates(t *testing.T) {
	type obs struct {
		client string
		rtt    time.Duration
		ok     bool
	}
	for _, c := range []struct {
		name string
		obs  []obs
		n    int
		want []Net
	}{
		{"one sample", []obs{{"10.0.1.5", ms(5), true}}, 8, []Net{{pfx("10.0.1.0/24"), ms(5)}}},
		{"smoothed per network", []obs{{"10.0.1.5", ms(4), true}, {"10.0.1.77", ms(8), true}}, 8,
			[]Net{{pfx("10.0.1.0/24"), ms(5)}}},
		{"nearest first", []obs{{"10.0.2.1", ms(80), true}, {"10.0.1.1", ms(5), true}, {"2001:db8:7::1", ms(20), true}}, 8,
			[]Net{{pfx("10.0.1.0/24"), ms(5)}, {pfx("2001:db8:7::/48"), ms(20)}, {pfx("10.0.2.0/24"), ms(80)}}},
		{"n bounds", []obs{{"10.0.2.1", ms(80), true}, {"10.0.1.1", ms(5), true}}, 1, []Net{{pfx("10.0.1.0/24"), ms(5)}}},
		{"bad samples refused", []obs{{"10.0.1.1", 0, false}, {"10.0.1.1", -ms(3), false}, {"10.0.1.1", MaxRTT + 1, false}, {"", ms(3), false}}, 8, []Net{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m Meter
			for _, o := range c.obs {
				var a netip.Addr
				if o.client != "" {
					a = addr(o.client)
				}
				if ok := m.Observe(a, o.rtt, t0); ok != o.ok {
					t.Errorf("Observe(%q, %v) = %v, want %v", o.client, o.rtt, ok, o.ok)
				}
			}
			if got := m.Best(c.n, t0); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Best = %v, want %v", got, c.want)
			}
		})
	}
}

// TestMeterBounds: a network unheard from for Expire is forgotten, and past
// MaxTracked the one heard from longest ago makes room.
func TestMeterBounds(t *testing.T) {
	var m Meter
	m.Observe(addr("10.9.0.1"), ms(1), t0)
	if got := m.Best(8, t0.Add(Expire+time.Second)); len(got) != 0 {
		t.Errorf("after Expire: %v, want none", got)
	}
	for i := range MaxTracked {
		m.Observe(netip.AddrFrom4([4]byte{10, byte(i / 256), byte(i), 1}), ms(float64(2+i)), t0.Add(time.Duration(i)*time.Second))
	}
	m.Observe(addr("10.200.0.1"), ms(100), t0.Add(5*time.Minute)) // past the bound: 10.0.0.0/24 (oldest) goes
	got := m.Best(MaxTracked+1, t0.Add(5*time.Minute))
	if len(got) != MaxTracked {
		t.Fatalf("%d networks held, want %d", len(got), MaxTracked)
	}
	for _, n := range got {
		if n.Prefix == pfx("10.0.0.0/24") {
			t.Error("the oldest network is still held past MaxTracked")
		}
	}
}

// TestClean: what a receiver keeps of a report, with the bad inputs the
// issue names: too many networks, malformed prefixes, negative and absurd
// round trips.
func TestClean(t *testing.T) {
	many := make([]Net, MaxNets+3)
	for i := range many {
		many[i] = Net{netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, byte(i), 0}), 24), ms(float64(20 - i))}
	}
	for _, c := range []struct {
		name     string
		in       []Net
		kept     int
		first    netip.Prefix
		problems []string
	}{
		{"good", []Net{{pfx("10.0.1.0/24"), ms(5)}, {pfx("2001:db8:1::/48"), ms(3)}}, 2, pfx("2001:db8:1::/48"), nil},
		{"too many: nearest kept", many, MaxNets, many[len(many)-1].Prefix, []string{"over the limit"}},
		{"invalid prefix", []Net{{netip.Prefix{}, ms(5)}}, 0, netip.Prefix{}, []string{"invalid prefix"}},
		{"host bits", []Net{{netip.PrefixFrom(addr("10.0.1.7"), 24), ms(5)}}, 0, netip.Prefix{}, []string{"host bits"}},
		{"wrong size", []Net{{pfx("10.0.0.0/16"), ms(5)}, {pfx("2001:db8::/32"), ms(5)}}, 0, netip.Prefix{}, []string{"not a /24", "not a /24"}},
		{"negative", []Net{{pfx("10.0.1.0/24"), -ms(5)}}, 0, netip.Prefix{}, []string{"not positive"}},
		{"absurd", []Net{{pfx("10.0.1.0/24"), time.Hour}}, 0, netip.Prefix{}, []string{"over 30s"}},
		{"twice: the shorter", []Net{{pfx("10.0.1.0/24"), ms(9)}, {pfx("10.0.1.0/24"), ms(4)}}, 1, pfx("10.0.1.0/24"), []string{"twice"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			kept, problems := Clean(c.in)
			if len(kept) != c.kept {
				t.Fatalf("kept %v, want %d", kept, c.kept)
			}
			if c.kept > 0 && kept[0].Prefix != c.first {
				t.Errorf("first kept %v, want %v", kept[0].Prefix, c.first)
			}
			if len(problems) != len(c.problems) {
				t.Fatalf("problems %q, want %d like %q", problems, len(c.problems), c.problems)
			}
			for i, p := range c.problems {
				if !strings.Contains(problems[i], p) || !strings.HasPrefix(problems[i], "nearnet: ") {
					t.Errorf("problem %q, want %q", problems[i], p)
				}
			}
		})
	}
	if kept, _ := Clean([]Net{{pfx("10.0.1.0/24"), ms(9)}, {pfx("10.0.1.0/24"), ms(4)}}); kept[0].RTT != ms(4) {
		t.Errorf("a network twice kept %v, want the shorter 4ms", kept[0].RTT)
	}
}

func TestWireRoundTrip(t *testing.T) {
	for _, nets := range [][]Net{
		nil,
		{{pfx("10.0.1.0/24"), ms(5)}},
		{{pfx("10.0.1.0/24"), time.Microsecond}, {pfx("2001:db8:1::/48"), ms(80)}, {pfx("192.168.7.0/24"), MaxRTT}},
	} {
		b := Encode(nets)
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(Encode(%v)): %v", nets, err)
		}
		if len(got) != len(nets) || (len(nets) > 0 && !reflect.DeepEqual(got, nets)) {
			t.Errorf("round trip %v -> % x -> %v", nets, b, got)
		}
	}
	full := make([]Net, 2*MaxNets)
	for i := range full {
		full[i] = Net{netip.PrefixFrom(netip.AddrFrom16([16]byte{0x20, 0x01, 0xd, 0xb8, 0xff, byte(i)}), 48), MaxRTT}
	}
	b := Encode(full)
	if n := len(b) + 2; n > 200 {
		t.Errorf("the largest report is %d bytes of node meta, want a small part of its 512", n)
	}
	if got, _ := Decode(b); len(got) != MaxNets {
		t.Errorf("Encode wrote %d networks, want at most %d", len(got), MaxNets)
	}
}

// TestDecodeBad: a report that is not whole entries is refused whole with
// an error; a later build's tail is ignored; a prefix longer than its
// address and an absurd round trip decode to entries Clean refuses.
func TestDecodeBad(t *testing.T) {
	good := Encode([]Net{{pfx("10.0.1.0/24"), ms(5)}})
	for _, c := range []struct {
		name string
		in   []byte
		err  bool
	}{
		{"truncated", good[:len(good)-1], true},
		{"a byte too many", append(append([]byte(nil), good...), 0), true},
		{"later build", []byte{'Z', 1, 2, 3}, false},
		{"tag alone: none", []byte{'N'}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			nets, err := Decode(c.in)
			if (err != nil) != c.err || nets != nil {
				t.Errorf("Decode = %v, %v; want error %v and nothing", nets, err, c.err)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "nearnet: ") {
				t.Errorf("error %q does not name the package", err)
			}
		})
	}
	long := append([]byte(nil), good...)
	long[1+16] = 40 // a /40 of an IPv4 address
	absurd := append([]byte(nil), good...)
	copy(absurd[1+17:], []byte{0xff, 0xff, 0xff, 0xff}) // 4295 s
	for _, b := range [][]byte{long, absurd} {
		nets, err := Decode(b)
		if err != nil || len(nets) != 1 {
			t.Fatalf("Decode(% x) = %v, %v", b, nets, err)
		}
		if kept, problems := Clean(nets); len(kept) != 0 || len(problems) != 1 {
			t.Errorf("Clean(%v) kept %v, problems %q", nets, kept, problems)
		}
	}
}

// TestTable: the master's dynamic table from three boards' reports: a
// client's row is the boards that measured its network, nearest first;
// a bad report is cleaned and its problems returned, an empty one forgets
// the board.
func TestTable(t *testing.T) {
	var tb Table
	tb.Set("ews1", []Net{{pfx("10.0.1.0/24"), ms(5)}, {pfx("10.0.3.0/24"), ms(80)}})
	tb.Set("ews2", []Net{{pfx("10.0.1.0/24"), ms(80)}, {pfx("10.0.2.0/24"), ms(5)}})
	problems := tb.Set("ews3", []Net{{pfx("10.0.1.0/24"), ms(80)}, {pfx("10.0.3.0/24"), ms(5)}, {pfx("10.0.2.0/24"), -ms(1)}})
	if len(problems) != 1 || !strings.Contains(problems[0], "10.0.2.0/24: round trip not positive") {
		t.Errorf("problems %q, want the negative entry named", problems)
	}
	for _, c := range []struct {
		client string
		want   []Ranked
	}{
		{"10.0.1.9", []Ranked{{"ews1", ms(5)}, {"ews2", ms(80)}, {"ews3", ms(80)}}},
		{"10.0.2.9", []Ranked{{"ews2", ms(5)}}}, // ews3's negative entry was left out
		{"10.0.3.200", []Ranked{{"ews3", ms(5)}, {"ews1", ms(80)}}},
		{"10.0.4.1", nil},
	} {
		if got := tb.Near(addr(c.client), 3); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Near(%s) = %v, want %v", c.client, got, c.want)
		}
	}
	if d, ok := tb.RTT("ews2", addr("10.0.2.1")); !ok || d != ms(5) {
		t.Errorf("RTT(ews2, 10.0.2.1) = %v, %v", d, ok)
	}
	if _, ok := tb.RTT("ews9", addr("10.0.2.1")); ok {
		t.Error("RTT of an unknown board ok")
	}
	tb.Set("ews1", nil)
	if got := fmt.Sprint(tb.Near(addr("10.0.1.9"), 3)); got != "[{ews2 80ms} {ews3 80ms}]" {
		t.Errorf("after ews1 forgot: %s", got)
	}
}
