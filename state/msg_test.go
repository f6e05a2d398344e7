package state

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// worstRow is a realistic worst case: a 16-character name, every load
// near full (3-byte per-mille values), capacity and linknum 1000 (3 bytes
// each), weight 100, and a board last heard a minute ago.
func worstRow(rank int) Row {
	return Row{
		Rank: uint16(rank), Name: fmt.Sprintf("ews-board-%06d", rank),
		Linknum: 1000, Capacity: 1000, Weight: 100, Runstate: Overloaded,
		CPU: 999, Mem: 998, Net: 997, Disk: 996,
		AgeMs: 60000,
	}
}

func TestRowFits64Bytes(t *testing.T) {
	b, err := Encode(&TableMsg{Epoch: 1, Master: "m", Version: 1, Rows: Rows{worstRow(31)}})
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := Encode(&TableMsg{Epoch: 1, Master: "m", Version: 1})
	row := len(b) - len(empty)
	t.Logf("one worst-case row: %d bytes", row)
	if row > 64 {
		t.Fatalf("row is %d bytes, want <= 64", row)
	}
}

func TestTable32Fits1400Bytes(t *testing.T) {
	m := &TableMsg{Epoch: 1 << 40, Master: "ews-board-000000", Version: 1 << 40, PeersHash: 0xFFFFFFFF}
	for i := range 32 {
		m.Rows = append(m.Rows, worstRow(i))
	}
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("32-board worst-case table: %d bytes", len(b))
	if len(b) > 1400 {
		t.Fatalf("table is %d bytes, want <= 1400", len(b))
	}
}

// worstStats is the master's queue with four classes, every queue deep
// and a year of dispatches counted.
func worstStats() ClassStats {
	return ClassStats{
		{Name: "control", Depth: 1024, Dispatched: 1 << 40},
		{Name: "status", Depth: 1024, Dispatched: 1 << 40},
		{Name: "browse", Depth: 1024, Dispatched: 1 << 40},
		{Name: "data-query", Depth: 1024, Dispatched: 1 << 40},
	}
}

// TestTable32WithQueueStats measures a 32-board table with the master's
// stats for four classes: with realistic rows (short names, a few requests
// in flight, heard within a heartbeat) they fit one packet; with the
// worst-case rows the stats are left out so the rows still do.
func TestTable32WithQueueStats(t *testing.T) {
	for _, c := range []struct {
		name      string
		row       func(int) Row
		withStats bool
	}{
		{"realistic rows", func(i int) Row {
			return Row{Rank: uint16(i), Name: fmt.Sprintf("ews%02d", i+1), Linknum: 12, Capacity: 16, Weight: 10,
				Runstate: Running, CPU: 999, Mem: 998, Net: 997, Disk: 996, AgeMs: 250}
		}, true},
		{"worst-case rows", worstRow, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &TableMsg{Epoch: 1 << 40, Master: "ews-board-000000", Version: 1 << 40, PeersHash: 0xFFFFFFFF, Stats: worstStats()}
			for i := range 32 {
				m.Rows = append(m.Rows, c.row(i))
			}
			b, err := Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("32-board table, %s, 4 classes of stats: %d bytes", c.name, len(b))
			if len(b) > MaxPacket {
				t.Fatalf("table is %d bytes, want <= %d", len(b), MaxPacket)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if has := len(got.(*TableMsg).Stats) == len(m.Stats); has != c.withStats {
				t.Fatalf("stats sent: %v, want %v", has, c.withStats)
			}
		})
	}
}

