package state

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/hashicorp/memberlist"
)

// signedBoards starts boards ews1..ewsN on loopback; those named in ids
// get that identity (the others run as a board without a certificate,
// which is also how the last build runs: unsigned, version 4). tune, when
// given, changes each board's config.
func signedBoards(t *testing.T, peers []string, ids map[string]*Identity, tune ...func(*Config)) []*board {
	t.Helper()
	var bs []*board
	for i := range peers {
		name := fmt.Sprintf("ews%d", i+1)
		cfg := testConfig(name, peers, testKey)
		cfg.Identity = ids[name]
		for _, f := range tune {
			f(&cfg)
		}
		bs = append(bs, startBoard(t, cfg))
	}
	return bs
}

func loopbackPeers(t *testing.T, n int) []string {
	var peers []string
	for i := range n {
		peers = append(peers, fmt.Sprintf("ews%d=127.0.0.1:%d", i+1, freePort(t)))
	}
	return peers
}

// everyoneSigns reports whether every board of bs has verified a signed
// message of every other.
func everyoneSigns(bs []*board) bool {
	for _, a := range bs {
		for _, b := range bs {
			if a != b && !a.c.seal.keys.Signs(b.c.self.Name) {
				return false
			}
		}
	}
	return true
}

func (b *board) report(name string) ReportMsg {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	r, _, _ := b.c.e.Report(name)
	return r
}

// elect runs fn on b's Election under its lock.
func (b *board) elect(fn func(e *Election)) {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	fn(b.c.e)
}

func (b *board) epoch() (ep uint64)    { b.elect(func(e *Election) { ep = e.Epoch() }); return }
func (b *board) peersHash() (h uint32) { b.elect(func(e *Election) { h = e.PeersHash() }); return }
func (b *board) peerVersion(n string) (v uint8) {
	b.elect(func(e *Election) { v = e.PeerVersion(n) })
	return
}

func (b *board) refusedOf(kind string) float64 {
	return float64(b.c.m.refused.WithLabelValues(kind).Get())
}

// inject sends b, as from's real gossip (its own address, the cluster
// key), to board to.
func inject(t *testing.T, from *board, to *board, b []byte) {
	t.Helper()
	if err := from.c.mem.ml.Load().SendToAddress(memberlist.Address{Addr: to.c.self.Addr, Name: to.c.self.Name}, b); err != nil {
		t.Fatal(err)
	}
}

