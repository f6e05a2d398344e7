//go:build !lite

package node

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

// automation runs the MQTT bridge and the [[rule]] engine while this board
// is master, so both survive the death of any board: the next master starts
// them again. Their commands enter the node's own front door (actuate.Door)
// and so the same classes, queue, pinning and idempotency as HTTP.
//
// It is a component of the board's lifecycle: Run starts and stops the pair
// as master (start) and stop ask, one pair at a time (an old MQTT session
// ends before a new one begins); nothing runs before Run.
type automation struct {
	log    *slog.Logger
	kick   chan struct{} // start, stop or reconfigure was asked
	door   http.Handler  // the node's whole HTTP surface
	source clusterSource // what the bridge publishes and the engine watches
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

// newAutomation builds the bridge and the engine of b.auto (configmap.go
// read their secrets); without [mqtt] and [[rule]] it runs nothing until
// a version of the configuration store brings them (reconfigure). door is
// the node's whole HTTP surface; devices and cluster are what the bridge
// publishes and the engine watches. clusterTLS is this board's TLS client
// config (nil with TLS off): an mqtts:// broker without mqtt.ca_file is
// checked against its CA.
func newAutomation(b *boot, log *slog.Logger, door http.Handler, devices func() []hal.Snapshot, cluster *state.Cluster, clusterTLS *tls.Config) (*automation, error) {
	a := &automation{log: log, kick: make(chan struct{}, 1), door: door, source: clusterSource{devices, cluster}, tls: clusterTLS}
	var err error
	a.bridge, a.engine, err = a.build(b)
	return a, err
}

// build makes a pair's options from b's [mqtt] and [[rule]]s.
func (a *automation) build(b *boot) (*mqtt.Options, *rules.Options, error) {
	c := b.auto
	if !c.on {
		return nil, nil, nil
	}
	actor := actuate.NewDoor(a.door, c.token)
	var bridge *mqtt.Options
	var engine *rules.Options
	if c.mqtt != nil {
		o := *c.mqtt
		if c.tls != nil {
			tc, err := mqtt.ClientTLS(*c.tls, a.tls)
			if err != nil {
				key := "mqtt.ca_file"
				if fe := (*mqtt.FileError)(nil); errors.As(err, &fe) {
					key = "mqtt." + fe.Key
				}
				return nil, nil, b.cite(key, err)
			}
			o.TLS = tc
		}
		o.Version, o.Source, o.Actor, o.Logger = buildinfo.Version, a.source, actor, a.log
		bridge = &o
	}
	if len(c.rules) > 0 {
		engine = &rules.Options{Rules: c.rules, Actor: actor, Devices: a.source.devices, Logger: a.log, Clock: b.clock, KeySecret: ruleKeySecret(b), Report: a.report}
	}
	return bridge, engine, nil
}

// reconfigure takes b's [mqtt] and [[rule]]s (a new version of the
// configuration store): a running pair is replaced by one built from them
// (an MQTT session ends before the next begins). Nil-safe.
func (a *automation) reconfigure(b *boot) error {
	if a == nil {
		return nil
	}
	bridge, engine, err := a.build(b)
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

// onTurnBack tells fn of the rules' refused turn-backs and how they ended
// (rules.Options.Report). Before Run; nil-safe.
func (a *automation) onTurnBack(fn func(c actuate.Command, tries int, err error)) {
	if a == nil {
		return
	}
	a.report = fn
	if a.engine != nil {
		a.engine.Report = fn
	}
}

// start asks Run for the pair (this board became master). Never blocks.
func (a *automation) start() { a.set(true) }

// stop asks Run to end the pair (this board is no longer master).
func (a *automation) stop() { a.set(false) }

func (a *automation) set(want bool) {
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

// Run runs the pair while start was the last ask, until ctx ends; it
// returns nil once the bridge has disconnected and the engine's actions
// have returned.
func (a *automation) Run(ctx context.Context) error {
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
func (a *automation) runPair(ctx context.Context) *pair {
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

// observe passes a device change to the engine and wakes the bridge.
func (a *automation) observe(s hal.Snapshot) {
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

// poke wakes the bridge (a table change: a board went down or came back).
func (a *automation) poke() {
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

// clusterSource is the cluster as the MQTT bridge publishes it.
type clusterSource struct {
	devices func() []hal.Snapshot
	cluster *state.Cluster
}

func (s clusterSource) Devices() []hal.Snapshot { return s.devices() }

func (s clusterSource) Boards() []state.Board { return s.cluster.Snapshot().Nodes }
