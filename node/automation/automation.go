//go:build !lite

package automation

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"sync"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/node/actuate"
	"github.com/ews-firmware/ews/node/mqtt"
	"github.com/ews-firmware/ews/node/rules"
	"github.com/ews-firmware/ews/state"
)

// Automation runs the MQTT bridge and the [[rule]] engine while this board
// is master, so both survive the death of any board: the next master starts
// them again. Their commands enter the node's own front door (actuate.Door)
// and so the same classes, queue, pinning and idempotency as HTTP.
//
// It is a component of the board's lifecycle: Run starts and stops the pair
// as master (start) and stop ask, one pair at a time (an old MQTT session
// ends before a new one begins); nothing runs before Run.
type Automation struct {
	log    *slog.Logger
	kick   chan struct{} // start, stop or reconfigure was asked
	door   http.Handler  // the node's whole HTTP surface
	source source        // what the bridge publishes and the engine watches
	tls    *tls.Config   // this board's TLS client config; nil with TLS off
	report func(c actuate.Command, tries int, err error)

	mu      sync.Mutex
	want    bool           // this board is master
	gen     uint64         // counts reconfigure: a pair of an older one is replaced
	bridge  *mqtt.Options  // a new pair's bridge; nil without [mqtt]
	engine  *rules.Options // a new pair's engine; nil without [[rule]]
	running *mqtt.Bridge   // the pair running now (nil when none) ...
	rules   *rules.Engine
}

// New builds the bridge and the engine of o.Config; without [mqtt] and
// [[rule]] it runs nothing until a version of the configuration store
// brings them (Reconfigure).
func New(o Options) (*Automation, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	a := &Automation{log: o.Logger, kick: make(chan struct{}, 1), door: o.Door, source: source{o.Devices, o.Boards}, tls: o.TLS}
	var err error
	a.bridge, a.engine, err = a.build(o.Config)
	return a, err
}

// build makes a pair's options from c's [mqtt] and [[rule]]s.
func (a *Automation) build(c Config) (*mqtt.Options, *rules.Options, error) {
	if !c.On {
		return nil, nil, nil
	}
	actor := actuate.NewDoor(a.door, c.Token)
	var bridge *mqtt.Options
	var engine *rules.Options
	if c.MQTT != nil {
		o := *c.MQTT
		if c.TLS != nil {
			tc, err := mqtt.ClientTLS(*c.TLS, a.tls)
			if err != nil {
				key := "mqtt.ca_file"
				if fe := (*mqtt.FileError)(nil); errors.As(err, &fe) {
					key = "mqtt." + fe.Key
				}
				if c.Cite != nil {
					err = c.Cite(key, err)
				}
				return nil, nil, err
			}
			o.TLS = tc
		}
		o.Version, o.Source, o.Actor, o.Logger = buildinfo.Version, a.source, actor, a.log
		bridge = &o
	}
	if len(c.Rules) > 0 {
		engine = &rules.Options{Rules: c.Rules, Actor: actor, Devices: a.source.devices, Logger: a.log, Clock: c.Clock, KeySecret: c.KeySecret, Report: a.report}
	}
	return bridge, engine, nil
}

// Reconfigure takes c's [mqtt] and [[rule]]s (a new version of the
// configuration store): a running pair is replaced by one built from them
// (an MQTT session ends before the next begins). Nil-safe.
func (a *Automation) Reconfigure(c Config) error {
	if a == nil {
		return nil
	}
	bridge, engine, err := a.build(c)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.bridge, a.engine = bridge, engine
	a.gen++
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
	return nil
}

// OnTurnBack tells fn of the rules' refused turn-backs and how they ended
// (rules.Options.Report). Before Run; nil-safe.
func (a *Automation) OnTurnBack(fn func(c actuate.Command, tries int, err error)) {
	if a == nil {
		return
	}
	a.report = fn
	if a.engine != nil {
		a.engine.Report = fn
	}
}

