// Package rules runs the [[rule]] automations on the master: device events and daily timers whose actions enter the same queue as HTTP.
package rules

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/actuate"
)

// Options configure an Engine.
type Options struct {
	Rules   []Rule
	Actor   actuate.Actor
	Devices func() []hal.Snapshot // every device of the cluster now
	Clock   clockwork.Clock       // default the real clock; its location is the timers' time zone
	Logger  *slog.Logger
	// CatchUp is how late a timer still fires when the engine starts after
	// its time (a takeover during the firing); the Idempotency-Key of the
	// day keeps it from running twice. Default 1 minute.
	CatchUp time.Duration
	// ActionTimeout bounds one action; default 30s.
	ActionTimeout time.Duration
	// KeySecret keys the rules' Idempotency-Keys (HMAC): the same on
	// every board, so a new master's keys are the old one's, and secret.
	// Nil: a random secret of this engine.
	KeySecret []byte
	// BackRetries is how many times a refused or failed turn-back is sent
	// again, BackRetryDelay apart at first, then twice as long each time;
	// defaults 4 and 2s.
	BackRetries    int
	BackRetryDelay time.Duration
	// Report is told of a turn-back that was refused or failed (err) and
	// of how it ended (sent again and done: err nil, after tries); the node
	// writes it to the audit log. Nil: logged only. Must be quick.
	Report func(c actuate.Command, tries int, err error)
}

// Engine runs the rules while this board is master. Create it with New;
// Run until the context ends; Observe every device change.
type Engine struct {
	o      Options
	secret []byte // keys the Idempotency-Keys (keys.go)
	log    *slog.Logger
	events chan hal.Snapshot
	acts   sync.WaitGroup

	// Run's goroutine only:
	last  map[string]hal.Snapshot
	next  map[int]time.Time // timer rule index -> next firing
	backs []back
}

// back is a pending turn-back of a "for DURATION" action.
type back struct {
	at  time.Time
	cmd actuate.Command
}

// New builds an engine.
func New(o Options) *Engine {
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CatchUp <= 0 {
		o.CatchUp = time.Minute
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = 30 * time.Second
	}
	if o.BackRetries <= 0 {
		o.BackRetries = 4
	}
	if o.BackRetryDelay <= 0 {
		o.BackRetryDelay = 2 * time.Second
	}
	return &Engine{o: o, secret: keySecret(o.KeySecret), log: o.Logger.With("component", "rules"), events: make(chan hal.Snapshot, 256),
		last: map[string]hal.Snapshot{}, next: map[int]time.Time{}}
}

// Observe hands the engine a device's new state. It never blocks: when the
// engine lags 256 changes behind, the change is dropped with a warning.
func (e *Engine) Observe(s hal.Snapshot) {
	select {
	case e.events <- s:
	default:
		e.log.Warn("rules: engine behind, device change dropped", "device", s.Name)
	}
}

// Run evaluates rules until ctx ends, then waits for the actions it
// started and returns nil.
func (e *Engine) Run(ctx context.Context) error {
	defer e.acts.Wait()
	e.start(ctx)
	for {
		var tc <-chan time.Time
		var t clockwork.Timer
		if at, ok := e.earliest(); ok {
			t = e.o.Clock.NewTimer(max(at.Sub(e.o.Clock.Now()), 0))
			tc = t.Chan()
		}
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			return nil
		case s := <-e.events:
			e.observe(ctx, s)
		case <-tc:
			e.due(ctx, e.o.Clock.Now())
		}
		if t != nil {
			t.Stop()
		}
	}
}

