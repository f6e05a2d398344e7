package rules

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/actuate"
)

// recordActor records commands; keys it has seen are answered without
// running again, as the cluster's idempotency does.
type recordActor struct {
	mu   sync.Mutex
	ran  []string // "device action key"
	keys map[string]bool
}

func (a *recordActor) Act(_ context.Context, c actuate.Command) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c.Key != "" && a.keys[c.Key] {
		return nil
	}
	if a.keys == nil {
		a.keys = map[string]bool{}
	}
	a.keys[c.Key] = true
	a.ran = append(a.ran, fmt.Sprintf("%s %s %s", c.Device, c.Kind, c.Key))
	return nil
}

func (a *recordActor) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.ran)
}

// when and at build rules as the boot config's [[rule]] entries map to
// them (the text form is parsed and tested in internal/config).
func when(i int, device, event string, threshold float64, then Step) Rule {
	return Rule{Index: i, When: &Trigger{Device: device, Event: event, Threshold: threshold}, Then: then}
}

func at(i int, hhmm time.Duration, then Step) Rule { return Rule{Index: i, At: hhmm, Then: then} }

func start(t *testing.T, e *Engine) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

var t0 = time.Date(2026, 12, 1, 7, 29, 0, 0, time.Local)

// testSecret stands for the secret the node derives from the cluster key.
var testSecret = []byte("rules test secret")

func TestEventRules(t *testing.T) {
	rules := []Rule{
		when(0, "button1", "pressed", 0, Step{Device: "pump1", Action: hal.Toggle}),
		when(1, "button1", "released", 0, Step{Device: "pump1", Action: hal.Pulse, Pulse: 100 * time.Millisecond}),
		when(2, "temp1", "above", 30, Step{Device: "pump1", Action: hal.TurnOn, For: 5 * time.Minute}),
	}
	clk := clockwork.NewFakeClockAt(t0)
	a := &recordActor{}
	e := New(Options{Rules: rules, Actor: a, Clock: clk, Logger: testutil.Logger(), KeySecret: testSecret,
		Devices: func() []hal.Snapshot {
			return []hal.Snapshot{{Name: "button1", State: hal.StateOff}, {Name: "temp1", State: hal.StateOK, Value: 25.0}, {Name: "pump1", State: hal.StateOff}}
		}})
	start(t, e)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	e.Observe(hal.Snapshot{Name: "button1", State: hal.StateOn, Updated: at(1)})
	e.Observe(hal.Snapshot{Name: "button1", State: hal.StateOn, Updated: at(2)}) // no edge: nothing
	e.Observe(hal.Snapshot{Name: "button1", State: hal.StateOff, Updated: at(3)})
	e.Observe(hal.Snapshot{Name: "temp1", State: hal.StateOK, Value: 29.0, Updated: at(4)})
	e.Observe(hal.Snapshot{Name: "temp1", State: hal.StateOK, Value: 31.0, Updated: at(5)}) // crosses 30
	e.Observe(hal.Snapshot{Name: "temp1", State: hal.StateOK, Value: 32.0, Updated: at(6)}) // stays above: nothing
	want := []string{
		"pump1 toggle " + e.key(rules[0], fmt.Sprintf("rule-0-button1-%d", at(1).UnixNano())),
		"pump1 pulse " + e.key(rules[1], fmt.Sprintf("rule-1-button1-%d", at(3).UnixNano())),
		"pump1 turn_on " + e.key(rules[2], fmt.Sprintf("rule-2-temp1-%d", at(5).UnixNano())),
	}
	testutil.Eventually(t, "three rules fired", func() bool { return len(a.list()) >= 3 })
	got := a.list()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("ran %q, want %q", got, want)
	}
	// "for 5m": turned back 5 minutes later, on the fake clock
	if err := clk.BlockUntilContext(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Minute)
	testutil.Eventually(t, "turned back after 5m", func() bool { return len(a.list()) == 4 })
	if l := a.list(); l[3] != "pump1 turn_off "+e.key(rules[2], fmt.Sprintf("rule-2-temp1-%d-back", at(5).UnixNano())) {
		t.Fatalf("turn-back %q", l[3])
	}
}