// TestInsiderCannotSpeakForAnotherBoard: on real gossip, ews3 holds the
// cluster key, its own certificate and a member's address, but not ews2's
// or ews1's private key. Every message it sends naming ews2 (unsigned, or
// signed with its own key) or ews1 (a step-down, a table) is refused and
// counted, and ews2's row keeps ews2's own figures; a captured message of
// ews2 replayed is refused too. On the code before version 5 every one of
// them was taken (they come from a configured address, under a member's
// name) and nothing was refused: the counts below stay at 0 there.
func TestInsiderCannotSpeakForAnotherBoard(t *testing.T) {
	ca := clusterCA(t, "main")
	// tmax 2 s: the test asserts the master did not move, so a real
	// takeover must not happen either (at 300 ms one did, under -race and
	// two busy loops: make flakes, seed 1796177220541650432)
	bs := signedBoards(t, loopbackPeers(t, 3), ca.ids, func(c *Config) { c.TMax = 2 * time.Second })
	testutil.EventuallyWithin(t, "ews1 master, every board signing", 10*time.Second, func() bool {
		return oneMaster(bs, "ews1") && everyoneSigns(bs)
	})
	master, victim, insider := bs[0], bs[1], bs[2]
	hash := master.peersHash()
	const forged = 424242
	unsigned := func(m Message) []byte { b, err := EncodeVersion(m, ProtocolVersionUnsigned); must(t, err); return b }
	sealed := func(from, to *board, m Message) []byte {
		b, err := from.c.seal.keys.Seal(m, to.c.self.Name)
		must(t, err)
		return b
	}
	report := &ReportMsg{Name: "ews2", HTTP: victim.c.httpAddr(), Runstate: Running, Completed: forged, PeersHash: hash}

	before := map[string]float64{"unsigned": master.refusedOf("unsigned"), "signature": master.refusedOf("signature"), "replay": master.refusedOf("replay")}
	const n = 5
	for range n {
		inject(t, insider, master, unsigned(report))
		inject(t, insider, master, sealed(insider, master, report))
		inject(t, insider, victim, unsigned(&StepDownMsg{Name: "ews1", Epoch: master.epoch(), PeersHash: hash}))
		inject(t, insider, victim, sealed(insider, victim, &TableMsg{Epoch: master.epoch() + 1, Master: "ews1", Version: 1 << 30, PeersHash: hash}))
	}
	// ews2's own message to ews1, as captured on the wire: taken once,
	// then replayed; and ews2's messages to ews3 itself, passed on to ews1
	captured := sealed(victim, master, &ReportMsg{Name: "ews2", HTTP: victim.c.httpAddr(), Runstate: Running, PeersHash: hash})
	for range n {
		inject(t, insider, master, captured)
		inject(t, insider, master, sealed(victim, insider, report))
	}
	testutil.EventuallyWithin(t, "the forgeries refused and counted", 5*time.Second, func() bool {
		return master.refusedOf("unsigned") >= before["unsigned"]+n &&
			master.refusedOf("signature") >= before["signature"]+2*n &&
			master.refusedOf("replay") >= before["replay"]+n-1 &&
			victim.refusedOf("unsigned") >= n && victim.refusedOf("signature") >= n
	})
	if r := master.report("ews2"); r.Completed == forged {
		t.Fatalf("ews1 took the forged report of ews2: %+v", r)
	}
	if !oneMaster(bs, "ews1") || master.epoch() != victim.epoch() {
		t.Fatalf("the forged step-down or table moved the cluster: masters %v, epochs %d/%d", []bool{bs[0].c.IsMaster(), bs[1].c.IsMaster(), bs[2].c.IsMaster()}, master.epoch(), victim.epoch())
	}
	var tv uint64
	victim.elect(func(e *Election) { tb, _ := e.Table(); tv = tb.Version })
	if tv >= 1<<30 {
		t.Fatalf("ews2 took the forged table: version %d", tv)
	}
}

// startLastBuild starts board name as the build before version 5 runs:
// no certificate, protocol 4, no node meta, version-5 messages refused.
func startLastBuild(t *testing.T, name string, peers []string, tune ...func(*Config)) *board {
	t.Helper()
	cfg := testConfig(name, peers, testKey)
	cfg.ProtocolVersion = ProtocolVersionUnsigned
	for _, f := range tune {
		f(&cfg)
	}
	b := &board{local: &fakeLocal{}, reg: promx.NewRegistry()}
	c, err := New(cfg, testutil.Logger().With("board", name, "build", "last"), b.reg, b.local)
	must(t, err)
	c.seal.lastBuild = true
	must(t, startRun(t, c))
	b.c = c
	return b
}

// settled reports whether the boards agree on one master and each shows
// every board running with its own in-flight count as linknum.
func settled(bs []*board) bool {
	var master string
	n := 0
	for _, b := range bs {
		name, _, ok := b.c.Master()
		if !ok || (master != "" && name != master) {
			return false
		}
		master = name
		if b.c.IsMaster() {
			n++
		}
		v := b.c.Snapshot()
		for _, o := range bs {
			row, ok := v.Node(o.c.self.Name)
			if !ok || row.Runstate != Running || row.Linknum != int(o.local.inflight.Load()) {
				return false
			}
		}
	}
	return n == 1
}

