package state

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
	"pgregory.net/rapid"
)

// The reference codec: vmihailenco/msgpack v5 with compact ints and as_array structs, the
// encoding the protocol was defined with and the one every ews build before the hand-written codec sent.
// The board no longer links it (state/wire.go writes the same bytes by hand); the tests keep it
// to prove the two equal. Each ref type is its message's fields in order at one version.

type refRow struct {
	_msgpack                  struct{} `msgpack:",as_array"`
	Rank                      uint16
	Name                      string
	Linknum, Capacity, Weight uint32
	Runstate                  uint8
	CPU, Mem, Net, Disk       uint16
	AgeMs                     uint32
}

type refStat struct {
	_msgpack   struct{} `msgpack:",as_array"`
	Name       string
	Depth      uint32
	Dispatched uint64
}

type refRows []refRow
type refStats []refStat
type refStrings []string

func (rs *refRows) DecodeMsgpack(d *msgpack.Decoder) (err error) {
	*rs, err = refBounded[refRow](d, MaxBoards, "row")
	return err
}

func (cs *refStats) DecodeMsgpack(d *msgpack.Decoder) (err error) {
	*cs, err = refBounded[refStat](d, MaxClasses, "class stat")
	return err
}

func (ss *refStrings) DecodeMsgpack(d *msgpack.Decoder) (err error) {
	*ss, err = refBounded[string](d, MaxBoards, "string")
	return err
}

func refBounded[T any](d *msgpack.Decoder, limit int, what string) ([]T, error) {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%d %ss, over the limit of %d", n, what, limit)
	}
	if n < 0 {
		return nil, nil
	}
	out := make([]T, n)
	for i := range out {
		if err := d.Decode(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type refTableV1 struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Epoch     uint64
	Master    string
	Version   uint64
	PeersHash uint32
	Rows      refRows
}

type refTable struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Epoch     uint64
	Master    string
	Version   uint64
	PeersHash uint32
	Rows      refRows
	Stats     refStats
}

type refReportV2 struct {
	_msgpack            struct{} `msgpack:",as_array"`
	Name                string
	Epoch               uint64
	HTTP                string
	InFlight            uint32
	Completed           uint64
	Capacity, Weight    uint32
	Runstate            uint8
	CPU, Mem, Net, Disk uint16
	PeersHash           uint32
}

type refReport struct {
	_msgpack                       struct{} `msgpack:",as_array"`
	Name                           string
	Epoch                          uint64
	HTTP                           string
	InFlight                       uint32
	Completed                      uint64
	Capacity, Weight               uint32
	Runstate                       uint8
	CPU, Mem, Net, Disk            uint16
	PeersHash                      uint32
	Creds                          uint64
	DiskUsed                       uint16
	NetPPS, DiskOps, CPUMHz, MemMB uint32
	Simulated                      bool
}

type refStepDownV1 struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Epoch    uint64
}

type refStepDown struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Name      string
	Epoch     uint64
	PeersHash uint32
}

type refPeerList struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Peers    refStrings
}

type refDigest struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Epoch     uint64
	Master    string
	Version   uint64
	Hash      uint32
	PeersHash uint32
}

type refTableReq struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Name      string
	Epoch     uint64
	Version   uint64
	PeersHash uint32
}

type refIntro struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Boot     uint64
	Pub      []byte
	Cert     []byte
	Sig      []byte
	Want     bool
}

// refBody is a new ref value for a message of type t at version v.
func refBody(t MsgType, v uint8) any {
	switch t {
	case tableMsgType:
		if v < 2 {
			return new(refTableV1)
		}
		return new(refTable)
	case reportMsgType:
		if v < 3 {
			return new(refReportV2)
		}
		return new(refReport)
	case stepDownMsgType:
		if v < 3 {
			return new(refStepDownV1)
		}
		return new(refStepDown)
	case peerListMsgType:
		return new(refPeerList)
	case digestMsgType:
		return new(refDigest)
	case tableReqMsgType:
		return new(refTableReq)
	case introMsgType:
		return new(refIntro)
	}
	return nil
}