// A version-2 table is a version-1 table with one more array element:
// version 1 leaves the stats out and still decodes, with none.
func TestTableVersions(t *testing.T) {
	m := &TableMsg{Epoch: 3, Master: "ews1", Version: 9, PeersHash: 7, Rows: Rows{worstRow(0)}, Stats: worstStats()}
	v1, err := EncodeVersion(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := EncodeVersion(m, 2)
	if err != nil {
		t.Fatal(err)
	}
	if v1[1] != 1 || v2[1] != 2 || v1[2] != 0x95 || v2[2] != 0x96 || !bytes.HasPrefix(v2[3:], v1[3:]) {
		t.Fatalf("v1 % x\nv2 % x\nwant the same fields, v2 with the stats appended", v1, v2)
	}
	got, err := Decode(v1)
	if err != nil {
		t.Fatal(err)
	}
	want := *m
	want.Stats = nil
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("version-1 table:\n got %+v\nwant %+v", got, &want)
	}
	if _, err := EncodeVersion(m, ProtocolVersionMax+1); !errors.Is(err, ErrVersion) {
		t.Fatalf("encode at version %d: %v, want ErrVersion", ProtocolVersionMax+1, err)
	}
}

// A version-3 report is a version-2 report with the credentials
// fingerprint, the raw load figures and Simulated appended: at version 2
// they are left out, and it still decodes, with them at zero.
func TestReportVersions(t *testing.T) {
	m := &ReportMsg{Name: "ews1", Epoch: 2, HTTP: "127.0.0.1:8080", InFlight: 3, Capacity: 4, Weight: 1, Runstate: Running,
		CPU: 500, PeersHash: 7, Creds: 0xDEADBEEF12345678, DiskUsed: 420, NetPPS: 1500, DiskOps: 80, CPUMHz: 4 * 1500, MemMB: 1024,
		Simulated: true}
	v2, err := EncodeVersion(m, 2)
	if err != nil {
		t.Fatal(err)
	}
	v3, err := EncodeVersion(m, 3)
	if err != nil {
		t.Fatal(err)
	}
	// 13 fields fit a fixarray; 19 take an array16 header
	if v2[2] != 0x9d || !bytes.Equal(v3[2:5], []byte{0xdc, 0, 20}) || !bytes.HasPrefix(v3[5:], v2[3:]) {
		t.Fatalf("v2 % x\nv3 % x\nwant the same fields, v3 with the fingerprint, raw load and simulated appended", v2, v3)
	}
	got, err := Decode(v2)
	if err != nil {
		t.Fatal(err)
	}
	want := *m
	want.Creds, want.DiskUsed, want.NetPPS, want.DiskOps, want.CPUMHz, want.MemMB, want.Simulated = 0, 0, 0, 0, 0, 0, false
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("version-2 report:\n got %+v\nwant %+v", got, &want)
	}
	if got, err := Decode(v3); err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("version-3 report: %+v %v", got, err)
	}
	l := m.FullLoad()
	if l.CPU != 0.5 || l.DiskUsed != 0.42 || l.NetPPS != 1500 || l.DiskOps != 80 || l.CPUMHz != 6000 || l.MemMB != 1024 {
		t.Fatalf("FullLoad = %+v", l)
	}
}

