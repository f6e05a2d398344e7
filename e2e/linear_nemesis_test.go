package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"
)

// linNemesis hurts the boards of TestLinearizable from one seed, one
// board at a time (the majority of the durable log's voters stays up):
// kill -9 and a restart from the board's state_dir, half the time with
// its clock stepped ([sim] clock_offset up to 3 h either way), or a pause
// (SIGSTOP, then SIGCONT), each followed by a quiet spell. Every event is
// logged with its time.
type linNemesis struct {
	t         *testing.T
	boards    []*board
	bin       string
	configure func(b *board, offset time.Duration)
	rng       *rand.Rand
	start     time.Time
	mu        sync.Mutex
	events    []string
	kills     int
	steps     int // restarts with the clock stepped
	pauses    int
}

func (n *linNemesis) log(format string, args ...any) {
	line := fmt.Sprintf("%7.2fs ", time.Since(n.start).Seconds()) + fmt.Sprintf(format, args...)
	n.mu.Lock()
	n.events = append(n.events, line)
	n.mu.Unlock()
	n.t.Log("nemesis " + line)
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

// run plays faults until ctx ends, then leaves every board running.
func (n *linNemesis) run(ctx context.Context) {
	for hold(ctx, n.between(2*time.Second, 4*time.Second)) {
		i := n.rng.IntN(len(n.boards))
		b := n.boards[i]
		if n.rng.IntN(3) < 2 {
			n.log("kill -9 %s", b.name)
			n.kills++
			b.kill9()
			hold(ctx, n.between(1*time.Second, 3*time.Second))
			n.restart(b)
			continue
		}
		n.log("pause %s (SIGSTOP)", b.name)
		n.pauses++
		_ = b.cmd.Process.Signal(syscall.SIGSTOP)
		hold(ctx, n.between(1*time.Second, 3*time.Second))
		_ = b.cmd.Process.Signal(syscall.SIGCONT)
		n.log("resume %s (SIGCONT)", b.name)
	}
}

// restart starts b again from its config and state_dir and waits (bounded)
// until it answers /readyz.
func (n *linNemesis) restart(b *board) {
	var offset time.Duration
	if n.rng.IntN(2) == 0 {
		offset = time.Duration(n.rng.Int64N(int64(6*time.Hour))) - 3*time.Hour
		offset = offset.Round(time.Second)
		n.steps++
	}
	n.configure(b, offset)
	n.log("restart %s, clock_offset %v", b.name, offset)
	b.start(n.t, n.bin)
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
	n.log("%s not ready within 30s of its restart", b.name)
}

// linQuick is the nemesis's own client: a short timeout per poll.
var linQuick = &http.Client{Timeout: time.Second}
