package rules

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/actuate"
)

// TestRuleKeysUnguessable: a rule's key names neither its time nor its
// event (an operator used to send "rule-0-<date>T<time>-back" first and
// block the turn-back); the same secret gives the same key on another
// board, another secret another key.
func TestRuleKeysUnguessable(t *testing.T) {
	r := at(0, 7*time.Hour+30*time.Minute, Step{Device: "pump1", Action: hal.TurnOn, For: time.Minute})
	name := timerKey(r, t0) + "-back"
	a, b := New(Options{KeySecret: []byte("one")}), New(Options{KeySecret: []byte("one")})
	c, d := New(Options{KeySecret: []byte("two")}), New(Options{})
	k := a.key(r, name)
	if strings.Contains(k, "2026") || strings.Contains(k, "07:") || !strings.HasPrefix(k, "rule-0-") {
		t.Errorf("key %q: want rule-0- and nothing guessable", k)
	}
	if b.key(r, name) != k {
		t.Error("same secret, another key: a new master would run the firing again")
	}
	if c.key(r, name) == k || d.key(r, name) == k {
		t.Error("another secret, the same key")
	}
}

// refuseActor refuses the first n commands (as a 422 would), then runs them.
type refuseActor struct {
	recordActor
	mu      sync.Mutex
	refuse  int
	refused []string // keys refused
}

func (a *refuseActor) Act(ctx context.Context, c actuate.Command) error {
	a.mu.Lock()
	if a.refuse > 0 {
		a.refuse--
		a.refused = append(a.refused, c.Key)
		a.mu.Unlock()
		return &actuate.Error{Status: 422, Msg: "Idempotency-Key was used for another request"}
	}
	a.mu.Unlock()
	return a.recordActor.Act(ctx, c)
}

type report struct {
	tries int
	err   error
}

// TestTurnBackRetriedAndReported: a refused turn-back is sent again with a
// new key until it runs, and each refusal and the end are reported.
func TestTurnBackRetriedAndReported(t *testing.T) {
	rules := []Rule{at(0, 7*time.Hour+30*time.Minute, Step{Device: "pump1", Action: hal.TurnOn, For: time.Minute})}
	clk := clockwork.NewFakeClockAt(t0) // 07:29
	a := &refuseActor{}
	var mu sync.Mutex
	var reports []report
	e := New(Options{Rules: rules, Actor: a, Clock: clk, Logger: testutil.Logger(), KeySecret: testSecret, BackRetryDelay: time.Second,
		Report: func(c actuate.Command, tries int, err error) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, report{tries, err})
		}})
	start(t, e)
	if err := clk.BlockUntilContext(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute) // 07:30: fires
	testutil.Eventually(t, "timer fired", func() bool { return len(a.list()) == 1 })
	a.mu.Lock()
	a.refuse = 2
	a.mu.Unlock()
	if err := clk.BlockUntilContext(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute) // 07:31: the turn-back, refused twice
	for i, d := range []time.Duration{time.Second, 2 * time.Second} {
		testutil.Eventually(t, "a refusal reported", func() bool { mu.Lock(); defer mu.Unlock(); return len(reports) == i+1 })
		if err := clk.BlockUntilContext(context.Background(), 2); err != nil { // the engine's timer and the retry's
			t.Fatal(err)
		}
		clk.Advance(d)
	}
	testutil.Eventually(t, "turned back after two refusals", func() bool { return len(a.list()) == 2 })
	if l := a.list(); l[1] == "pump1 turn_off "+a.refused[0] || !strings.HasPrefix(l[1], "pump1 turn_off rule-0-") {
		t.Errorf("ran %q after refusals of %q: want a new key", l, a.refused)
	}
	testutil.Eventually(t, "the end reported", func() bool { mu.Lock(); defer mu.Unlock(); return len(reports) == 3 })
	mu.Lock()
	defer mu.Unlock()
	var ae *actuate.Error
	if !errors.As(reports[0].err, &ae) || ae.Status != 422 || reports[2].err != nil || reports[2].tries != 3 {
		t.Errorf("reports %+v: want two 422s, then done after 3 tries", reports)
	}
}
