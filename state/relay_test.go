package state

import (
	"fmt"
	"strings"
	"testing"
)

func TestRelayed(t *testing.T) {
	boards := func(n, nameLen int) []string {
		out := make([]string, n)
		for i := range out {
			name := fmt.Sprintf("ews%d", i+1)
			out[i] = name + strings.Repeat("x", max(nameLen-len(name), 0))
		}
		return out
	}
	for _, tc := range []struct {
		n, nameLen int
		want       bool
	}{
		{1, 4, false},
		{32, 8, false}, // invariant 8: 32 boards fit one packet, sealed
		{31, 16, false},
		{64, 8, true},
		{128, 8, true},
		{1024, 63, true},
	} {
		if got := Relayed(boards(tc.n, tc.nameLen)); got != tc.want {
			t.Errorf("Relayed(%d boards, names of %d bytes) = %v, want %v", tc.n, tc.nameLen, got, tc.want)
		}
	}
}

func TestRelayWrapUnwrap(t *testing.T) {
	digest := &DigestMsg{Epoch: 3, Master: "ews1", Version: 9, Hash: 7, PeersHash: 5}
	b, err := wrapRelay("ews1", 42, 7, digest, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	r := m.(*RelayMsg)
	if r.Origin != "ews1" || r.Boot != 42 || r.Seq != 7 || r.Sig != nil {
		t.Fatalf("relay %+v", r)
	}
	inner, err := unwrapRelay(r)
	if err != nil {
		t.Fatal(err)
	}
	if got := inner.(*DigestMsg); *got != *digest {
		t.Fatalf("carried %+v, want %+v", got, digest)
	}

	for _, tc := range []struct {
		name   string
		origin string
		m      Message
		want   string
	}{
		{"another board's message", "ews2", digest, "names"},
		{"a table", "ews1", &TableMsg{Epoch: 1, Master: "ews1"}, "never relayed"},
		{"a table request", "ews1", &TableReqMsg{Name: "ews1"}, "never relayed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner, err := Encode(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			_, err = unwrapRelay(&RelayMsg{Origin: tc.origin, Boot: 1, Seq: 1, Inner: inner})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestRelaySeen(t *testing.T) {
	type step struct {
		boot, seq uint64
		want      bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"each once", []step{{1, 1, true}, {1, 1, false}, {1, 2, true}, {1, 2, false}}},
		{"reordered within the window", []step{{1, 5, true}, {1, 3, true}, {1, 4, true}, {1, 3, false}}},
		{"too old", []step{{1, 100, true}, {1, 36, false}, {1, 37, true}}},
		{"a later run starts afresh", []step{{1, 9, true}, {2, 1, true}, {2, 1, false}}},
		{"an earlier run is refused", []step{{2, 1, true}, {1, 50, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w relaySeen
			for i, s := range tc.steps {
				if got := w.take(s.boot, s.seq); got != s.want {
					t.Fatalf("step %d (run %d, seq %d): %v, want %v", i, s.boot, s.seq, got, s.want)
				}
			}
		})
	}
}

// TestChunkDelta: 1,024 rows of the longest names split into deltas that
// each fit a relayed message, every row once, in order, the stats in the
// first.
func TestChunkDelta(t *testing.T) {
	rows := make(Rows, MaxBoards)
	for i := range rows {
		rows[i] = Row{Rank: uint16(i), Name: fmt.Sprintf("%063d", i), Linknum: ^uint32(0), Capacity: ^uint32(0), Weight: ^uint32(0),
			Runstate: Down, CPU: 1000, Mem: 1000, Net: 1000, Disk: 1000, AgeMs: neverHeardAge}
	}
	head := DeltaMsg{Epoch: ^uint64(0), Master: strings.Repeat("m", maxNameLen), Version: ^uint64(0), Hash: ^uint32(0), PeersHash: ^uint32(0)}
	stats := ClassStats{{Name: "control", Depth: 3, Dispatched: 9}}
	chunks := chunkDelta(head, rows, stats)
	next := 0
	for i, d := range chunks {
		b, err := EncodeVersion(d, ProtocolVersionUnsigned)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > maxRelayInner {
			t.Fatalf("delta %d is %d bytes, over %d", i, len(b), maxRelayInner)
		}
		if (i == 0) != (d.Stats != nil) {
			t.Fatalf("delta %d: stats %v", i, d.Stats)
		}
		for _, r := range d.Rows {
			if int(r.Rank) != next {
				t.Fatalf("delta %d: row %d, want %d", i, r.Rank, next)
			}
			next++
		}
	}
	if next != len(rows) {
		t.Fatalf("%d rows in %d deltas, want %d", next, len(chunks), len(rows))
	}
	if got := chunkDelta(head, nil, nil); len(got) != 0 {
		t.Fatalf("no rows, no stats: %d deltas", len(got))
	}
}