// TestRollingUpgradeToSigned: three boards of the last build (unsigned,
// version 4, no node meta) are upgraded one by one, the master last, to
// boards with certificates. At every step the boards agree on one master
// and see each other's reports (the new boards send the old ones version
// 4, and take their unsigned messages once the old boards' certificates
// say they do not seal); the upgraded boards seal to each other. At the end every board seals, and an unsigned message naming one
// is refused. The last build's boards are sent nothing they cannot read:
// no intro (push-pull, join, answers) and no version 5.
func TestRollingUpgradeToSigned(t *testing.T) {
	ca := clusterCA(t, "main")
	peers := loopbackPeers(t, 3)
	var bs []*board
	for i := range 3 {
		bs = append(bs, startLastBuild(t, fmt.Sprintf("ews%d", i+1), peers))
		bs[i].local.inflight.Store(int64(i + 1))
	}
	testutil.EventuallyWithin(t, "the last build's cluster settled", 10*time.Second, func() bool { return settled(bs) })

	for step, i := range []int{2, 1, 0} {
		name := bs[i].c.self.Name
		bs[i].c.stop()
		cfg := testConfig(name, peers, testKey)
		cfg.Identity = ca.ids[name]
		bs[i] = startBoard(t, cfg)
		bs[i].local.inflight.Store(int64(10*(step+1) + i))
		upgraded := bs[i:]
		// the old boards' unsigned messages are taken once their
		// certificates say over TLS that they do not seal (askSeals,
		// faked: TestAskSeals covers the handshake)
		lastBuild := map[string]bool{}
		for _, old := range bs[:i] {
			lastBuild[old.c.self.Name] = true
		}
		bs[i].c.mu.Lock()
		bs[i].c.seal.askSeals = func(_ context.Context, n, _ string) (bool, error) { return !lastBuild[n], nil }
		bs[i].c.mu.Unlock()
		testutil.EventuallyWithin(t, fmt.Sprintf("settled with %s upgraded", name), 10*time.Second, func() bool {
			// the old boards' version is learnt from their messages, on
			// the gossip goroutine: a wait, not a moment
			for _, old := range bs[:i] {
				if bs[i].peerVersion(old.c.self.Name) == 0 {
					return false
				}
			}
			return settled(bs) && everyoneSigns(upgraded)
		})
		for _, old := range bs[:i] { // the last build's boards are sent version 4
			if n := old.refusedOf("unknown"); n != 0 {
				t.Fatalf("step %d: %s (the last build) refused %v messages it cannot read (an intro, a version-5 message)", step, old.c.self.Name, n)
			}
			if v := bs[i].peerVersion(old.c.self.Name); v != ProtocolVersionUnsigned {
				t.Fatalf("step %d: %s hears %s at version %d", step, name, old.c.self.Name, v)
			}
			if bs[i].c.seal.keys.Signs(old.c.self.Name) {
				t.Fatalf("step %d: %s counts %s as sealing", step, name, old.c.self.Name)
			}
		}
	}
	if !everyoneSigns(bs) {
		t.Fatal("not every board seals after the upgrade")
	}
	before := bs[0].refusedOf("unsigned")
	b, err := EncodeVersion(&ReportMsg{Name: "ews3", Runstate: Running, InFlight: 99, PeersHash: bs[0].peersHash()}, ProtocolVersionUnsigned)
	must(t, err)
	inject(t, bs[1], bs[0], b)
	testutil.EventuallyWithin(t, "an unsigned report naming ews3 refused", 5*time.Second, func() bool { return bs[0].refusedOf("unsigned") > before })
	if r := bs[0].report("ews3"); r.InFlight == 99 {
		t.Fatalf("ews1 took the unsigned report naming ews3: %+v", r)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRollbackAfterSealing: a board sealed its gossip, then comes back on
// the last build (a firmware trial rolled back by its A/B slot): a
// follower, and the master (the rollout upgrades it last). Its peers
// refuse its unsigned messages (invariant 11: a name once sealed is not
// taken unsigned on gossip evidence, an insider could forge it) and ask
// the board over TLS whether it seals (when its membership shows no
// version 5, or at its first unsigned message) (askSeals, faked here: TestAskSeals
// covers the handshake). Meanwhile they send it version 4 and full tables,
// which it reads: it follows the master and never makes itself master.
// When its certificate says it runs a build that does not seal, they take
// it back and the cluster settles with it; when the answer says it seals
// (the unsigned messages are someone else's) or none comes, it stays
// refused. Before: they sent it version 5 (the version of its last
// message), it heard no master and made itself master: two masters.
func TestRollbackAfterSealing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		back   int    // the board rolled back
		master string // the master after it
		answer string // what the board's certificate says: "last build", "seals", "" (no answer)
	}{
		{"follower, no answer", 2, "ews1", ""},
		{"master, no answer", 0, "ews2", ""},
		{"follower, it says it seals", 2, "ews1", "seals"},
		{"follower, taken back", 2, "ews1", "last build"},
		{"master, taken back", 0, "ews2", "last build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ca := clusterCA(t, "main")
			peers := loopbackPeers(t, 3)
			// tmax 1 s: the test holds the cluster to one master for 6
			// tmax; at 300 ms, under load, every board took over (make check,
			// seed 1796178222307993336)
			slow := func(c *Config) { c.TMax = time.Second }
			bs := signedBoards(t, peers, ca.ids, slow)
			for i, b := range bs {
				b.local.inflight.Store(int64(i + 1))
			}
			testutil.EventuallyWithin(t, "three sealing boards settled", 10*time.Second, func() bool {
				return settled(bs) && everyoneSigns(bs)
			})
			back := bs[tc.back]
			name := back.c.self.Name
			var others []*board
			asked := make(chan string, 64)
			for i, b := range bs {
				if i == tc.back {
					continue
				}
				others = append(others, b)
				b.c.mu.Lock()
				b.c.seal.askSeals = func(_ context.Context, n, addr string) (bool, error) {
					select {
					case asked <- n + " " + addr:
					default:
					}
					switch {
					case n != name || tc.answer == "":
						return false, fmt.Errorf("no answer from %s", n)
					case tc.answer == "seals":
						return true, nil
					}
					return false, nil
				}
				b.c.mu.Unlock()
			}
			back.c.stop()
			if n := back.refusedOf("unsigned"); n != 0 { // its peers kept its meta when it left
				t.Fatalf("%s, leaving, was sent %v unsigned messages (version 4) by boards it saw seal", name, n)
			}
			back = startLastBuild(t, name, peers, slow)
			back.local.inflight.Store(int64(tc.back + 7))
			bs[tc.back] = back
			testutil.EventuallyWithin(t, "the rolled-back board follows "+tc.master, 10*time.Second, func() bool {
				m, _, ok := back.c.Master()
				return ok && m == tc.master && !back.c.IsMaster()
			})
			// until its join reaches them its peers hold the meta of its
			// sealing run (kept when it left) and may send it a version-5
			// message or two; from then on, nothing it cannot read
			unread := back.refusedOf("unknown")
			if tc.answer != "last build" { // (a quick answer may come before its first message)
				testutil.EventuallyWithin(t, "its peers refuse its unsigned messages", 10*time.Second, func() bool {
					return others[0].refusedOf("unsigned") > 0 && others[1].refusedOf("unsigned") > 0
				})
			}
			select {
			case q := <-asked:
				if n, addr, _ := strings.Cut(q, " "); n != name || addr == "" {
					t.Fatalf("asked %q at %q, want %s at its HTTP address", n, addr, name)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("nobody asked %s whether it seals", name)
			}
			if tc.answer == "last build" {
				testutil.EventuallyWithin(t, "its peers take it back and the cluster settles with it", 10*time.Second, func() bool {
					return !others[0].c.seal.keys.Signs(name) && !others[1].c.seal.keys.Signs(name) && settled(bs)
				})
			}
			// stable: over several tmax, exactly one master, the same
			tick := time.NewTicker(back.c.cfg.Heartbeat)
			defer tick.Stop()
			deadline := time.Now().Add(6 * back.c.cfg.TMax)
			for time.Now().Before(deadline) {
				<-tick.C
				var masters []string
				for _, b := range bs {
					if b.c.IsMaster() {
						masters = append(masters, b.c.self.Name)
					}
				}
				if len(masters) != 1 || masters[0] != tc.master {
					t.Fatalf("masters %v after %s rolled back, want [%s]", masters, name, tc.master)
				}
			}
			if n := back.refusedOf("unknown"); n != unread {
				t.Fatalf("the rolled-back %s was sent %v messages it cannot read (version 5, intros) after it joined", name, n-unread)
			}
			if tc.answer != "last build" {
				for _, o := range others {
					if !o.c.seal.keys.Signs(name) {
						t.Fatalf("%s forgot that %s seals on answer %q: an insider could speak for it unsigned", o.c.self.Name, name, tc.answer)
					}
				}
			}
		})
	}
}
