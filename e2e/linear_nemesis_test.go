package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// linNemesis hurts the boards of TestLinearizable from one seed, one fault
// at a time, each followed by a quiet spell of 2 to 4 s:
//   - kill -9 and, 1 to 3 s later, a restart from the board's state_dir,
//     half the time with its clock stepped ([sim] clock_offset up to 3 h
//     either way, or back to none);
//   - a pause (SIGSTOP, SIGCONT 1 to 3 s later);
//   - a clock jump while the board runs (the same offsets, then SIGUSR1:
//     `ews run` reads [sim] clock_offset again);
//   - a partition, where the boards run in network namespaces (linNet), for
//     2 to 6 s, then healed: a minority (1 to (n-1)/2 boards) cut from the
//     rest, the master (as the first board that answers sees it) cut off
//     alone, or a bridge (two sides that do not hear each other and one
//     board that hears both);
//   - a rolling upgrade: each board in turn stopped (SIGTERM) and started
//     on the other build of the binary, the followers in rank order first
//     and the master last, each waited for (ready) before the next, as
//     `ews cluster upgrade` rolls.
//
// The first faults are one of each kind in an order drawn from the seed,
// the rest drawn by weight (kill 3, pause 1, jump 2, partition 3, upgrade
// 1, while upgrades remain). Every event is logged with its time.
type linNemesis struct {
	t         *testing.T
	boards    []*board
	net       *linNet
	bins      [2]string // the two builds a rolling upgrade moves between
	on        []int     // the build each board runs (an index of bins)
	configure func(b *board, offset time.Duration)
	rng       *rand.Rand
	start     time.Time
	upgrades  int // rolling upgrades to run at most (one is the second fault)
	mu        sync.Mutex
	events    []string
	counts    map[string]int // events by kind, for the summary
	steps     int            // restarts with the clock stepped
}

func (n *linNemesis) log(format string, args ...any) {
	line := fmt.Sprintf("%7.2fs ", time.Since(n.start).Seconds()) + fmt.Sprintf(format, args...)
	n.mu.Lock()
	n.events = append(n.events, line)
	n.mu.Unlock()
	n.t.Log("nemesis " + line)
}

func (n *linNemesis) count(kind string) {
	n.mu.Lock()
	if n.counts == nil {
		n.counts = map[string]int{}
	}
	n.counts[kind]++
	n.mu.Unlock()
}

// summary is the events by kind: "kill 4, pause 2, ...".
func (n *linNemesis) summary() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var parts []string
	for _, k := range []string{"kill", "pause", "jump", "partition minority", "partition master", "partition bridge", "upgrade"} {
		parts = append(parts, fmt.Sprintf("%s %d", k, n.counts[k]))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%d restarts with the clock stepped)", n.steps)
}

// between draws a spell of lo to hi.
func (n *linNemesis) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(n.rng.Int64N(int64(hi-lo)+1))
}

// hold waits d or until ctx ends: a spell of the schedule, not a wait for
// a condition. It reports whether the schedule goes on.
func hold(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// run plays faults until ctx ends, then leaves every board running and the
// network whole.
func (n *linNemesis) run(ctx context.Context) {
	if !n.net.partitions() {
		n.log("partitions skipped: the boards run on loopback")
	}
	// the first faults are one of each kind (kill, pause, jump, partition,
	// upgrade), in an order drawn from the seed, so a short run holds
	// every kind; then each is drawn by its weight
	first := []int{0, 1, 2}
	if n.net.partitions() {
		first = append(first, 3)
	}
	if n.upgrades > 0 {
		first = append(first, 4)
	}
	n.rng.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	for k := 0; hold(ctx, n.between(2*time.Second, 4*time.Second)); k++ {
		w := []int{3, 1, 2, 3, 1}
		if !n.net.partitions() {
			w[3] = 0
		}
		if n.upgrades == 0 {
			w[4] = 0
		}
		kind := n.draw(w)
		if k < len(first) {
			kind = first[k]
		}
		switch kind {
		case 0:
			n.kill(ctx)
		case 1:
			n.pause(ctx)
		case 2:
			n.jump()
		case 3:
			n.partition(ctx)
		case 4:
			n.upgrades--
			n.upgrade()
		}
	}
}

// draw picks an index with the weights w.
func (n *linNemesis) draw(w []int) int {
	sum := 0
	for _, x := range w {
		sum += x
	}
	r := n.rng.IntN(sum)
	for i, x := range w {
		if r < x {
			return i
		}
		r -= x
	}
	return len(w) - 1
}

// offset draws a clock offset: up to 3 h either way, whole seconds.
func (n *linNemesis) offset() time.Duration {
	return (time.Duration(n.rng.Int64N(int64(6*time.Hour))) - 3*time.Hour).Round(time.Second)
}

func (n *linNemesis) kill(ctx context.Context) {
	i := n.rng.IntN(len(n.boards))
	b := n.boards[i]
	n.log("kill -9 %s", b.name)
	n.count("kill")
	_ = b.cmd.Process.Signal(syscall.SIGCONT) // a paused board dies too
	b.kill9()
	hold(ctx, n.between(1*time.Second, 3*time.Second))
	var offset time.Duration
	if n.rng.IntN(2) == 0 {
		offset = n.offset()
		n.steps++
	}
	n.configure(b, offset)
	n.log("restart %s, clock_offset %v", b.name, offset)
	n.startOn(i, n.on[i])
}

func (n *linNemesis) pause(ctx context.Context) {
	b := n.boards[n.rng.IntN(len(n.boards))]
	n.log("pause %s (SIGSTOP)", b.name)
	n.count("pause")
	_ = b.cmd.Process.Signal(syscall.SIGSTOP)
	hold(ctx, n.between(1*time.Second, 3*time.Second))
	_ = b.cmd.Process.Signal(syscall.SIGCONT)
	n.log("resume %s (SIGCONT)", b.name)
}

// jump steps a running board's clock: its config names the new offset,
// SIGUSR1 makes it read that again.
func (n *linNemesis) jump() {
	b := n.boards[n.rng.IntN(len(n.boards))]
	offset := n.offset()
	n.configure(b, offset)
	n.log("clock jump %s to clock_offset %v (SIGUSR1)", b.name, offset)
	n.count("jump")
	if err := b.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		n.log("SIGUSR1 to %s: %v", b.name, err)
	}
}

