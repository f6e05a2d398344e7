package node

import (
	"context"
	"os"
	"strings"
	"sync"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/actuate"
	"github.com/ews-firmware/ews/node/mqtt"
	"github.com/ews-firmware/ews/node/rules"
	"github.com/ews-firmware/ews/state"
)

// automation runs the MQTT bridge and the [[rule]] engine while this board
// is master, so both survive the death of any board: the next master starts
// them again. Their commands enter the node's own front door (actuate.Door)
// and so the same classes, queue, pinning and idempotency as HTTP.
type automation struct {
	n      *Node
	door   *actuate.Door
	rules  []config.ParsedRule
	broker string
	pass   string

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{} // closed when the running pair has stopped
	bridge *mqtt.Bridge
	engine *rules.Engine
}

// newAutomation reads the secrets automation needs; nil when the config has
// neither [mqtt] nor [[rule]].
func (n *Node) newAutomation() (*automation, error) {
	cfg := n.cfg
	if cfg.MQTT == nil && len(cfg.Rules) == 0 {
		return nil, nil
	}
	a := &automation{n: n, rules: cfg.ParsedRules()}
	token := ""
	if cfg.HTTP.Auth == "token" {
		token = cfg.HTTP.Token
		if token == "" {
			b, err := os.ReadFile(cfg.HTTP.TokenFile)
			if err != nil {
				return nil, config.Errors{cfg.Errorf("http.token_file", "automation: %v", err)}
			}
			token = strings.TrimSpace(string(b))
		}
	}
	a.door = actuate.NewDoor(n.actorDoor(), token) // issue 24: rules act as admin logged rule:N, MQTT as [mqtt] user
	if cfg.MQTT != nil {
		u, err := cfg.MQTT.BrokerURL()
		if err != nil {
			return nil, config.Errors{cfg.Errorf("mqtt.broker", "%v", err)}
		}
		a.broker = u
		if a.pass, err = cfg.MQTT.Password(); err != nil {
			return nil, config.Errors{cfg.Errorf("mqtt.password_file", "%v", err)}
		}
		if cfg.MQTT.PasswordFile != "" && a.pass == "" {
			return nil, config.Errors{cfg.Errorf("mqtt.password_file", "%s is empty: put the broker password in it", cfg.MQTT.PasswordFile)}
		}
	}
	return a, nil
}

// start runs the bridge and the engine; a pair still stopping is waited for
// first. Safe to call when already running.
func (a *automation) start() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cancel != nil {
		return
	}
	prev := a.done
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	a.cancel, a.done = cancel, done
	n := a.n
	var bridge *mqtt.Bridge
	if m := n.cfg.MQTT; m != nil {
		bridge = mqtt.New(mqtt.Options{Broker: a.broker, User: m.User, Password: a.pass,
			Topics:    mqtt.Topics{Prefix: m.Prefix, Discovery: m.DiscoveryPrefix},
			Discovery: m.Discovery, Version: buildinfo.Version, Source: source{n}, Actor: a.door, Logger: n.log})
	}
	var engine *rules.Engine
	if len(a.rules) > 0 {
		engine = rules.New(rules.Options{Rules: a.rules, Actor: a.door, Devices: n.deviceList, Logger: n.log})
	}
	a.bridge, a.engine = bridge, engine
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		var wg sync.WaitGroup
		if bridge != nil {
			wg.Add(1)
			go func() { defer wg.Done(); bridge.Run(ctx) }()
		}
		if engine != nil {
			wg.Add(1)
			go func() { defer wg.Done(); engine.Run(ctx) }()
		}
		wg.Wait()
	}()
	n.log.Info("automation: running as master", "mqtt", bridge != nil, "rules", len(a.rules))
}

// stop ends the running pair without waiting (wait does).
func (a *automation) stop() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cancel == nil {
		return
	}
	a.cancel()
	a.cancel, a.bridge, a.engine = nil, nil, nil
	a.n.log.Info("automation: stopped (not master)")
}

// wait stops and waits until the bridge has disconnected and the engine's
// actions have returned.
func (a *automation) wait() {
	if a == nil {
		return
	}
	a.stop()
	a.mu.Lock()
	done := a.done
	a.mu.Unlock()
	if done != nil {
		<-done
	}
}

// observe passes a device change to the engine and wakes the bridge.
func (a *automation) observe(s hal.Snapshot) {
	if a == nil {
		return
	}
	a.mu.Lock()
	b, e := a.bridge, a.engine
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
	b := a.bridge
	a.mu.Unlock()
	if b != nil {
		b.Poke()
	}
}

// source is the cluster as the MQTT bridge publishes it.
type source struct{ n *Node }

func (s source) Devices() []hal.Snapshot { return s.n.deviceList() }
func (s source) Boards() []state.Board   { return s.n.cluster.Snapshot().Nodes }
