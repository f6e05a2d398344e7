package state

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/clock"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/hashicorp/memberlist"
	"github.com/jonboulle/clockwork"
)

// clockBoard is an unstarted Cluster of ews1..ews3 whose clock runs
// offset off the shared fake base.
func clockBoard(t *testing.T, name string, base clockwork.Clock, offset time.Duration) *Cluster {
	t.Helper()
	cfg := testConfig(name, []string{"ews1=127.0.0.1:1", "ews2=127.0.0.1:2", "ews3=127.0.0.1:3"}, testKey)
	cfg.Clock = clock.New(base, offset)
	c, err := New(cfg, testutil.Logger(), nil, &fakeLocal{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ack is what memberlist hands the pinger: board from's ack, its flags
// forced.
func ack(from *Cluster, flags byte) []byte {
	return clockAck(nil, flags, from.clock.Local(), from.clock.Correction())
}

func TestClockOffsetFromAcks(t *testing.T) {
	const rtt = 4 * time.Millisecond
	for _, tc := range []struct {
		name   string
		offset time.Duration // the peer's clock off the pinger's
	}{
		{"peer 3 hours behind", -3 * time.Hour},
		{"peer 10 minutes ahead", 10 * time.Minute},
		{"peer 30 days behind", -30 * 24 * time.Hour},
		{"same clock", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := clockwork.NewFakeClock()
			ews1, ews2 := clockBoard(t, "ews1", base, 0), clockBoard(t, "ews2", base, tc.offset)
			// the ack leaves ews2 half a round trip before it reaches ews1
			payload := ack(ews2, 0)
			base.Advance(rtt / 2)
			pinger{ews1}.NotifyPingComplete(&memberlist.Node{Name: "ews2"}, rtt, payload)
			if got := ews1.ClockOffsets()["ews2"]; got != tc.offset {
				t.Fatalf("ews1 measures ews2 at %v, want %v", got, tc.offset)
			}
		})
	}
}

func TestClockOffsetMedian(t *testing.T) {
	base := clockwork.NewFakeClock()
	ews1, ews2 := clockBoard(t, "ews1", base, 0), clockBoard(t, "ews2", base, -time.Hour)
	for _, rtt := range []time.Duration{0, 0, 2 * time.Second, 0, 0} { // one ack the pinger thinks slow
		pinger{ews1}.NotifyPingComplete(&memberlist.Node{Name: "ews2"}, rtt, ack(ews2, 0))
	}
	if got := ews1.ClockOffsets()["ews2"]; got != -time.Hour {
		t.Fatalf("median offset %v, want -1h", got)
	}
	pinger{ews1}.NotifyPingComplete(&memberlist.Node{Name: "ews2"}, 0, []byte{1, 2, 3}) // a build without clocks
	if _, ok := ews1.ClockOffsets()["ews3"]; ok || len(ews1.ClockOffsets()) != 1 {
		t.Fatalf("offsets %v", ews1.ClockOffsets())
	}
}

// The correction follows the master's clock, whichever side this board's
// own clock is off to.
func TestClockCorrection(t *testing.T) {
	for _, tc := range []struct {
		name     string
		self     time.Duration // this board's (ews2's) clock
		acks     map[string]byte
		want     time.Duration // ews2's cluster time minus the true time
		measured bool
	}{
		{"nothing heard: own clock", -3 * time.Hour, nil, -3 * time.Hour, false},
		{"behind, ews1 says master", -3 * time.Hour, map[string]byte{"ews1": ackMaster}, 0, true},
		{"ahead, ews1 says master", 10 * time.Minute, map[string]byte{"ews1": ackMaster}, 0, true},
		{"the lower rank of two masters", -30 * 24 * time.Hour, map[string]byte{"ews3": ackMaster, "ews1": ackMaster}, 0, true},
		{"no master: a peer that follows one", 10 * time.Minute, map[string]byte{"ews3": ackMeasured}, 0, true},
		{"ews1 master and following an earlier master", -3 * time.Hour, map[string]byte{"ews1": ackMaster | ackMeasured}, 5 * time.Minute, true},
		{"no master, nobody follows one", -time.Hour, map[string]byte{"ews3": 0}, -time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := clockwork.NewFakeClock()
			ews2 := clockBoard(t, "ews2", base, tc.self)
			peers := map[string]*Cluster{"ews1": clockBoard(t, "ews1", base, 0), "ews3": clockBoard(t, "ews3", base, 7*time.Minute)}
			peers["ews3"].clock.SetCorrection(-7 * time.Minute) // ews3 follows ews1
			if tc.acks["ews1"]&ackMeasured != 0 {
				peers["ews1"].clock.SetCorrection(5 * time.Minute) // ews1 took over from a master 5 minutes ahead
				peers["ews3"].clock.SetCorrection(-2 * time.Minute)
			}
			for name, flags := range tc.acks {
				pinger{ews2}.NotifyPingComplete(&memberlist.Node{Name: name}, 0, ack(peers[name], flags))
			}
			if got := ews2.clock.Now().Sub(base.Now()); got != tc.want || ews2.clock.Measured() != tc.measured {
				t.Fatalf("ews2's cluster time is %v off, measured %v; want %v, %v", got, ews2.clock.Measured(), tc.want, tc.measured)
			}
		})
	}
}

// A master's claim counts while fresh only.
func TestClockCorrectionStaleMaster(t *testing.T) {
	base := clockwork.NewFakeClock()
	ews2 := clockBoard(t, "ews2", base, -time.Hour)
	now := time.Now()
	ews2.clocks.record("ews1", time.Hour, 0, ackMaster, 0, now.Add(-clockFresh-time.Second))
	if _, ok := ews2.clockCorrection(now); ok {
		t.Fatal("a stale master claim set the correction")
	}
	ews2.clocks.record("ews1", time.Hour, 0, ackMaster, 0, now)
	if d, ok := ews2.clockCorrection(now); !ok || d != time.Hour {
		t.Fatalf("correction %v %v, want 1h", d, ok)
	}
}

// A step of a clock while the boards run (a simulated board's SIGUSR1, a
// board's RTC set by hand) moves no board's cluster time: not the stepped
// board's own (its correction takes the step back, and its samples of the
// master taken before the step still count), nor its followers' (the
// master's acks carry its new Local with its new correction). Before,
// one ack after the step set the correction back to the median of the
// old samples, and cluster time jumped by the step for three probes.
func TestClockStepKeepsClusterTime(t *testing.T) {
	base := clockwork.NewFakeClock()
	ews1, ews2 := clockBoard(t, "ews1", base, 0), clockBoard(t, "ews2", base, -time.Hour)
	probe := func(n int) {
		for range n {
			pinger{ews2}.NotifyPingComplete(&memberlist.Node{Name: "ews1"}, 0, ack(ews1, ackMaster))
		}
	}
	off := func() time.Duration { return ews2.clock.Now().Sub(base.Now()) }
	probe(5)
	if got := off(); got != 0 {
		t.Fatalf("ews2's cluster time %v off before any step", got)
	}
	for _, s := range []struct {
		what string
		step func()
	}{
		{"ews2 (a follower) steps 3h ahead", func() { ews2.clock.SetOffset(2 * time.Hour) }},
		{"ews1 (the master) steps 2h behind", func() { ews1.clock.SetOffset(-2 * time.Hour) }},
		{"ews2 steps back to none", func() { ews2.clock.SetOffset(0) }},
	} {
		s.step()
		for k := 1; k <= 5; k++ {
			probe(1)
			if got := off(); got != 0 {
				t.Fatalf("%s: ews2's cluster time is %v off after %d probe(s), want 0", s.what, got, k)
			}
		}
	}
	if got, want := ews2.ClockOffsets()["ews1"], -2*time.Hour; got != want {
		t.Fatalf("ews2 measures ews1's clock at %v, want %v (the master's own clock shows its step)", got, want)
	}
}