// partition cuts the boards apart in one of three shapes, holds it, heals.
func (n *linNemesis) partition(ctx context.Context) {
	all := make([]int, len(n.boards))
	for i := range all {
		all[i] = i
	}
	n.rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	var pairs [][2]int
	var shape, what string
	switch n.rng.IntN(3) {
	case 0:
		k := 1 + n.rng.IntN(max(1, (len(all)-1)/2))
		pairs, shape = across(all[:k], all[k:]), "minority"
		what = fmt.Sprintf("%s cut from %s", n.names(all[:k]), n.names(all[k:]))
	case 1:
		m := n.master()
		if m < 0 {
			m = all[0]
		}
		rest := slices.DeleteFunc(slices.Clone(all), func(i int) bool { return i == m })
		pairs, shape = across([]int{m}, rest), "master"
		what = fmt.Sprintf("the master %s cut off from %s", n.boards[m].name, n.names(rest))
	default:
		if len(all) < 3 {
			return
		}
		bridge, sides := all[0], all[1:]
		k := 1 + n.rng.IntN(len(sides)-1)
		pairs, shape = across(sides[:k], sides[k:]), "bridge"
		what = fmt.Sprintf("%s and %s apart, %s hears both", n.names(sides[:k]), n.names(sides[k:]), n.boards[bridge].name)
	}
	n.count("partition " + shape)
	n.log("partition (%s): %s", shape, what)
	if err := n.net.split(pairs); err != nil {
		n.t.Errorf("nemesis: %v", err)
	}
	hold(ctx, n.between(2*time.Second, 6*time.Second))
	if err := n.net.heal(); err != nil {
		n.t.Errorf("nemesis: %v", err)
	}
	n.log("healed")
}

// upgrade rolls every board onto the other build: followers in rank order,
// the master last, each stopped gracefully and waited for.
func (n *linNemesis) upgrade() {
	m := n.master()
	var order []int
	for i := range n.boards {
		if i != m {
			order = append(order, i)
		}
	}
	if m >= 0 {
		order = append(order, m)
	}
	n.count("upgrade")
	n.log("rolling upgrade, order %s", n.names(order))
	for _, i := range order {
		b := n.boards[i]
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		stopped(b, 20*time.Second, func() { n.log("%s still running 20s after SIGTERM: kill -9", b.name) })
		n.log("upgrade %s to build %d", b.name, 1-n.on[i])
		n.startOn(i, 1-n.on[i])
	}
	n.log("rolling upgrade done")
}

// stopped waits for b's process to end after a signal; past limit it
// calls late and kills it.
func stopped(b *board, limit time.Duration, late func()) {
	done := make(chan struct{})
	cmd := b.cmd
	go func() { _ = cmd.Wait(); close(done) }()
	tm := time.NewTimer(limit)
	defer tm.Stop()
	select {
	case <-done:
	case <-tm.C:
		late()
		_ = cmd.Process.Kill()
		<-done
	}
}

// startOn starts board i on build k and waits (bounded) until it answers
// /readyz.
func (n *linNemesis) startOn(i, k int) {
	b := n.boards[i]
	n.on[i] = k
	b.start(n.net.t, n.bins[k]) // in its namespace when it has one
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
		resp, err := linQuick.Get("http://" + b.http + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				n.log("%s ready", b.name)
				return
			}
		}
		hold(context.Background(), 100*time.Millisecond) // a poll's period, bounded by end
	}
	n.log("%s not ready within 30s of its start", b.name)
}

// master is the index of the master as the first board that answers sees
// it; -1 when none answers or names one.
func (n *linNemesis) master() int {
	for _, b := range n.boards {
		v, err := b.view()
		if err != nil || v.Master == "" {
			continue
		}
		return slices.IndexFunc(n.boards, func(o *board) bool { return o.name == v.Master })
	}
	return -1
}

func (n *linNemesis) names(idx []int) string {
	s := make([]string, len(idx))
	for k, i := range idx {
		s[k] = n.boards[i].name
	}
	return "{" + strings.Join(s, ",") + "}"
}

// linQuick is the nemesis's own client: a short timeout per poll.
var linQuick = &http.Client{Timeout: time.Second}
