package state

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

const slack = 3 // ticks of delivery and tick phase allowed on top of a deadline

func TestStartBootedTogetherFirstPeerIsMaster(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2", "ews3")
	s.run(fastTiming.TMax - 2*fastTiming.Tick)
	if m := s.masters(); len(m) != 0 {
		t.Fatalf("masters %v before tmax: a board must listen for tmax first", m)
	}
	s.runUntil("ews1 master, epoch 1", 3*fastTiming.Heartbeat, func() bool { return s.agreed("ews1", 1) })
	s.run(2 * time.Second)
	if !s.agreed("ews1", 1) {
		t.Fatalf("mastership moved: %v", s.masters())
	}
}

func TestStartLateBoardFollowsExistingMaster(t *testing.T) {
	for _, preempt := range []bool{false, true} {
		t.Run(map[bool]string{false: "preempt=false", true: "preempt=true"}[preempt], func(t *testing.T) {
			timing := fastTiming
			timing.Preempt = preempt
			s := newSimNet(t, 3, timing)
			s.start("ews3")
			s.runUntil("ews3 claims alone", 2*timing.TMax, func() bool { return s.agreed("ews3", 1) })
			s.start("ews2")
			s.run(timing.TMax / 2)
			s.start("ews1") // the lowest rank powers up last
			s.run(timing.TMax / 2)
			if !s.agreed("ews3", 1) {
				t.Fatalf("late boards did not follow the running master: %v", s.masters())
			}
			s.run(timing.TMax)
			if preempt {
				s.runUntil("ews1 takes mastership back", timing.TMax+slack*timing.Tick, func() bool { return s.agreed("ews1", 2) })
				return
			}
			s.run(3 * timing.TMax)
			if !s.agreed("ews3", 1) {
				t.Fatalf("preempt=false: masters %v, want ews3 kept at epoch 1", s.masters())
			}
		})
	}
}

func TestMasterDeathLowestLiveBoardTakesOver(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2", "ews3")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.run(time.Second)
	s.kill("ews1")
	took := s.runUntil("ews2 master with epoch 2", fastTiming.TMax+fastTiming.Heartbeat+slack*fastTiming.Tick,
		func() bool { return s.agreed("ews2", 2) })
	t.Logf("takeover after %v (tmax %v)", took, fastTiming.TMax)
	if took < fastTiming.TMax-fastTiming.Heartbeat {
		t.Fatalf("takeover after %v, before tmax %v", took, fastTiming.TMax)
	}
	// and the next one, when ews2 dies too
	s.kill("ews2")
	s.runUntil("ews3 master with epoch 3", fastTiming.TMax+fastTiming.Heartbeat+slack*fastTiming.Tick,
		func() bool { return s.agreed("ews3", 3) })
}

func TestStepDownOnShutdownHandsOverAtOnce(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2", "ews3")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	n := s.node("ews1")
	s.do(n, n.e.StepDown(s.now))
	s.step() // deliver the step-down before the board goes
	s.kill("ews1")
	took := s.runUntil("ews2 master", fastTiming.TMax, func() bool { return s.agreed("ews2", 2) })
	if took > 2*fastTiming.Heartbeat {
		t.Fatalf("takeover after a step-down took %v, want well under tmax", took)
	}
}

func TestPartitionHealsHigherEpochWins(t *testing.T) {
	for _, preempt := range []bool{false, true} {
		t.Run(map[bool]string{false: "preempt=false", true: "preempt=true"}[preempt], func(t *testing.T) {
			timing := fastTiming
			timing.Preempt = preempt
			s := newSimNet(t, 3, timing)
			s.start("ews1", "ews2", "ews3")
			s.runUntil("ews1 master", 2*timing.TMax, func() bool { return s.agreed("ews1", 1) })
			s.partition([]string{"ews1"}, []string{"ews2", "ews3"})
			s.runUntil("ews2 master on its side", 2*timing.TMax, func() bool {
				m, e := s.node("ews3").e.Master()
				return m == "ews2" && e == 2 && s.node("ews2").e.IsMaster()
			})
			if !s.node("ews1").e.IsMaster() {
				t.Fatal("ews1 gave up mastership while cut off alone")
			}
			s.heal()
			s.runUntil("one master after heal", timing.Heartbeat+slack*timing.Tick, func() bool { return s.agreed("ews2", 2) })
			if preempt {
				s.runUntil("ews1 takes over again", timing.TMax+slack*timing.Tick, func() bool { return s.agreed("ews1", 3) })
			} else {
				s.run(3 * timing.TMax)
				if !s.agreed("ews2", 2) {
					t.Fatalf("masters %v, want ews2 kept", s.masters())
				}
			}
			// the tables agree
			v1, v3 := s.node("ews1").e.View(s.now), s.node("ews3").e.View(s.now)
			if v1.Master != v3.Master || v1.Epoch != v3.Epoch {
				t.Fatalf("views differ: ews1 %s@%d, ews3 %s@%d", v1.Master, v1.Epoch, v3.Master, v3.Epoch)
			}
		})
	}
}

