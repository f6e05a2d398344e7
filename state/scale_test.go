package state

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// scaleTiming is DefaultConfig's timing with the tick Cluster derives
// from it (heartbeat/4).
var scaleTiming = Timing{Heartbeat: 100 * time.Millisecond, TMax: time.Second, TThreshold: 500 * time.Millisecond, Tick: 25 * time.Millisecond}

// scaleResult is one cluster size's figures from scaleRun.
type scaleResult struct {
	boards      int
	tableBytes  int           // the master's full table, encoded and sealed (stats included when they fit)
	reachP50    time.Duration // a board's change until every board's view shows it
	reachP99    time.Duration
	takeover    []time.Duration // master crash until every live board follows one new master
	idleBps     float64         // bytes/s the master sends at idle (before encryption)
	idlePps     float64         // its packets/s at idle
	loadBps     float64         // bytes/s it sends at dispatchRate
	cpuPer1000  time.Duration   // master thread CPU per 1,000 dispatches (protocol only)
	fitsPacket  bool            // tableBytes <= MaxPacket
	dispatchHz  int
	changesSeen int
	relayed     bool          // the cluster relays (relay.go)
	maxUDP      int           // the largest UDP packet any board sent, as on the wire
	idleAllBps  float64       // bytes/s every board together sends at idle
	idleTCPBps  float64       // of the master's idle sending, over TCP (full tables)
	settle      time.Duration // after a takeover: until every board holds the new master's table with every live board up (max)
}

// scaleLoss is the share of UDP packets the simulation loses.
const scaleLoss = 0.01

// dispatchRate is the simulated dispatch rate of the load phase: every
// dispatch raises a board's linknum for serviceTime.
const (
	dispatchRate = 400 // per second, spread over all boards
	serviceTime  = 50 * time.Millisecond
)

