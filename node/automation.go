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
	bridge *mqtt.Options  // a new pair's bridge; nil without [mqtt]
	engine *rules.Options // a new pair's engine; nil without [[rule]]
	kick   chan struct{}  // start or stop was asked

	mu      sync.Mutex
	want    bool         // this board is master
	running *mqtt.Bridge // the pair running now (nil when none) ...
	rules   *rules.Engine
}

// newAutomation builds the bridge and the engine of b.auto (configmap.go
// read their secrets); nil when the config has neither [mqtt] nor
// [[rule]]. door is the node's whole HTTP surface; devices and cluster are
// what the bridge publishes and the engine watches. clusterTLS is this
// board's TLS client config (nil with TLS off): an mqtts:// broker without
// mqtt.ca_file is checked against its CA.
func newAutomation(b *boot, log *slog.Logger, door http.Handler, devices func() []hal.Snapshot, cluster *state.Cluster, clusterTLS *tls.Config) (*automation, error) {
	c := b.auto
	if !c.on {
		return nil, nil
	}
	actor := actuate.NewDoor(door, c.token)
	a := &automation{log: log, kick: make(chan struct{}, 1)}
	if c.mqtt != nil {
		o := *c.mqtt
		if c.tls != nil {
			tc, err := mqtt.ClientTLS(*c.tls, clusterTLS)
			if err != nil {
				key := "mqtt.ca_file"
				if fe := (*mqtt.FileError)(nil); errors.As(err, &fe) {
					key = "mqtt." + fe.Key
				}
				return nil, b.cite(key, err)
			}
			o.TLS = tc
		}
		o.Version, o.Source, o.Actor, o.Logger = buildinfo.Version, clusterSource{devices, cluster}, actor, log
		a.bridge = &o
	}
	if len(c.rules) > 0 {
		a.engine = &rules.Options{Rules: c.rules, Actor: actor, Devices: devices, Logger: log, Clock: b.clock, KeySecret: ruleKeySecret(b)}
	}
	return a, nil
}

// onTurnBack tells fn of the rules' refused turn-backs and how they ended
// (rules.Options.Report). Before Run; nil-safe.
func (a *automation) onTurnBack(fn func(c actuate.Command, tries int, err error)) {
	if a != nil && a.engine != nil {
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
		p = nil
		a.log.Info("automation: stopped (not master)")
	}
	defer end()
	for {
		a.mu.Lock()
		want := a.want
		a.mu.Unlock()
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
	cancel context.CancelFunc
	done   chan struct{} // closed when both have returned
}

// runPair starts a new bridge and engine under a child of ctx.
func (a *automation) runPair(ctx context.Context) *pair {
	var bridge *mqtt.Bridge
	if a.bridge != nil {
		bridge = mqtt.New(*a.bridge)
	}
	var engine *rules.Engine
	if a.engine != nil {
		engine = rules.New(*a.engine)
	}
	a.mu.Lock()
	a.running, a.rules = bridge, engine
	a.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	p := &pair{cancel: cancel, done: make(chan struct{})}
	var wg sync.WaitGroup
	if bridge != nil {
		wg.Go(func() { _ = bridge.Run(ctx) })
	}
	if engine != nil {
		wg.Go(func() { _ = engine.Run(ctx) })
	}
	go func() { wg.Wait(); close(p.done) }()
	n := 0
	if a.engine != nil {
		n = len(a.engine.Rules)
	}
	a.log.Info("automation: running as master", "mqtt", bridge != nil, "rules", n)
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
func (s clusterSource) Boards() []state.Board   { return s.cluster.Snapshot().Nodes }