// start learns the devices' states, schedules the timers, fires a timer
// that was due at most CatchUp ago, and rebuilds the turn-backs an old
// master left pending (see docs/NOTES.md, "MQTT and automations").
func (e *Engine) start(ctx context.Context) {
	now := e.o.Clock.Now()
	var devs []hal.Snapshot
	if e.o.Devices != nil {
		devs = e.o.Devices()
	}
	for _, s := range devs {
		e.last[s.Name] = s
	}
	for _, r := range e.o.Rules {
		if r.When != nil {
			if r.Then.For > 0 && r.Then.Action != hal.Toggle && e.left(r.Then) {
				// An event rule's turn-back is not known to a new master: the
				// device is in the state the rule leaves, so turn it back at
				// most For from now (late rather than never).
				e.addBack(now.Add(r.Then.For), e.command(r, r.Then.Back(), ""))
			}
			continue
		}
		today := dayAt(now, r.At)
		prev := today
		if today.After(now) {
			prev = dayAt(now.AddDate(0, 0, -1), r.At)
		}
		if now.Sub(prev) <= e.o.CatchUp {
			e.fire(ctx, r, prev)
		} else if r.Then.For > 0 && now.Before(prev.Add(r.Then.For)) {
			// fired by the old master; its turn-back is still due
			e.addBack(prev.Add(r.Then.For), e.command(r, r.Then.Back(), e.key(r, timerKey(r, prev)+"-back")))
		}
		e.next[r.Index] = nextAt(now, r.At)
	}
}

// left reports whether the device is in the state step s leaves it in.
func (e *Engine) left(s Step) bool {
	d, ok := e.last[s.Device]
	if !ok {
		return false
	}
	switch s.Action {
	case hal.TurnOn, hal.Set:
		return d.State == hal.StateOn
	case hal.TurnOff:
		return d.State == hal.StateOff
	}
	return false
}

func (e *Engine) earliest() (time.Time, bool) {
	var at time.Time
	for _, t := range e.next {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	for _, b := range e.backs {
		if at.IsZero() || b.at.Before(at) {
			at = b.at
		}
	}
	return at, !at.IsZero()
}

func (e *Engine) due(ctx context.Context, now time.Time) {
	for _, r := range e.o.Rules {
		at, ok := e.next[r.Index]
		if !ok || at.After(now) {
			continue
		}
		e.fire(ctx, r, at)
		e.next[r.Index] = nextAt(now, r.At)
	}
	kept := e.backs[:0]
	for _, b := range e.backs {
		if b.at.After(now) {
			kept = append(kept, b)
			continue
		}
		e.runBack(ctx, b.cmd)
	}
	e.backs = kept
}

// observe fires every event rule the change of s matches.
func (e *Engine) observe(ctx context.Context, s hal.Snapshot) {
	prev, seen := e.last[s.Name]
	e.last[s.Name] = s
	if !seen {
		return
	}
	for _, r := range e.o.Rules {
		if r.When == nil || r.When.Device != s.Name || !matches(*r.When, prev, s) {
			continue
		}
		// one key per event: the device's update time names it
		name := fmt.Sprintf("rule-%d-%s-%d", r.Index, s.Name, s.Updated.UnixNano())
		e.log.Info("rules: rule fired", "rule", r.Index, "when", r.When.Device+" "+r.When.Event)
		e.run(ctx, e.command(r, r.Then.Action, e.key(r, name)))
		if r.Then.For > 0 {
			e.addBack(e.o.Clock.Now().Add(r.Then.For), e.command(r, r.Then.Back(), e.key(r, name+"-back")))
		}
	}
}

// matches reports whether the change prev -> s is the trigger's event.
func matches(t Trigger, prev, s hal.Snapshot) bool {
	switch t.Event {
	case "pressed", "on":
		return prev.State != hal.StateOn && s.State == hal.StateOn
	case "released", "off":
		return prev.State == hal.StateOn && s.State == hal.StateOff
	case "changed":
		return prev.State != s.State || fmt.Sprint(prev.Value) != fmt.Sprint(s.Value)
	}
	pv, ok1 := prev.Value.(float64)
	v, ok2 := s.Value.(float64)
	if !ok1 || !ok2 {
		return false
	}
	if t.Event == "above" {
		return pv <= t.Threshold && v > t.Threshold
	}
	return pv >= t.Threshold && v < t.Threshold
}

// fire runs timer rule r for its firing at.
func (e *Engine) fire(ctx context.Context, r Rule, at time.Time) {
	name := timerKey(r, at)
	e.log.Info("rules: timer fired", "rule", r.Index, "at", at.Format("2006-01-02T15:04:05"))
	e.run(ctx, e.command(r, r.Then.Action, e.key(r, name)))
	if r.Then.For > 0 {
		e.addBack(at.Add(r.Then.For), e.command(r, r.Then.Back(), e.key(r, name+"-back")))
	}
}

// timerKey names one firing of a timer, the same on every board: a new
// master that fires it again is answered from the cluster's memory (its
// Idempotency-Key is Engine.key of it).
func timerKey(r Rule, at time.Time) string {
	return fmt.Sprintf("rule-%d-%s", r.Index, at.Format("2006-01-02T15:04:05"))
}

func (e *Engine) addBack(at time.Time, c actuate.Command) { e.backs = append(e.backs, back{at, c}) }

func (e *Engine) command(r Rule, k hal.Kind, key string) actuate.Command {
	return actuate.Command{Device: r.Then.Device, Kind: k, Value: r.Then.Value, Pulse: r.Then.Pulse, Key: key,
		Origin: fmt.Sprintf("rule-%d", r.Index)}
}

// run sends c in the background; Run waits for it before it returns.
func (e *Engine) run(ctx context.Context, c actuate.Command) {
	e.acts.Add(1)
	go func() {
		defer e.acts.Done()
		defer func() {
			if p := recover(); p != nil {
				e.log.Error("rules: action panicked", "origin", c.Origin, "panic", p)
			}
		}()
		ctx, cancel := context.WithTimeout(ctx, e.o.ActionTimeout)
		defer cancel()
		if err := e.o.Actor.Act(ctx, c); err != nil {
			e.log.Warn("rules: action refused", "origin", c.Origin, "device", c.Device, "action", c.Kind.String(), "err", err)
			return
		}
		e.log.Info("rules: action done", "origin", c.Origin, "device", c.Device, "action", c.Kind.String())
	}()
}

// dayAt is the time of day tod on t's date, in t's location.
func dayAt(t time.Time, tod time.Duration) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, int(tod/time.Hour), int(tod%time.Hour/time.Minute), int(tod%time.Minute/time.Second), 0, t.Location())
}