// scaleRun simulates n boards (in memory, fake clock, every message
// through Encode/Decode, one tick per hop, 1 % of UDP packets lost, the
// MTU enforced; relaynet_test.go for a relayed cluster): idle traffic, the
// time a change takes to reach every board, traffic and master CPU under
// dispatch load, and takeovers.
func scaleRun(t *testing.T, n int) scaleResult {
	runtime.LockOSThread() // threadCPU measures this goroutine's thread
	defer runtime.UnlockOSThread()
	rng := rand.New(rand.NewPCG(uint64(n), 17))
	s := newSimNet(t, n, scaleTiming)
	s.loss = scaleLoss
	names := make([]string, n)
	for i, nd := range s.nodes {
		names[i] = nd.name
		nd.load = WireLoad{CPU: 250, Mem: 500, Net: 10, Disk: 5}
	}
	s.start(names...)
	s.runUntil("ews1 master", 3*scaleTiming.TMax, func() bool { return s.agreed("ews1", 1) })
	s.runUntil("the table everywhere", 10*scaleTiming.TMax, s.settled)
	s.run(2 * time.Second) // gossip passes the first rows on for a while yet: idle is after
	res := scaleResult{boards: n, dispatchHz: dispatchRate, relayed: s.nodes[0].e.Relay}

	// idle: 5 s
	b0, p0, tcp0, all0 := s.bytes["ews1"], s.sentBy("ews1"), s.tcp["ews1"], s.allBytes()
	const idle = 5 * time.Second
	s.run(idle)
	res.idleBps = float64(s.bytes["ews1"]-b0) / idle.Seconds()
	res.idlePps = float64(s.sentBy("ews1")-p0) / idle.Seconds()
	res.idleTCPBps = float64(s.tcp["ews1"]-tcp0) / idle.Seconds()
	res.idleAllBps = float64(s.allBytes()-all0) / idle.Seconds()

	// a change reaches every board: 40 changes at random boards and phases
	var reach []time.Duration
	for k := range 40 {
		s.run(time.Duration(rng.IntN(8)) * scaleTiming.Tick)
		b := s.nodes[1+rng.IntN(n-1)]
		b.inFlight = uint32(k%3) + 1 // from 0, where the last change left it
		want := int(b.inFlight)
		reach = append(reach, s.runUntil("the change everywhere", 3*scaleTiming.TMax, func() bool { return s.everyoneSees(b.name, want) }))
		b.inFlight = 0
		s.runUntil("back to 0 everywhere", 3*scaleTiming.TMax, func() bool { return s.everyoneSees(b.name, 0) })
	}
	slices.Sort(reach)
	res.reachP50, res.reachP99 = reach[len(reach)/2], reach[len(reach)*99/100]
	res.changesSeen = len(reach)

	// load: dispatchRate dispatches/s for 5 s, master thread CPU measured
	type job struct {
		node *simNode
		done time.Time
	}
	var jobs []job
	s.cpu = map[string]time.Duration{}
	b0 = s.bytes["ews1"]
	dispatched, carry := 0, 0.0
	const busy = 5 * time.Second
	for end := s.now.Add(busy); s.now.Before(end); {
		carry += dispatchRate * scaleTiming.Tick.Seconds()
		for ; carry >= 1; carry-- {
			nd := s.nodes[rng.IntN(n)]
			nd.inFlight++
			jobs = append(jobs, job{nd, s.now.Add(serviceTime)})
			dispatched++
		}
		jobs = slices.DeleteFunc(jobs, func(j job) bool {
			if !j.done.After(s.now) {
				j.node.inFlight--
				return true
			}
			return false
		})
		s.step()
	}
	res.loadBps = float64(s.bytes["ews1"]-b0) / busy.Seconds()
	res.cpuPer1000 = s.cpu["ews1"] * 1000 / time.Duration(dispatched)
	s.cpu = nil
	for _, j := range jobs {
		j.node.inFlight--
	}
	t0, _ := s.node("ews1").e.Table()
	if b, err := Encode(&t0); err == nil {
		// as sealed on the wire (invariant 11): a sequence number of a
		// day's run (3 bytes) and the tag, which Encode leaves out
		res.tableBytes = len(b) + 3 + tagLen
	}
	res.fitsPacket = res.tableBytes <= MaxPacket

	// takeovers: crash the master at 3 phases of its heartbeat, restart it
	for k := range 3 {
		s.run(2*scaleTiming.Heartbeat + time.Duration(k)*scaleTiming.Tick)
		master := s.masters()[0]
		name, _, _ := strings.Cut(master, "@")
		_, epoch := s.node(name).e.Master()
		s.kill(name)
		var next string
		took := s.runUntil("a new master", 3*scaleTiming.TMax, func() bool {
			m := s.masters()
			if len(m) != 1 {
				return false
			}
			next, _, _ = strings.Cut(m[0], "@")
			return s.agreed(next, s.node(next).e.Epoch()) && s.node(next).e.Epoch() > epoch
		})
		res.takeover = append(res.takeover, took)
		res.settle = max(res.settle, took+s.runUntil("the new table everywhere", 10*scaleTiming.TMax, s.settledUp))
		s.start(name)
		s.runUntil("the restarted board follows", 3*scaleTiming.TMax, func() bool { return s.agreed(next, s.node(next).e.Epoch()) })
		s.runUntil("the restarted board holds the table", 10*scaleTiming.TMax, s.settled)
	}
	res.maxUDP = s.maxUDP
	return res
}

// allBytes is what every board sent so far.
func (s *simNet) allBytes() int {
	sum := 0
	for _, b := range s.bytes {
		sum += b
	}
	return sum
}

// settledUp is settled with every live board up in the master's table:
// after a takeover, the new master has every board's report and every
// board holds the rows it made of them.
func (s *simNet) settledUp() bool {
	if !s.settled() {
		return false
	}
	m := s.masters()
	name, _, _ := strings.Cut(m[0], "@")
	t, _ := s.node(name).e.Table()
	for _, n := range s.nodes {
		if n.up && (int(n.e.self.Rank) >= len(t.Rows) || t.Rows[n.e.self.Rank].Runstate == Down) {
			return false
		}
	}
	return true
}

// settled reports whether every live board holds the master's table as it
// last sent it (rows and version: TableHash).
func (s *simNet) settled() bool {
	m := s.masters()
	if len(m) != 1 {
		return false
	}
	name, _, _ := strings.Cut(m[0], "@")
	mt, _ := s.node(name).e.Table()
	want := TableHash(&mt)
	for _, n := range s.nodes {
		if n.up && n.name != name {
			if t, _ := n.e.Table(); t.Version != mt.Version || TableHash(&t) != want {
				return false
			}
		}
	}
	return true
}

// sentBy counts the messages name sent so far.
func (s *simNet) sentBy(name string) int { return s.packets[name] }

