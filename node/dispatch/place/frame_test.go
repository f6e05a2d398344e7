package place

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// Every frame decodes to what was encoded, through a stream split
// anywhere; a field over its limit is not encoded.
func TestPlaceFrameRoundTrip(t *testing.T) {
	places := []placeReq{
		{id: 1, method: "GET", path: "/"},
		{id: 7, client: netip.MustParseAddr("10.0.0.9"), method: "POST", path: "/api/devices/relay1/toggle", board: "ews2", sticky: "ews3", exclude: []string{"ews1", "ews4"}},
		{id: 1 << 31, client: netip.MustParseAddr("fe80::1"), method: "HEAD", path: "/" + strings.Repeat("p", maxPlacePath-1)},
	}
	answers := []placeAns{
		{id: 1, placed: true, epoch: 9, board: "ews2", addr: "10.0.0.12:8080"},
		{id: 2, code: placeShed, retry: 1500, class: "browse", reason: "full"},
		{id: 3, code: placeNotMaster},
	}
	var stream []byte
	for i := range places {
		var ok bool
		if stream, ok = appendPlace(stream, &places[i]); !ok {
			t.Fatalf("place %d not encoded", i)
		}
	}
	stream = appendEnd(stream, 42)
	stream = appendEmpty(stream, framePing)
	for i := range answers {
		var ok bool
		if stream, ok = appendAns(stream, &answers[i]); !ok {
			t.Fatalf("answer %d not encoded", i)
		}
	}
	rd := newFrameReader(&oneByte{r: bytes.NewReader(stream)}) // the worst split: a byte at a time
	for i, want := range places {
		typ, p, err := rd.next()
		if err != nil || typ != framePlace {
			t.Fatalf("place %d: type %d err %v", i, typ, err)
		}
		var got placeReq
		if err := decodePlace(p, &got); err != nil {
			t.Fatalf("place %d: %v", i, err)
		}
		if len(want.exclude) == 0 {
			want.exclude = got.exclude[:0]
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("place %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	if typ, p, err := rd.next(); err != nil || typ != frameEnd {
		t.Fatalf("end: %d %v", typ, err)
	} else if id, err := decodeEnd(p); err != nil || id != 42 {
		t.Fatalf("end: %d %v", id, err)
	}
	if typ, p, err := rd.next(); err != nil || typ != framePing || len(p) != 0 {
		t.Fatalf("ping: %d %q %v", typ, p, err)
	}
	for i, want := range answers {
		typ, p, err := rd.next()
		if err != nil {
			t.Fatal(err)
		}
		var got placeAns
		if err := decodeAns(typ, p, &got); err != nil || got != want {
			t.Fatalf("answer %d: got %+v %v, want %+v", i, got, err, want)
		}
	}
	if _, _, err := rd.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last frame: %v, want EOF", err)
	}

	for _, q := range []placeReq{
		{method: "GET", path: "/" + strings.Repeat("p", maxPlacePath)},
		{method: strings.Repeat("M", maxMethod+1), path: "/"},
		{method: "GET", path: "/", board: strings.Repeat("b", maxName+1)},
		{method: "GET", path: "/", exclude: make([]string, maxExclude+1)},
	} {
		if out, ok := appendPlace([]byte("x"), &q); ok || string(out) != "x" {
			t.Errorf("a place over the limits was encoded: %+v", q)
		}
	}
	if _, ok := appendAns(nil, &placeAns{placed: true, board: "b", addr: strings.Repeat("a", maxAddr+1)}); ok {
		t.Error("an answer with an address over the limit was encoded")
	}
}

type oneByte struct{ r io.Reader }

func (o *oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

// Bad frames are refused with errFrame, never half-read.
func TestPlaceFrameBad(t *testing.T) {
	good, _ := appendPlace(nil, &placeReq{id: 3, client: netip.MustParseAddr("10.0.0.1"), method: "GET", path: "/x", exclude: []string{"ews2"}})
	payload := good[3:]
	placed, _ := appendAns(nil, &placeAns{id: 1, placed: true, epoch: 2, board: "ews2", addr: "a:1"})
	cases := []struct {
		name string
		typ  byte // 0: a place payload; else an answer of this type
		p    []byte
	}{
		{"place: empty", 0, nil},
		{"place: cut", 0, payload[:len(payload)-1]},
		{"place: trailing byte", 0, append(append([]byte{}, payload...), 0)},
		{"place: address family 5", 0, []byte{0, 0, 0, 3, 5, 1, 2, 3, 4, 5}},
		{"place: no method", 0, []byte{0, 0, 0, 1, 0, 0, 0, 1, '/', 0, 0, 0}},
		{"place: relative path", 0, []byte{0, 0, 0, 1, 0, 3, 'G', 'E', 'T', 0, 1, 'x', 0, 0, 0}},
		{"place: too many excluded", 0, []byte{0, 0, 0, 1, 0, 3, 'G', 'E', 'T', 0, 1, '/', 0, 0, maxExclude + 1}},
		{"place: method over the limit", 0, append([]byte{0, 0, 0, 1, 0, maxMethod + 1}, make([]byte, maxMethod+1)...)},
		{"placed: cut", framePlaced, placed[3 : len(placed)-1]},
		{"placed: no board", framePlaced, []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 1, 'a'}},
		{"shed: code 9", frameShed, []byte{0, 0, 0, 1, 9, 0, 0, 0, 0, 0, 0}},
		{"answer: type 7", 7, []byte{0, 0, 0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.typ == 0 {
				err = decodePlace(c.p, &placeReq{})
			} else {
				err = decodeAns(c.typ, c.p, &placeAns{})
			}
			if !errors.Is(err, errFrame) {
				t.Fatalf("err %v, want errFrame", err)
			}
		})
	}
	for _, n := range []uint16{0, maxFrame + 1} {
		rd := newFrameReader(bytes.NewReader([]byte{byte(n >> 8), byte(n), 1}))
		if _, _, err := rd.next(); !errors.Is(err, errFrame) {
			t.Errorf("frame length %d: %v, want errFrame", n, err)
		}
	}
	if _, err := decodeEnd([]byte{1, 2, 3}); !errors.Is(err, errFrame) {
		t.Errorf("short end: %v", err)
	}
	ran, _ := appendRan(nil, &ranReq{n: 2, method: "GET", path: "/x"})
	for name, p := range map[string][]byte{
		"ran: cut":           ran[3 : len(ran)-1],
		"ran: trailing byte": append(append([]byte{}, ran[3:]...), 0),
		"ran: count 0":       {0, 0, 0, 0, 3, 'G', 'E', 'T', 0, 1, '/'},
		"ran: no method":     {0, 0, 0, 1, 0, 0, 1, '/'},
		"ran: relative path": {0, 0, 0, 1, 3, 'G', 'E', 'T', 0, 1, 'x'},
	} {
		if err := decodeRan(p, &ranReq{}); !errors.Is(err, errFrame) {
			t.Errorf("%s: %v, want errFrame", name, err)
		}
	}
}

// A ran frame decodes to what was encoded; one over the limits or with
// nothing to count is not encoded.
func TestPlaceFrameRan(t *testing.T) {
	for _, want := range []ranReq{
		{n: 1, method: "GET", path: "/"},
		{n: 1<<32 - 1, method: "POST", path: "/" + strings.Repeat("p", maxPlacePath-1)},
	} {
		b, ok := appendRan([]byte("x"), &want)
		if !ok {
			t.Fatalf("%+v not encoded", want)
		}
		typ, p, err := newFrameReader(bytes.NewReader(b[1:])).next()
		var got ranReq
		if err != nil || typ != frameRan || decodeRan(p, &got) != nil || got != want {
			t.Fatalf("got %+v (type %d, %v), want %+v", got, typ, err, want)
		}
	}
	for _, r := range []ranReq{
		{n: 0, method: "GET", path: "/"},
		{n: 1, method: strings.Repeat("M", maxMethod+1), path: "/"},
		{n: 1, method: "GET", path: "/" + strings.Repeat("p", maxPlacePath)},
	} {
		if out, ok := appendRan([]byte("x"), &r); ok || string(out) != "x" {
			t.Errorf("a ran frame over the limits was encoded: %+v", r)
		}
	}
}

// FuzzPlaceFrame feeds arbitrary bytes to the frame reader and decoders:
// they refuse or accept without panicking, and what they accept encodes
// back to the same bytes.
func FuzzPlaceFrame(f *testing.F) {
	good, _ := appendPlace(nil, &placeReq{id: 3, client: netip.MustParseAddr("10.0.0.1"), method: "GET", path: "/x", board: "ews2", exclude: []string{"ews3"}})
	ans, _ := appendAns(nil, &placeAns{id: 1, placed: true, epoch: 2, board: "ews2", addr: "a:1"})
	shed, _ := appendAns(nil, &placeAns{id: 2, retry: 9, class: "c", reason: "full"})
	f.Add(good)
	f.Add(ans)
	f.Add(shed)
	f.Add(appendEnd(nil, 5))
	ran, _ := appendRan(nil, &ranReq{n: 3, method: "GET", path: "/x"})
	f.Add(ran)
	f.Add([]byte{0, 0})
	f.Add([]byte{0xff, 0xff, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		rd := newFrameReader(bytes.NewReader(b))
		for range 64 {
			typ, p, err := rd.next()
			if err != nil {
				return
			}
			var q placeReq
			if decodePlace(p, &q) == nil && typ == framePlace {
				if out, ok := appendPlace(nil, &q); !ok || !bytes.Equal(out[3:], p) {
					// an IPv4-mapped IPv6 client is sent as IPv4: the only re-encoding allowed
					if !q.client.Is4In6() {
						t.Fatalf("place %+v re-encodes to %x, read %x", q, out, p)
					}
				}
			}
			var r ranReq
			if decodeRan(p, &r) == nil && typ == frameRan {
				if out, ok := appendRan(nil, &r); !ok || !bytes.Equal(out[3:], p) {
					t.Fatalf("ran %+v re-encodes to %x, read %x", r, out, p)
				}
			}
			var a placeAns
			_ = decodeAns(typ, p, &a)
			_, _ = decodeEnd(p)
		}
	})
}