func TestEqualEpochsLowerRankWins(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2", "ews3")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.partition([]string{"ews1"}, []string{"ews2"}, []string{"ews3"})
	s.kill("ews1")
	s.runUntil("ews2 and ews3 both master of epoch 2", 2*fastTiming.TMax, func() bool {
		return s.node("ews2").e.IsMaster() && s.node("ews3").e.IsMaster() &&
			s.node("ews2").e.Epoch() == 2 && s.node("ews3").e.Epoch() == 2
	})
	s.heal()
	took := s.runUntil("ews3 steps down", fastTiming.Heartbeat+slack*fastTiming.Tick, func() bool { return s.agreed("ews2", 2) })
	t.Logf("loser stepped down %v after the heal", took)
	var down bool
	for _, a := range s.node("ews3").events {
		down = down || a.Kind == SteppedDown
	}
	if !down {
		t.Fatal("ews3 never reported SteppedDown")
	}
}

func TestFlappingBoardDoesNotMoveMastership(t *testing.T) {
	for _, flapper := range []string{"ews3", "ews1"} {
		t.Run(flapper, func(t *testing.T) {
			s := newSimNet(t, 3, fastTiming)
			s.start("ews1", "ews2", "ews3")
			s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
			master, epoch := "ews1", uint64(1)
			if flapper == "ews1" {
				s.kill("ews1")
				s.runUntil("ews2 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews2", 2) })
				master, epoch = "ews2", 2
				s.start("ews1")
			}
			for i := range 5 {
				s.kill(flapper)
				s.run(fastTiming.TThreshold + fastTiming.Heartbeat)
				if r := s.row(master, flapper); r.Runstate != Down {
					t.Fatalf("flap %d: %s is %s on the master after %v of silence, want down", i, flapper, r.Runstate, fastTiming.TThreshold+fastTiming.Heartbeat)
				}
				s.start(flapper)
				s.run(fastTiming.TMax / 2)
			}
			s.run(2 * fastTiming.TMax)
			if !s.agreed(master, epoch) {
				t.Fatalf("masters %v, want %s@%d kept through the flaps", s.masters(), master, epoch)
			}
			if r := s.row(master, flapper); r.Runstate != Running {
				t.Fatalf("%s is %s after it settled, want running", flapper, r.Runstate)
			}
		})
	}
}

func TestStaleTableAfterTakeover(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2", "ews3")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	m := s.node("ews1")
	s.node("ews3").inFlight = 5 // ews1 sent it 5 requests
	s.run(2 * fastTiming.Heartbeat)
	if r := s.row("ews3", "ews3"); r.Linknum != 5 {
		t.Fatalf("ews1's table says linknum %d for ews3, want its report of 5", r.Linknum)
	}
	s.node("ews3").inFlight = 2 // ews1 dies; 3 of its requests end on ews3
	stale, _ := m.e.Table()
	s.kill("ews1")
	s.runUntil("ews2 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews2", 2) })
	if r := s.row("ews2", "ews3"); r.Linknum != 2 {
		t.Fatalf("new master's linknum for ews3 = %d, want 2 from its report (not 5 from the stale table)", r.Linknum)
	}
	// the old master's table arrives late: ignored everywhere
	for _, name := range []string{"ews2", "ews3"} {
		if _, err := s.node(name).e.Receive(s.now, &stale); err != nil {
			t.Fatal(err)
		}
	}
	s.step()
	if !s.agreed("ews2", 2) {
		t.Fatalf("a stale epoch-1 table moved mastership: %v", s.masters())
	}
	if r := s.row("ews3", "ews3"); r.Linknum != 2 {
		t.Fatalf("ews3's view after the stale table: linknum %d, want 2", r.Linknum)
	}
}

func TestSilentBoardGoesDownAfterTThreshold(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2", "ews3")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.run(fastTiming.Heartbeat)
	s.cut[[2]string{"ews3", "ews1"}] = true // ews1 stops hearing ews3
	s.run(fastTiming.TThreshold - fastTiming.Heartbeat)
	if r := s.row("ews1", "ews3"); r.Runstate != Running {
		t.Fatalf("ews3 is %s before tthreshold, want running", r.Runstate)
	}
	took := s.runUntil("ews3 down on the master", fastTiming.TThreshold, func() bool { return s.row("ews1", "ews3").Runstate == Down })
	took += fastTiming.TThreshold - fastTiming.Heartbeat
	if took > fastTiming.TThreshold+fastTiming.Heartbeat {
		t.Fatalf("down after %v, want about tthreshold %v", took, fastTiming.TThreshold)
	}
	s.runUntil("ews3 sees itself down in the master's table", slack*fastTiming.Tick, func() bool { return s.row("ews3", "ews3").Runstate == Down })
	if s.row("ews1", "ews3").LastSeenMs < fastTiming.TThreshold.Milliseconds() {
		t.Fatalf("last_seen_ms %d, want >= tthreshold", s.row("ews1", "ews3").LastSeenMs)
	}
}