// everyoneSees reports whether every live board's view has board at linknum.
func (s *simNet) everyoneSees(board string, linknum int) bool {
	r := s.node(board).e.self.Rank
	for _, nd := range s.nodes {
		if !nd.up {
			continue
		}
		if nd.e.IsMaster() {
			if s.row(nd.name, board).Linknum != linknum {
				return false
			}
			continue
		}
		if t, _ := nd.e.Table(); r >= len(t.Rows) || int(t.Rows[r].Linknum) != linknum {
			return false
		}
	}
	return true
}

// threadCPU is the CPU time of the calling OS thread (lock it first).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// scaleSizes are the sizes TestScale runs: 8 and 32 boards (8 with
// -short); EWS_SCALE=N adds those of 64, 128, 256, 512 and 1,024 up to N
// (EWS_SCALE=1, or any word: all of them).
func scaleSizes() []int {
	sizes := []int{8, 32}
	env := os.Getenv("EWS_SCALE")
	if env == "" {
		if testing.Short() {
			sizes = sizes[:1]
		}
		return sizes
	}
	top, err := strconv.Atoi(env)
	if err != nil || top < 64 {
		top = 1024
	}
	for _, n := range []int{64, 128, 256, 512, 1024} {
		if n <= top {
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// TestScale runs the simulation (scaleRun) at scaleSizes and prints the
// table of docs/BENCHMARKS.md; EWS_SCALE_PLOT=file.png draws it. The
// checks are the protocol's promises in simulated time, at 1 % loss:
// every change reaches every board within 500 ms (p99), a takeover within
// tmax and two heartbeats, no UDP packet over the MTU, the master's idle
// sending at most 50 KB/s, and up to 32 boards the table fits one packet
// (invariant 8).
func TestScale(t *testing.T) {
	var results []scaleResult
	for _, n := range scaleSizes() {
		res := scaleRun(t, n)
		results = append(results, res)
		if limit := 500 * time.Millisecond; res.reachP99 > limit {
			t.Errorf("%d boards: a change took %v (p99) to reach every board, want <= %v", n, res.reachP99, limit)
		}
		if limit := scaleTiming.TMax + 2*scaleTiming.Heartbeat; slices.Max(res.takeover) > limit {
			t.Errorf("%d boards: takeovers %v, want each <= %v", n, res.takeover, limit)
		}
		if n <= 32 && !res.fitsPacket {
			t.Errorf("%d boards: the table is %d bytes, over one packet (%d, invariant 8)", n, res.tableBytes, MaxPacket)
		}
		if res.maxUDP > MaxPacket {
			t.Errorf("%d boards: a UDP packet of %d bytes, over the MTU (%d)", n, res.maxUDP, MaxPacket)
		}
		if limit := 50e3; res.idleBps > limit {
			t.Errorf("%d boards: the master sends %.0f B/s at idle, want <= %.0f", n, res.idleBps, limit)
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "| boards | table bytes (one packet?) | change reaches every board p50 / p99 | takeover (3 crashes) max | master sends at idle | master sends at %d dispatches/s | master protocol CPU per 1,000 dispatches | largest UDP packet | every board together at idle | after a takeover, every board holds a table with every live board up |\n|---|---|---|---|---|---|---|---|---|---|\n", dispatchRate)
	for _, r := range results {
		fits := "yes"
		if r.relayed {
			fits = "no: relayed, deltas by gossip, full table over TCP"
		} else if !r.fitsPacket {
			fits = fmt.Sprintf("no, %d packets' worth", (r.tableBytes+MaxPacket-1)/MaxPacket)
		}
		fmt.Fprintf(&out, "| %d | %d (%s) | %v / %v | %v | %.1f KB/s in %.0f packets/s (TCP %.1f KB/s) | %.1f KB/s | %v | %d B | %.0f KB/s | %v |\n",
			r.boards, r.tableBytes, fits, r.reachP50, r.reachP99, slices.Max(r.takeover),
			r.idleBps/1000, r.idlePps, r.idleTCPBps/1000, r.loadBps/1000, r.cpuPer1000.Round(time.Microsecond),
			r.maxUDP, r.idleAllBps/1000, r.settle)
	}
	t.Log("\n" + out.String())
	if path := os.Getenv("EWS_SCALE_PLOT"); path != "" {
		if err := plotScale(results, path); err != nil {
			t.Fatal(err)
		}
		t.Logf("plot written to %s", path)
	}
}