func TestTimerFiresDailyAndOnceAcrossTakeover(t *testing.T) {
	rules := []Rule{at(0, 7*time.Hour+30*time.Minute, Step{Device: "pump1", Action: hal.TurnOn, For: 5 * time.Minute})}
	clk := clockwork.NewFakeClockAt(t0) // 07:29
	a := &recordActor{}
	e := New(Options{Rules: rules, Actor: a, Clock: clk, Logger: testutil.Logger(), KeySecret: testSecret})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	if err := clk.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if len(a.list()) != 0 {
		t.Fatalf("fired early: %q", a.list())
	}
	clk.Advance(time.Minute) // 07:30
	testutil.Eventually(t, "timer fired at 07:30", func() bool { return len(a.list()) == 1 })
	if l := a.list(); l[0] != "pump1 turn_on "+e.key(rules[0], "rule-0-2026-12-01T07:30:00") {
		t.Fatalf("ran %q", l)
	}
	// The master dies at 07:30:20; a new one starts at 07:30:40 with the
	// cluster's memory of keys (the same actor): it fires again within
	// the catch-up, is answered from memory, and keeps the turn-back.
	clk.Advance(20 * time.Second)
	cancel()
	<-done
	clk.Advance(20 * time.Second)
	e2 := New(Options{Rules: rules, Actor: a, Clock: clk, Logger: testutil.Logger(), KeySecret: testSecret})
	start(t, e2)
	if err := clk.BlockUntilContext(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(4*time.Minute + 20*time.Second) // 07:35
	testutil.Eventually(t, "turned back at 07:35 by the new master", func() bool { return len(a.list()) == 2 })
	if l := a.list(); l[1] != "pump1 turn_off "+e.key(rules[0], "rule-0-2026-12-01T07:30:00-back") {
		t.Fatalf("ran %q", l)
	}
	// and the next day again
	clk.Advance(24*time.Hour - 5*time.Minute)
	testutil.Eventually(t, "fired the next day", func() bool { return len(a.list()) == 3 })
	if l := a.list(); l[2] != "pump1 turn_on "+e.key(rules[0], "rule-0-2026-12-02T07:30:00") {
		t.Fatalf("ran %q", l)
	}
}

func TestStartRebuildsTurnBacks(t *testing.T) {
	rules := []Rule{
		at(0, 7*time.Hour, Step{Device: "pump1", Action: hal.TurnOn, For: time.Hour}),
		when(1, "button1", "pressed", 0, Step{Device: "pump1", Action: hal.TurnOn, For: 10 * time.Minute}),
	}
	clk := clockwork.NewFakeClockAt(t0) // 07:29: the timer fired 29 min ago, past catch-up
	a := &recordActor{}
	e := New(Options{Rules: rules, Actor: a, Clock: clk, Logger: testutil.Logger(), KeySecret: testSecret,
		Devices: func() []hal.Snapshot { return []hal.Snapshot{{Name: "pump1", State: hal.StateOn}} }})
	start(t, e)
	if err := clk.BlockUntilContext(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if len(a.list()) != 0 {
		t.Fatalf("a timer past catch-up fired again: %q", a.list())
	}
	clk.Advance(10 * time.Minute) // the event rule's turn-back, at most 10m after the start
	testutil.Eventually(t, "event rule's turn-back", func() bool { return len(a.list()) == 1 })
	clk.Advance(21 * time.Minute) // 08:00: the timer's turn-back
	testutil.Eventually(t, "timer's turn-back", func() bool { return len(a.list()) == 2 })
	if l := a.list(); l[0] != "pump1 turn_off " || l[1] != "pump1 turn_off "+e.key(rules[0], "rule-0-2026-12-01T07:00:00-back") {
		t.Fatalf("ran %q", l)
	}
}