// copyFields copies the fields dst and src share by name, converting numbers and recursing into
// slices of structs: a message into its ref type and back.
func copyFields(dst, src reflect.Value) {
	switch dst.Kind() {
	case reflect.Struct:
		for i := 0; i < dst.NumField(); i++ {
			f := dst.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if s := src.FieldByName(f.Name); s.IsValid() {
				copyFields(dst.Field(i), s)
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
		for i := 0; i < src.Len(); i++ {
			copyFields(dst.Index(i), src.Index(i))
		}
	default:
		dst.Set(src.Convert(dst.Type()))
	}
}

// refEncode is EncodeVersion with the reference codec (without the stats fallback).
func refEncode(m Message, v uint8) []byte {
	body := refBody(m.Type(), v)
	copyFields(reflect.ValueOf(body).Elem(), reflect.ValueOf(m).Elem())
	var buf bytes.Buffer
	buf.WriteByte(byte(m.Type()))
	buf.WriteByte(v)
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(body); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// refDecode is decode with the reference codec: header checks, body, trailing bytes, validate.
func refDecode(b []byte) (Message, error) {
	if len(b) < headerLen+1 || len(b) > MaxMessage {
		return nil, fmt.Errorf("length")
	}
	t, v := MsgType(b[0]), b[1]
	if v < ProtocolVersionMin || v > ProtocolVersionMax || v < minVersion(t) {
		return nil, ErrVersion
	}
	body := refBody(t, v)
	if body == nil {
		return nil, fmt.Errorf("type")
	}
	r := bytes.NewReader(b[headerLen:])
	if err := msgpack.NewDecoder(r).Decode(body); err != nil {
		return nil, err
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("trailing")
	}
	m := map[MsgType]Message{tableMsgType: new(TableMsg), reportMsgType: new(ReportMsg), stepDownMsgType: new(StepDownMsg),
		peerListMsgType: new(PeerListMsg), digestMsgType: new(DigestMsg), tableReqMsgType: new(TableReqMsg), introMsgType: new(IntroMsg)}[t]
	copyFields(reflect.ValueOf(m).Elem(), reflect.ValueOf(body).Elem())
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Generators: numbers at the encoding boundaries, strings across the fixstr/str8/str16 limits.
func genU64(rt *rapid.T, label string) uint64 {
	return rapid.OneOf(rapid.Uint64Range(0, 300), rapid.SampledFrom([]uint64{127, 128, 255, 256, math.MaxUint16, math.MaxUint16 + 1,
		math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64}), rapid.Uint64()).Draw(rt, label)
}

func genStr(rt *rapid.T, label string) string {
	n := rapid.SampledFrom([]int{0, 1, 4, 31, 32, 63, 255, 256, 300}).Draw(rt, label+"-len")
	return string(bytes.Repeat([]byte{rapid.ByteRange('a', 'z').Draw(rt, label)}, n))
}

// genBytes is nil or bytes across the bin8/bin16 limit.
func genBytes(rt *rapid.T, label string) []byte {
	if rapid.Bool().Draw(rt, label+"-nil") {
		return nil
	}
	return bytes.Repeat([]byte{rapid.Byte().Draw(rt, label)}, rapid.SampledFrom([]int{0, 1, 32, 64, 255, 256, 700}).Draw(rt, label+"-len"))
}

// decodeAt is decode of a message whose array follows the header (a sealed message's sequence
// number and tag are the seal's business, ident_test.go).
func decodeAt(b []byte) (Message, error) {
	if len(b) < headerLen+1 {
		return nil, fmt.Errorf("state: message of %d bytes is too short", len(b))
	}
	return decode(b, b[headerLen:])
}

// genMessage is any message with any field values (valid or not: the encoder writes them all).
func genMessage(rt *rapid.T) Message {
	u32 := func(l string) uint32 { return uint32(genU64(rt, l)) }
	u16 := func(l string) uint16 { return uint16(genU64(rt, l)) }
	switch rapid.IntRange(0, 6).Draw(rt, "type") {
	case 0:
		m := &TableMsg{Epoch: genU64(rt, "epoch"), Master: genStr(rt, "master"), Version: genU64(rt, "version"), PeersHash: u32("ph")}
		if rapid.Bool().Draw(rt, "rows") {
			m.Rows = make(Rows, rapid.IntRange(0, 20).Draw(rt, "nrows"))
			for i := range m.Rows {
				m.Rows[i] = Row{Rank: uint16(genU64(rt, "rank")), Name: genStr(rt, "name"), Linknum: u32("ln"), Capacity: u32("cap"),
					Weight: u32("w"), Runstate: Runstate(genU64(rt, "rs")), CPU: u16("cpu"), Mem: u16("mem"), Net: u16("net"),
					Disk: u16("disk"), AgeMs: u32("age")}
			}
		}
		if rapid.Bool().Draw(rt, "stats") {
			m.Stats = make(ClassStats, rapid.IntRange(0, 3).Draw(rt, "nstats"))
			for i := range m.Stats {
				m.Stats[i] = ClassStat{Name: genStr(rt, "class"), Depth: u32("depth"), Dispatched: genU64(rt, "disp")}
			}
		}
		return m
	case 1:
		return &ReportMsg{Name: genStr(rt, "name"), Epoch: genU64(rt, "epoch"), HTTP: genStr(rt, "http"), InFlight: u32("if"),
			Completed: genU64(rt, "done"), Capacity: u32("cap"), Weight: u32("w"), Runstate: Runstate(genU64(rt, "rs")),
			CPU: u16("cpu"), Mem: u16("mem"), Net: u16("net"), Disk: u16("disk"), PeersHash: u32("ph"), Creds: genU64(rt, "creds"),
			DiskUsed: u16("du"), NetPPS: u32("pps"), DiskOps: u32("ops"), CPUMHz: u32("mhz"), MemMB: u32("mb"),
			Simulated: rapid.Bool().Draw(rt, "sim")}
	case 2:
		return &StepDownMsg{Name: genStr(rt, "name"), Epoch: genU64(rt, "epoch"), PeersHash: u32("ph")}
	case 3:
		m := &PeerListMsg{Name: genStr(rt, "name")}
		if rapid.Bool().Draw(rt, "peers") {
			m.Peers = make(Strings, rapid.IntRange(0, 20).Draw(rt, "npeers"))
			for i := range m.Peers {
				m.Peers[i] = genStr(rt, "peer")
			}
		}
		return m
	case 4:
		return &DigestMsg{Epoch: genU64(rt, "epoch"), Master: genStr(rt, "master"), Version: genU64(rt, "version"), Hash: u32("h"), PeersHash: u32("ph")}
	case 5:
		return &IntroMsg{Name: genStr(rt, "name"), Boot: genU64(rt, "boot"), Pub: genBytes(rt, "pub"), Cert: genBytes(rt, "cert"),
			Sig: genBytes(rt, "sig"), Want: rapid.Bool().Draw(rt, "want")}
	default:
		return &TableReqMsg{Name: genStr(rt, "name"), Epoch: genU64(rt, "epoch"), Version: genU64(rt, "version"), PeersHash: u32("ph")}
	}
}

// TestWireMatchesMsgpack: for any message at any version it exists in, the hand-written encoder
// writes the reference codec's bytes, and both decoders read them back the same.
func TestWireMatchesMsgpack(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := genMessage(rt)
		v := rapid.Uint8Range(minVersion(m.Type()), ProtocolVersionMax).Draw(rt, "version")
		e := enc{b: []byte{byte(m.Type()), v}}
		encodeBody(&e, m, v)
		want := refEncode(m, v)
		if !bytes.Equal(e.b, want) {
			rt.Fatalf("version %d %T:\n got % x\nwant % x", v, m, e.b, want)
		}
		got, err := decodeAt(e.b)
		ref, refErr := refDecode(e.b)
		if (err == nil) != (refErr == nil) || !reflect.DeepEqual(got, ref) {
			rt.Fatalf("decode: %+v, %v\nreference: %+v, %v", got, err, ref, refErr)
		}
	})
}

// TestDecodeMatchesMsgpack: on damaged messages (bytes changed, cut, inserted), whatever the
// hand-written decoder accepts the reference accepts with the same value; and what the reference
// accepts the decoder accepts too, except a struct sent as a map (refused: no ews build sends one).
func TestDecodeMatchesMsgpack(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := genMessage(rt)
		v := rapid.Uint8Range(minVersion(m.Type()), ProtocolVersionMax).Draw(rt, "version")
		b := refEncode(m, v)
		for range rapid.IntRange(1, 4).Draw(rt, "edits") {
			i := rapid.IntRange(0, len(b)-1).Draw(rt, "at")
			c := rapid.OneOf(rapid.Byte(), rapid.SampledFrom([]byte{mpNil, mpFalse, mpTrue, 0x90, 0x80, 0xa0, mpUint8, mpInt8,
				mpUint64, mpInt64, mpStr8, mpBin8, mpArray16, mpMap16, 0xff, 0x7f})).Draw(rt, "byte")
			switch rapid.IntRange(0, 2).Draw(rt, "edit") {
			case 0:
				b[i] = c
			case 1:
				b = b[:i+1]
			default:
				b = append(b[:i:i], append([]byte{c}, b[i:]...)...)
			}
		}
		got, err := decodeAt(b)
		ref, refErr := refDecode(b)
		switch {
		case err == nil && (refErr != nil || !reflect.DeepEqual(got, ref)):
			rt.Fatalf("% x: decoded %+v, reference %+v, %v", b, got, ref, refErr)
		case err != nil && refErr == nil && !hasMapCode(b):
			rt.Fatalf("% x: refused (%v), reference decoded %+v", b, err, ref)
		}
	})
}