// nextAt is the first time of day tod after now.
func nextAt(now time.Time, tod time.Duration) time.Time {
	t := dayAt(now, tod)
	if !t.After(now) {
		t = dayAt(now.AddDate(0, 0, 1), tod)
	}
	return t
}

// runBack sends turn-back c in the background and checks its answer: a
// refused or failed one is sent again (BackRetries times, the delay
// doubling), and reported each time and at the end (docs/NOTES.md "Rules
// cannot be blocked"). A retry of an action whose effect is a state
// (turn_on, turn_off) gets a new key, so an answer kept for the old one is
// not replayed; a toggle keeps its key, so it never runs twice.
func (e *Engine) runBack(ctx context.Context, c actuate.Command) {
	e.acts.Add(1)
	go func() {
		defer e.acts.Done()
		defer func() {
			if p := recover(); p != nil {
				e.log.Error("rules: turn-back panicked", "origin", c.Origin, "panic", p)
			}
		}()
		delay := e.o.BackRetryDelay
		for try := 1; ; try++ {
			err := e.act(ctx, c)
			if err == nil {
				if try > 1 {
					e.log.Info("rules: turn-back done after a retry", "origin", c.Origin, "device", c.Device, "action", c.Kind.String(), "tries", try)
					e.report(c, try, nil)
				}
				return
			}
			e.log.Warn("rules: turn-back refused", "origin", c.Origin, "device", c.Device, "action", c.Kind.String(), "try", try, "err", err)
			e.report(c, try, err)
			if try > e.o.BackRetries || ctx.Err() != nil {
				e.log.Error("rules: turn-back given up: the device may stay as the rule left it", "origin", c.Origin, "device", c.Device, "action", c.Kind.String(), "tries", try)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-e.o.Clock.After(delay):
			}
			delay *= 2
			if c.Kind != hal.Toggle && c.Kind != hal.Pulse {
				c.Key = e.keyFor(c.Origin, fmt.Sprintf("%s-retry-%d", c.Key, try))
			}
		}
	}()
}

// act sends c once, bounded by ActionTimeout.
func (e *Engine) act(ctx context.Context, c actuate.Command) error {
	ctx, cancel := context.WithTimeout(ctx, e.o.ActionTimeout)
	defer cancel()
	return e.o.Actor.Act(ctx, c)
}

func (e *Engine) report(c actuate.Command, tries int, err error) {
	if e.o.Report != nil {
		e.o.Report(c, tries, err)
	}
}