func TestMakeClassStats(t *testing.T) {
	got := MakeClassStats(map[string]int{"control": 2, "browse": 0, "": 1}, map[string]uint64{"browse": 7, "data": 1})
	want := ClassStats{{Name: "browse", Depth: 0, Dispatched: 7}, {Name: "control", Depth: 2}, {Name: "data", Dispatched: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("MakeClassStats = %+v, want %+v", got, want)
	}
	q, d := got.Maps()
	if q["control"] != 2 || d["browse"] != 7 || len(q) != 3 || len(d) != 3 {
		t.Fatalf("Maps() = %v %v", q, d)
	}
	many := map[string]int{}
	for i := range MaxClasses + 3 {
		many[fmt.Sprintf("c%02d", i)] = i
	}
	if n := len(MakeClassStats(many, nil)); n != MaxClasses {
		t.Fatalf("%d classes, want at most %d", n, MaxClasses)
	}
}

func TestRunstateJSONAndWire(t *testing.T) {
	for _, rs := range []Runstate{Joining, Running, Overloaded, Down} {
		b, err := rs.MarshalText()
		if err != nil || string(b) != rs.String() {
			t.Fatalf("MarshalText(%d) = %q %v", rs, b, err)
		}
		var back Runstate
		if err := back.UnmarshalText(b); err != nil || back != rs {
			t.Fatalf("UnmarshalText(%q) = %v %v", b, back, err)
		}
	}
	if _, err := Runstate(9).MarshalText(); err == nil {
		t.Fatal("runstate 9 has a name")
	}
	var rs Runstate
	if err := rs.UnmarshalText([]byte("sleeping")); err == nil {
		t.Fatal("unknown name accepted")
	}
	// On the wire the runstate stays one byte, the number.
	b := mustEncode(t, &ReportMsg{Name: "x", Runstate: Overloaded})
	if got := b[len(b)-len(msgpackTail(t))-1]; got != byte(Overloaded) {
		t.Fatalf("runstate on the wire: % x, want %d", got, Overloaded)
	}
}

func TestReportIsSmall(t *testing.T) {
	b, err := Encode(&ReportMsg{Name: "ews-board-000031", Epoch: 1 << 40, HTTP: "192.168.100.123:65535",
		InFlight: 65000, Completed: 1 << 40, Capacity: 65000, Weight: 1000, Runstate: Overloaded,
		CPU: 999, Mem: 998, Net: 997, Disk: 996, PeersHash: 0xFFFFFFFF, Creds: ^uint64(0),
		DiskUsed: 999, NetPPS: 1 << 31, DiskOps: 1 << 31, CPUMHz: 1 << 31, MemMB: 1 << 31, Simulated: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("worst-case report: %d bytes", len(b))
	if len(b) > 128 {
		t.Fatalf("report is %d bytes, want <= 128", len(b))
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range []Message{
		&TableMsg{Epoch: 3, Master: "ews1", Version: 9, PeersHash: 7, Rows: Rows{worstRow(0), worstRow(1)}},
		&TableMsg{Epoch: 3, Master: "ews1", Version: 9, Rows: Rows{worstRow(0)}, Stats: worstStats()},
		&ReportMsg{Name: "ews2", Epoch: 3, HTTP: "10.0.0.2:8080", InFlight: 2, Completed: 10, Capacity: 4, Weight: 1, Runstate: Running, CPU: 500, PeersHash: 7, Creds: 42},
		&ReportMsg{Name: "ews3", Runstate: Running, Simulated: true},
		&StepDownMsg{Name: "ews1", Epoch: 3},
		&PeerListMsg{Name: "ews1", Peers: Strings{"ews1=10.0.0.1:7946", "ews2=10.0.0.2:7946"}},
		&DigestMsg{Epoch: 3, Master: "ews1", Version: 9, Hash: 0xdeadbeef, PeersHash: 7},
		&TableReqMsg{Name: "ews2", Epoch: 3, Version: 8, PeersHash: 7},
	} {
		t.Run(m.Type().String(), func(t *testing.T) {
			b, err := Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			if MsgType(b[0]) != m.Type() || b[1] != ProtocolVersionUnsigned {
				t.Fatalf("header % x, want type %d version %d", b[:2], m.Type(), ProtocolVersionUnsigned)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	good, _ := Encode(&StepDownMsg{Name: "ews1", Epoch: 2})
	table, _ := Encode(&TableMsg{Epoch: 1, Master: "ews1", Version: 1, Rows: Rows{worstRow(0)}})
	withVersion := func(v byte) []byte { b := bytes.Clone(good); b[1] = v; return b }
	withType := func(t byte) []byte { b := bytes.Clone(good); b[0] = t; return b }
	badRunstate := func() []byte {
		b, _ := Encode(&ReportMsg{Name: "x", Runstate: Running})
		b[len(b)-len(msgpackTail(t))-1] = 9 // see msgpackTail
		return b
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"header only", good[:2], "too short"},
		{"truncated", good[:len(good)-1], "decode stepdown"},
		{"truncated table", table[:len(table)/2], "decode table"},
		{"trailing", append(bytes.Clone(good), 0), "trailing"},
		{"oversized", append(bytes.Clone(good), make([]byte, MaxMessage)...), "over the"},
		{"version 0", withVersion(0), "speaks 1..5"},
		{"version 6", withVersion(6), "speaks 1..5"},
		{"version 5 without a signature", withVersion(5), "too short for version 5"},
		{"digest at version 3", func() []byte { b := mustEncode(t, &DigestMsg{Epoch: 1, Master: "m"}); b[1] = 3; return b }(), "needs version 4"},
		{"table request at version 1", func() []byte { b := mustEncode(t, &TableReqMsg{Name: "x"}); b[1] = 1; return b }(), "needs version 4"},
		{"digest epoch 0", mustEncode(t, &DigestMsg{Master: "m"}), "epoch 0"},
		{"table request without a name", mustEncode(t, &TableReqMsg{Epoch: 1}), "bad board name"},
		{"too many class stats", mustEncode(t, &TableMsg{Epoch: 1, Master: "m", Stats: make(ClassStats, MaxClasses+1)}), "over the limit"},
		{"empty class name", mustEncode(t, &TableMsg{Epoch: 1, Master: "m", Stats: ClassStats{{Depth: 1}}}), "bad class name"},
		{"unknown type", withType(200), "unknown message type 200"},
		{"type 0", withType(0), "unknown message type 0"},
		{"huge row count", []byte{1, 1, 0x95, 1, 0xa1, 'm', 1, 0, 0xdd, 0xff, 0xff, 0xff, 0xff}, "over the limit"},
		{"huge string", []byte{3, 1, 0x92, 0xdb, 0xff, 0xff, 0xff, 0xff}, "decode stepdown"},
		{"epoch 0 table", mustEncode(t, &TableMsg{Master: "m", Version: 1}), "epoch 0"},
		{"empty name", mustEncode(t, &StepDownMsg{Epoch: 1}), "bad board name"},
		{"bad runstate", badRunstate(), "bad runstate"},
		{"load over 1000", mustEncode(t, &ReportMsg{Name: "x", CPU: 1001}), "per mille"},
		{"disk space over 1000", mustEncode(t, &ReportMsg{Name: "x", DiskUsed: 1001}), "per mille"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(c.in)
			if err == nil {
				t.Fatalf("decoded %+v, want an error", m)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not mention %q", err, c.want)
			}
		})
	}
	if _, err := Decode(withVersion(9)); !errors.Is(err, ErrVersion) {
		t.Fatalf("version 9: %v, want ErrVersion", err)
	}
}

// msgpackTail is the encoding of the fields after Runstate in a report with
// zero load, hash and fingerprint: four loads, the hash, the credentials
// fingerprint, the five raw load figures and Simulated (false).
func msgpackTail(t *testing.T) []byte { return append(make([]byte, 11), 0xc2) }

func mustEncode(t *testing.T, m Message) []byte {
	t.Helper()
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStepDownVersions: version 3 carries the peer-list hash; an older
// step-down still decodes, without it.
func TestStepDownVersions(t *testing.T) {
	m := &StepDownMsg{Name: "ews1", Epoch: 9, PeersHash: 0xdeadbeef}
	for _, tt := range []struct {
		v    uint8
		want uint32
	}{{1, 0}, {2, 0}, {3, 0xdeadbeef}} {
		b, err := EncodeVersion(m, tt.v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("v%d: %v", tt.v, err)
		}
		if sd := got.(*StepDownMsg); sd.Name != "ews1" || sd.Epoch != 9 || sd.PeersHash != tt.want {
			t.Fatalf("v%d: %+v", tt.v, sd)
		}
	}
}
