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
		Rank: uint8(rank), Name: fmt.Sprintf("ews-board-%06d", rank),
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

func TestReportIsSmall(t *testing.T) {
	b, err := Encode(&ReportMsg{Name: "ews-board-000031", Epoch: 1 << 40, HTTP: "192.168.100.123:65535",
		InFlight: 65000, Completed: 1 << 40, Capacity: 65000, Weight: 1000, Runstate: Overloaded,
		CPU: 999, Mem: 998, Net: 997, Disk: 996, PeersHash: 0xFFFFFFFF})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("worst-case report: %d bytes", len(b))
	if len(b) > 100 {
		t.Fatalf("report is %d bytes, want <= 100", len(b))
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range []Message{
		&TableMsg{Epoch: 3, Master: "ews1", Version: 9, PeersHash: 7, Rows: Rows{worstRow(0), worstRow(1)}},
		&ReportMsg{Name: "ews2", Epoch: 3, HTTP: "10.0.0.2:8080", InFlight: 2, Completed: 10, Capacity: 4, Weight: 1, Runstate: Running, CPU: 500, PeersHash: 7},
		&StepDownMsg{Name: "ews1", Epoch: 3},
		&PeerListMsg{Name: "ews1", Peers: Strings{"ews1=10.0.0.1:7946", "ews2=10.0.0.2:7946"}},
	} {
		t.Run(m.Type().String(), func(t *testing.T) {
			b, err := Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			if MsgType(b[0]) != m.Type() || b[1] != ProtocolVersion {
				t.Fatalf("header % x, want type %d version %d", b[:2], m.Type(), ProtocolVersion)
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
		{"version 0", withVersion(0), "speaks 1..1"},
		{"version 2", withVersion(2), "speaks 1..1"},
		{"unknown type", withType(200), "unknown message type 200"},
		{"type 0", withType(0), "unknown message type 0"},
		{"huge row count", []byte{1, 1, 0x95, 1, 0xa1, 'm', 1, 0, 0xdd, 0xff, 0xff, 0xff, 0xff}, "over the limit"},
		{"huge string", []byte{3, 1, 0x92, 0xdb, 0xff, 0xff, 0xff, 0xff}, "decode stepdown"},
		{"epoch 0 table", mustEncode(t, &TableMsg{Master: "m", Version: 1}), "epoch 0"},
		{"empty name", mustEncode(t, &StepDownMsg{Epoch: 1}), "bad board name"},
		{"bad runstate", badRunstate(), "bad runstate"},
		{"load over 1000", mustEncode(t, &ReportMsg{Name: "x", CPU: 1001}), "per mille"},
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
// zero load and hash: four loads and the hash.
func msgpackTail(t *testing.T) []byte { return []byte{0, 0, 0, 0, 0} }

func mustEncode(t *testing.T, m Message) []byte {
	t.Helper()
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadWire(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want uint16
	}{{-1, 0}, {0, 0}, {0.0004, 0}, {0.5, 500}, {1, 1000}, {7, 1000}} {
		if got := permille(c.in); got != c.want {
			t.Errorf("permille(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}