// Start asks Run for the pair (this board became master). Never blocks.
func (a *Automation) Start() { a.set(true) }

// Stop asks Run to end the pair (this board is no longer master).
func (a *Automation) Stop() { a.set(false) }

func (a *Automation) set(want bool) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.want = want
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// Run runs the pair while Start was the last ask, until ctx ends; it
// returns nil once the bridge has disconnected and the engine's actions
// have returned.
func (a *Automation) Run(ctx context.Context) error {
	var p *pair // running now; nil when none
	end := func() {
		if p == nil {
			return
		}
		a.mu.Lock()
		a.running, a.rules = nil, nil // no more observe or poke
		a.mu.Unlock()
		p.cancel()
		<-p.done
		if p.some {
			a.log.Info("automation: stopped")
		}
		p = nil
	}
	defer end()
	for {
		a.mu.Lock()
		want, gen := a.want, a.gen
		a.mu.Unlock()
		if p != nil && p.gen != gen { // reconfigured: the old pair ends first
			end()
		}
		switch {
		case want && p == nil:
			p = a.runPair(ctx)
		case !want:
			end()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-a.kick:
		}
	}
}

// pair is a running bridge and engine.
type pair struct {
	gen    uint64 // the reconfigure it was built after
	some   bool   // it runs a bridge or an engine
	cancel context.CancelFunc
	done   chan struct{} // closed when both have returned
}

// runPair starts a new bridge and engine under a child of ctx.
func (a *Automation) runPair(ctx context.Context) *pair {
	a.mu.Lock()
	bo, eo, gen := a.bridge, a.engine, a.gen
	a.mu.Unlock()
	var bridge *mqtt.Bridge
	if bo != nil {
		bridge = mqtt.New(*bo)
	}
	var engine *rules.Engine
	if eo != nil {
		engine = rules.New(*eo)
	}
	a.mu.Lock()
	a.running, a.rules = bridge, engine
	a.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	p := &pair{gen: gen, some: bridge != nil || engine != nil, cancel: cancel, done: make(chan struct{})}
	var wg sync.WaitGroup
	if bridge != nil {
		wg.Go(func() { _ = bridge.Run(ctx) })
	}
	if engine != nil {
		wg.Go(func() { _ = engine.Run(ctx) })
	}
	go func() { wg.Wait(); close(p.done) }()
	if bridge != nil || engine != nil {
		n := 0
		if eo != nil {
			n = len(eo.Rules)
		}
		a.log.Info("automation: running as master", "mqtt", bridge != nil, "rules", n)
	}
	return p
}

// Observe passes a device change to the engine and wakes the bridge.
func (a *Automation) Observe(s hal.Snapshot) {
	if a == nil {
		return
	}
	a.mu.Lock()
	b, e := a.running, a.rules
	a.mu.Unlock()
	if e != nil {
		e.Observe(s)
	}
	if b != nil {
		b.Poke()
	}
}

// Poke wakes the bridge (a table change: a board went down or came back).
func (a *Automation) Poke() {
	if a == nil {
		return
	}
	a.mu.Lock()
	b := a.running
	a.mu.Unlock()
	if b != nil {
		b.Poke()
	}
}

// source is the cluster as the MQTT bridge publishes it.
type source struct {
	devices func() []hal.Snapshot
	boards  func() []state.Board
}

func (s source) Devices() []hal.Snapshot { return s.devices() }

func (s source) Boards() []state.Board { return s.boards() }

// Running says what runs now (the bridge, the engine: none while this
// board is not master) and how many rules a new pair is built with.
func (a *Automation) Running() (bridge, engine bool, rules int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.engine != nil {
		rules = len(a.engine.Rules)
	}
	return a.running != nil, a.rules != nil, rules
}

// BridgeTLS is the TLS config a new bridge dials its broker with; nil
// without [mqtt] or over plain TCP.
func (a *Automation) BridgeTLS() *tls.Config {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bridge == nil {
		return nil
	}
	return a.bridge.TLS
}