func TestJoiningBecomesRunningWithLinknumZero(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2")
	s.runUntil("ews1 master", 3*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.start("ews3")
	n := s.node("ews3")
	n.runstate = Joining
	// deliver exactly the first (joining) report
	s.do(n, n.e.Local(s.now, ReportMsg{InFlight: 0, Capacity: 4, Weight: 1, Runstate: Joining}))
	n.nextRep = s.now.Add(time.Hour) // no more reports
	s.step()
	r := s.row("ews1", "ews3")
	if r.Runstate != Running || r.Linknum != 0 || r.Capacity != 4 {
		t.Fatalf("ews3 after a joining report: %+v, want running, linknum 0, capacity 4", r)
	}
}

// A board whose credentials fingerprint differs from the master's is
// marked on every board's view; an unknown fingerprint (0) marks nothing.
func TestAuthMismatchAgainstTheMaster(t *testing.T) {
	s := newSimNet(t, 4, fastTiming)
	for i, c := range []uint64{7, 7, 9, 0} {
		s.nodes[i].creds = c
	}
	s.start("ews1", "ews2", "ews3", "ews4")
	s.runUntil("ews1 master", 3*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.run(2 * fastTiming.Heartbeat)
	want := map[string]bool{"ews1": false, "ews2": false, "ews3": true, "ews4": false}
	for _, viewer := range []string{"ews1", "ews2", "ews3"} {
		for name, w := range want {
			if got := s.row(viewer, name).AuthMismatch; got != w {
				t.Errorf("%s sees %s auth_mismatch=%v, want %v", viewer, name, got, w)
			}
		}
	}
}

func TestStandaloneRowIsItsOwnReport(t *testing.T) {
	s := newSimNet(t, 1, fastTiming)
	s.start("ews1")
	n := s.node("ews1")
	if !n.e.IsMaster() || n.e.Epoch() != 1 {
		t.Fatalf("standalone board: master=%v epoch=%d, want master at epoch 1", n.e.IsMaster(), n.e.Epoch())
	}
	for _, inflight := range []uint32{3, 0, 1} {
		n.inFlight = inflight
		s.run(2 * fastTiming.Heartbeat)
		if r := s.row("ews1", "ews1"); r.Linknum != int(inflight) || len(n.e.View(s.now).Nodes) != 1 {
			t.Fatalf("standalone row %+v, want linknum %d (its own report) in a one-row table", r, inflight)
		}
	}
}

// TestMasterIsHeardEveryHeartbeat: at idle a follower hears the master
// every heartbeat (digests at version 4, tables before) and gets the full
// table at least every fullTableEvery heartbeats (every heartbeat below 4).
func TestMasterIsHeardEveryHeartbeat(t *testing.T) {
	for _, c := range []struct {
		speaks   uint8
		tableGap time.Duration
		digests  bool
	}{
		{ProtocolVersionUnsigned, fullTableEvery * fastTiming.Heartbeat, true},
		{3, fastTiming.Heartbeat, false},
	} {
		t.Run(fmt.Sprintf("v%d", c.speaks), func(t *testing.T) {
			s := newSimNet(t, 2, fastTiming)
			for _, n := range s.nodes {
				n.speaks = c.speaks
			}
			s.start("ews1", "ews2")
			s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
			s.run(fastTiming.Heartbeat) // the first tables of the election are behind us
			f := s.node("ews2").e
			lastTable, lastHeard := s.now, s.now
			var tables, heard []time.Duration
			digests0 := s.sent[digestMsgType]
			for range 150 {
				s.step()
				if _, at := f.Table(); at.After(lastTable) {
					tables, lastTable = append(tables, at.Sub(lastTable)), at
				}
				if f.heardMaster.After(lastHeard) {
					heard, lastHeard = append(heard, f.heardMaster.Sub(lastHeard)), f.heardMaster
				}
			}
			if slices.Max(heard) > fastTiming.Heartbeat {
				t.Fatalf("a %v gap between messages of the master, want <= heartbeat %v (gaps %v)", slices.Max(heard), fastTiming.Heartbeat, heard)
			}
			if len(tables) == 0 || slices.Max(tables) > c.tableGap {
				t.Fatalf("gaps between tables %v, want each <= %v", tables, c.tableGap)
			}
			if got := s.sent[digestMsgType] > digests0; got != c.digests {
				t.Fatalf("digests sent: %v, want %v", got, c.digests)
			}
		})
	}
}

func TestAChangeGoesOutAtTheNextTick(t *testing.T) {
	s := newSimNet(t, 2, fastTiming)
	s.start("ews1", "ews2")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	// a change goes out at the next tick, not the next heartbeat: ews2's
	// report of one request in flight reaches the master now
	s.node("ews2").inFlight = 1
	m := s.node("ews1")
	if _, err := m.e.Receive(s.now, &ReportMsg{Name: "ews2", InFlight: 1, Capacity: 4, Weight: 1, Runstate: Running, PeersHash: m.e.PeersHash()}); err != nil {
		t.Fatal(err)
	}
	s.step()
	s.step()
	if r := s.row("ews2", "ews2"); r.Linknum != 1 {
		t.Fatalf("two ticks after a dispatch ews2 sees linknum %d, want 1", r.Linknum)
	}
}

func TestPeerListMismatchAndDuplicateNameWarn(t *testing.T) {
	s := newSimNet(t, 2, fastTiming)
	s.start("ews1", "ews2")
	// ews2 has a different list: replace its election
	other := []Peer{{0, "ews1", "10.0.0.1:7946"}, {1, "ews2", "10.0.0.99:7946"}}
	e, err := NewElection("ews2", other, fastTiming, s.now)
	if err != nil {
		t.Fatal(err)
	}
	s.node("ews2").e = e
	s.run(3 * fastTiming.Heartbeat)
	if !s.warned("peer lists differ") || !s.warned("10.0.0.99:7946") || !s.warned("10.0.0.2:7946") {
		t.Fatalf("no warning with both peer lists: %q", s.warns)
	}
	// a report that uses ews1's own name
	acts, err := s.node("ews1").e.Receive(s.now, &ReportMsg{Name: "ews1", Runstate: Running})
	if err == nil || len(acts) != 1 || acts[0].Kind != Warn {
		t.Fatalf("report under our own name: err=%v acts=%+v, want a refusal and a warning", err, acts)
	}
	if _, err := s.node("ews1").e.Receive(s.now, &ReportMsg{Name: "stranger", Runstate: Running}); err == nil {
		t.Fatal("a report from a board not in cluster.peers was accepted")
	}
}

func TestMasterSendsItsReportToANewBoard(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2")
	s.runUntil("ews1 master", 3*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.start("ews3")
	s.runUntil("ews3 knows the master's HTTP address", 2*fastTiming.Heartbeat, func() bool {
		_, _, ok := s.node("ews3").e.Report("ews1")
		return ok
	})
}

func TestBoardsFromReports(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2", "ews3")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.node("ews2").inFlight = 3
	s.run(2 * fastTiming.Heartbeat)
	s.kill("ews3")
	s.run(fastTiming.TThreshold + fastTiming.Heartbeat)
	bs := s.node("ews1").e.Boards(s.now)
	if len(bs) != 3 || bs[1].Name != "ews2" || bs[1].Linknum != 3 || bs[1].Runstate != Running || bs[1].Capacity != 4 {
		t.Fatalf("ews2 in Boards: %+v, want its report: 3 in flight, running, capacity 4", bs[1])
	}
	if bs[2].Runstate != Down {
		t.Fatalf("silent ews3 in Boards: %+v, want down", bs[2])
	}
	fresh, _ := NewElection("ews1", s.peers, fastTiming, s.now)
	if b := fresh.Boards(s.now)[1]; b.Linknum != -1 || b.Runstate != Down {
		t.Fatalf("a board never heard: %+v, want linknum -1 and down", b)
	}
}

func TestFollowersSeeTheMastersQueueStats(t *testing.T) {
	s := newSimNet(t, 3, fastTiming)
	s.start("ews1", "ews2", "ews3")
	s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	version := s.node("ews1").e.View(s.now).Version
	s.node("ews1").e.SetStats(MakeClassStats(map[string]int{"control": 3, "browse": 1}, map[string]uint64{"control": 40}))
	s.runUntil("stats on ews3", fastTiming.Heartbeat+2*fastTiming.Tick, func() bool {
		return s.node("ews3").e.View(s.now).Queue["control"] == 3
	})
	v := s.node("ews3").e.View(s.now)
	if v.Queue["browse"] != 1 || v.Completed["control"] != 40 {
		t.Fatalf("ews3's view: queue %v completed %v, want the master's", v.Queue, v.Completed)
	}
	if v.Version != version {
		t.Fatalf("new stats moved the table version %d -> %d: they are not a change", version, v.Version)
	}
}
