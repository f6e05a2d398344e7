package state

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestFollowerThatMissedATableAsksForIt: the table of a change is lost on
// the way to ews2; the next digest names a version ews2 lacks, ews2 asks
// and has the row within a heartbeat and two ticks.
func TestFollowerThatMissedATableAsksForIt(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2", "ews3")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.run(fullTableEvery * fastTiming.Heartbeat)
	req0 := s.sent[tableReqMsgType]
	s.node("ews3").inFlight = 2
	s.partition([]string{"ews1"}, []string{"ews2"}) // the change's table does not reach ews2
	s.runUntil("master sees ews3's linknum", 2*fastTiming.Heartbeat, func() bool { return s.row("ews1", "ews3").Linknum == 2 })
	s.step() // the change's table goes out, and is lost on the way to ews2
	s.heal()
	took := s.runUntil("ews2 has the change", fullTableEvery*fastTiming.Heartbeat, func() bool { return s.row("ews2", "ews3").Linknum == 2 })
	if limit := fastTiming.Heartbeat + 3*fastTiming.Tick; took > limit {
		t.Fatalf("ews2 had the change after %v, want <= %v (a digest, a request, the table)", took, limit)
	}
	if s.sent[tableReqMsgType] == req0 {
		t.Fatal("ews2 got the change without asking: the test did not lose the table")
	}
	m, _ := s.node("ews1").e.Table()
	f, _ := s.node("ews2").e.Table()
	if f.Version != m.Version || TableHash(&f) != TableHash(&m) {
		t.Fatalf("ews2 holds version %d hash %08x, the master %d %08x", f.Version, TableHash(&f), m.Version, TableHash(&m))
	}
}

// TestMixedVersionsOldBoardGetsTables: a board that speaks only version 3
// keeps getting a table every heartbeat from a version-4 master while the
// other follower gets digests, and both see the same rows.
func TestMixedVersionsOldBoardGetsTables(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.node("ews2").speaks = 3
	s.start("ews1", "ews2", "ews3")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.run(fastTiming.Heartbeat)
	var gaps [2][]time.Duration // ews2, ews3
	last := [2]time.Time{s.now, s.now}
	for range 100 {
		s.step()
		for i, name := range []string{"ews2", "ews3"} {
			if _, at := s.node(name).e.Table(); at.After(last[i]) {
				gaps[i], last[i] = append(gaps[i], at.Sub(last[i])), at
			}
		}
	}
	for _, g := range gaps[0] {
		if g > fastTiming.Heartbeat {
			t.Fatalf("the version-3 board went %v without a table (gaps %v), want <= heartbeat", g, gaps[0])
		}
	}
	if len(gaps[1]) > len(gaps[0])/3 {
		t.Fatalf("the version-4 board got %d tables in 2 s, the version-3 board %d: want digests in between", len(gaps[1]), len(gaps[0]))
	}
	s.node("ews3").inFlight = 3
	s.run(2 * fastTiming.Heartbeat)
	for _, viewer := range []string{"ews2", "ews3"} {
		if r := s.row(viewer, "ews3"); r.Linknum != 3 {
			t.Fatalf("%s sees ews3 at linknum %d, want 3", viewer, r.Linknum)
		}
	}
}

// TestTakeoverAsFastWithDigests: followers count a digest as the master
// alive and its silence as silence, so the takeover after a crash takes
// as long at version 4 as at version 3.
func TestTakeoverAsFastWithDigests(t *testing.T) {
	took := map[uint8]time.Duration{}
	for _, v := range []uint8{3, ProtocolVersionUnsigned} {
		s := newSimNet(t, 3, fastTiming)
		for _, n := range s.nodes {
			n.speaks = v
		}
		s.start("ews1", "ews2", "ews3")
		s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
		s.run(5 * fastTiming.Heartbeat) // mid-way between two full tables at version 4
		s.kill("ews1")
		took[v] = s.runUntil("ews2 takes over", 2*fastTiming.TMax, func() bool { return s.agreed("ews2", 2) })
	}
	if took[ProtocolVersionUnsigned] > took[3] {
		t.Fatalf("takeover %v with digests, %v without", took[ProtocolVersionUnsigned], took[3])
	}
	if took[3] > fastTiming.TMax+2*fastTiming.Heartbeat {
		t.Fatalf("takeover %v, want <= tmax + 2 heartbeats", took[3])
	}
}

func TestLoadJitterIsNoChange(t *testing.T) {
	row := func(cpu uint16) Rows { return Rows{{Name: "ews1", CPU: cpu, AgeMs: uint32(cpu)}} }
	for _, c := range []struct {
		name      string
		sent, now Rows
		want      bool
	}{
		{"same", row(100), row(100), false},
		{"jitter under the band", row(100), row(100 + loadDeadband - 1), false},
		{"jitter down under the band", row(100), row(100 - loadDeadband + 1), false},
		{"a move of the band", row(100), row(100 + loadDeadband), true},
		{"a linknum", row(100), Rows{{Name: "ews1", CPU: 100, Linknum: 1}}, true},
		{"a row more", row(100), append(row(100), Row{Name: "ews2"}), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := rowsChanged(c.sent, c.now); got != c.want {
				t.Fatalf("rowsChanged = %v, want %v", got, c.want)
			}
		})
	}
}