func hasMapCode(b []byte) bool {
	return containsAny(b, func(c byte) bool { return (c >= 0x80 && c <= 0x8f) || c == mpMap16 || c == mpMap32 })
}

func containsAny(b []byte, f func(byte) bool) bool {
	for _, c := range b {
		if f(c) {
			return true
		}
	}
	return false
}

// The lenient forms msgpack reads (other builds of the library may write them): each decodes as
// the reference decodes it.
func TestDecodeLenientFormsMatchMsgpack(t *testing.T) {
	for name, b := range map[string][]byte{
		"bin8 name":             {3, 1, 0x92, mpBin8, 2, 'e', '1', 5},
		"str16 name":            {3, 1, 0x92, mpStr16, 0, 2, 'e', '1', 5},
		"str32 name":            {3, 1, 0x92, mpStr32, 0, 0, 0, 2, 'e', '1', 5},
		"bin16 name":            {3, 1, 0x92, mpBin16, 0, 2, 'e', '1', 5},
		"int8 epoch":            {3, 1, 0x92, 0xa2, 'e', '1', mpInt8, 0x85},
		"int16 epoch":           {3, 1, 0x92, 0xa2, 'e', '1', mpInt16, 0xff, 0x85},
		"int32 epoch":           {3, 1, 0x92, 0xa2, 'e', '1', mpInt32, 0, 0, 1, 0},
		"int64 epoch":           {3, 1, 0x92, 0xa2, 'e', '1', mpInt64, 0, 0, 0, 0, 0, 0, 1, 0},
		"negative fixint epoch": {3, 1, 0x92, 0xa2, 'e', '1', 0xff},
		"nil epoch":             {3, 1, 0x92, 0xa2, 'e', '1', mpNil},
		"uint16 hash truncated": {3, 3, 0x93, 0xa2, 'e', '1', 1, mpUint64, 1, 2, 3, 4, 5, 6, 7, 8},
		"array16 header":        {3, 1, mpArray16, 0, 2, 0xa2, 'e', '1', 1},
		"nil peers":             {4, 1, 0x92, 0xa2, 'e', '1', mpNil},
		"empty row":             {1, 1, 0x95, 1, 0xa1, 'm', 1, 0, 0x91, 0x90},
		"nil row":               {1, 1, 0x95, 1, 0xa1, 'm', 1, 0, 0x91, mpNil},
		"map body":              {3, 1, 0x82, 0xa4, 'N', 'a', 'm', 'e', 0xa2, 'e', '1', 0xa5, 'E', 'p', 'o', 'c', 'h', 5},
		"nil simulated":         append(refEncode(&ReportMsg{Name: "x"}, 3)[:len(refEncode(&ReportMsg{Name: "x"}, 3))-1], mpNil),
		"true as uint":          {3, 1, 0x92, 0xa2, 'e', '1', mpTrue},
		"float epoch":           {3, 1, 0x92, 0xa2, 'e', '1', 0xca, 0, 0, 0, 0},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := decodeAt(b)
			ref, refErr := refDecode(b)
			if name == "map body" {
				if refErr != nil || err == nil {
					t.Fatalf("want the reference to read a map and this decoder to refuse it: %v, %v", refErr, err)
				}
				return
			}
			if (err == nil) != (refErr == nil) || !reflect.DeepEqual(got, ref) {
				t.Fatalf("decoded %+v, %v; reference %+v, %v", got, err, ref, refErr)
			}
		})
	}
}