// TestTableRequestAnswerMatchesTheDigest: the master answers a request
// with the table its digests describe, ages moved on to now.
func TestTableRequestAnswerMatchesTheDigest(t *testing.T) {
	s := newSimNet(t, 2, fastTiming)
	s.start("ews1", "ews2")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.run(3 * fastTiming.Heartbeat)
	m := s.node("ews1").e
	sent, at := m.Table()
	acts, err := m.Receive(s.now, &TableReqMsg{Name: "ews2", PeersHash: m.PeersHash()})
	if err != nil || len(acts) != 1 || acts[0].Kind != SendTo || acts[0].To != "ews2" {
		t.Fatalf("answer %+v, %v; want the table sent to ews2", acts, err)
	}
	got := acts[0].Msg.(*TableMsg)
	if TableHash(got) != TableHash(&sent) || got.Version != sent.Version {
		t.Fatalf("answer version %d hash %08x, digests say %d %08x", got.Version, TableHash(got), sent.Version, TableHash(&sent))
	}
	moved := uint32(s.now.Sub(at).Milliseconds())
	if moved == 0 || got.Rows[1].AgeMs != sent.Rows[1].AgeMs+moved {
		t.Fatalf("answer age %d ms, want %d + %d", got.Rows[1].AgeMs, sent.Rows[1].AgeMs, moved)
	}
	if acts, err := s.node("ews2").e.Receive(s.now, &TableReqMsg{Name: "ews1", PeersHash: m.PeersHash()}); err != nil || len(acts) != 0 {
		t.Fatalf("a follower asked for the table answered %+v, %v; want nothing", acts, err)
	}
}

// TestDigestsNeedVersion4: a digest or table request cannot be encoded for
// a board that speaks 1..3, and TableHash ignores ages and stats but not
// rows.
func TestDigestsNeedVersion4(t *testing.T) {
	for _, m := range []Message{&DigestMsg{Epoch: 1, Master: "ews1"}, &TableReqMsg{Name: "ews2"}} {
		for v := ProtocolVersionMin; v < 4; v++ {
			if _, err := EncodeVersion(m, v); !errors.Is(err, ErrVersion) {
				t.Fatalf("%s at version %d: %v, want ErrVersion", m.Type(), v, err)
			}
		}
		if _, err := EncodeVersion(m, 4); err != nil {
			t.Fatalf("%s at version 4: %v", m.Type(), err)
		}
	}
	base := TableMsg{Epoch: 2, Master: "ews1", Version: 5, Rows: Rows{{Name: "ews1", Linknum: 1, AgeMs: 10}}}
	aged, stats, moved := base, base, base
	aged.Rows = Rows{{Name: "ews1", Linknum: 1, AgeMs: 900}}
	stats.Stats = ClassStats{{Name: "control", Depth: 3}}
	moved.Rows = Rows{{Name: "ews1", Linknum: 2, AgeMs: 10}}
	if TableHash(&aged) != TableHash(&base) || TableHash(&stats) != TableHash(&base) {
		t.Fatal("TableHash moved with ages or stats")
	}
	if TableHash(&moved) == TableHash(&base) {
		t.Fatal("TableHash did not move with a linknum")
	}
}

// TestClusterSendsEachBoardItsVersion: real Clusters on loopback, ews3 set
// to protocol 3. The master sends ews2 digests and ews3 none, ews3 gets a
// table every heartbeat, and every board sees a change of ews3's load.
func TestClusterSendsEachBoardItsVersion(t *testing.T) {
	peers := loopbackPeers(t, 3)
	var bs []*board
	for i := range 3 {
		cfg := testConfig(fmt.Sprintf("ews%d", i+1), peers, testKey)
		// a board late by tthreshold changes the rows, and changed rows go
		// as tables, not digests: 1 s keeps a loaded machine's stalls out
		cfg.TMax, cfg.TThreshold = 1500*time.Millisecond, time.Second
		if i == 2 {
			cfg.ProtocolVersion = 3
		}
		bs = append(bs, startBoard(t, cfg))
	}
	testutil.EventuallyWithin(t, "ews1 elected", 10*time.Second, func() bool { return oneMaster(bs, "ews1") })
	received := func(b *board, kind MsgType) float64 {
		return float64(b.c.m.received.WithLabelValues(kind.String()).Get())
	}
	testutil.EventuallyWithin(t, "ews2 gets digests", 10*time.Second, func() bool { return received(bs[1], digestMsgType) >= 5 })
	t3 := received(bs[2], tableMsgType)
	testutil.EventuallyWithin(t, "ews3 keeps getting tables", 10*time.Second, func() bool { return received(bs[2], tableMsgType) >= t3+10 })
	if n := received(bs[2], digestMsgType); n != 0 {
		t.Fatalf("the protocol-3 board received %v digests", n)
	}
	bs[2].local.inflight.Store(2)
	testutil.EventuallyWithin(t, "every board sees ews3's linknum", 10*time.Second, func() bool { return seenEverywhere(bs, "ews3", 2) })
}
