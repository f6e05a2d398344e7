// Package mqtt bridges the cluster's devices to an MQTT broker while this board is master: state, availability, commands and Home Assistant discovery.
package mqtt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/actuate"
	"github.com/ews-firmware/ews/state/row"
)

// Source is what the bridge publishes: every device of the cluster and
// every board of the table. Safe for concurrent use.
type Source interface {
	Devices() []hal.Snapshot
	Boards() []row.Board
}

// Options configure a Bridge.
type Options struct {
	Broker    string // tcp://host:port
	User      string
	Password  string
	Topics    Topics
	Discovery bool   // publish Home Assistant discovery configs
	Version   string // sw_version in discovery
	Source    Source
	Actor     actuate.Actor
	Logger    *slog.Logger
	// Interval is the longest a change waits before it is published when
	// nobody Pokes; default 1s.
	Interval time.Duration
	// CommandTimeout bounds one command from MQTT; default 30s.
	CommandTimeout time.Duration
}

// Bridge holds the cluster's one MQTT session. Create it with New, then Run
// it while this board is master; Run returns (disconnected) when its
// context ends.
type Bridge struct {
	o      Options
	log    *slog.Logger
	poke   chan struct{}
	fresh  atomic.Bool  // a (re)connect happened: publish everything again
	nonce  atomic.Value // string, per connection: part of each command's Idempotency-Key
	ctx    context.Context
	cmds   sync.WaitGroup
	cmdSem chan struct{}

	published map[string]string // topic -> retained payload sent on this connection; Run's goroutine only
}

// New builds a bridge; it connects in Run.
func New(o Options) *Bridge {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = 30 * time.Second
	}
	return &Bridge{o: o, log: o.Logger.With("component", "mqtt"), poke: make(chan struct{}, 1),
		cmdSem: make(chan struct{}, 16), published: map[string]string{}}
}

// Poke tells the bridge something changed; it publishes soon. Never blocks.
func (b *Bridge) Poke() {
	select {
	case b.poke <- struct{}{}:
	default:
	}
}

// ClientID is the cluster's one MQTT client id: a new master that connects
// takes the session over from a old one the broker has not dropped yet.
func (t Topics) ClientID() string { return ID(t.Prefix) + "-master" }

// Run connects (retrying with backoff while the broker is away), publishes
// until ctx ends, then disconnects and returns nil.
func (b *Bridge) Run(ctx context.Context) error {
	b.ctx = ctx
	t := b.o.Topics
	opts := paho.NewClientOptions().
		AddBroker(b.o.Broker).
		SetClientID(t.ClientID()).
		SetCleanSession(true).
		SetOrderMatters(false).
		SetKeepAlive(10*time.Second).
		SetPingTimeout(5*time.Second).
		SetConnectTimeout(5*time.Second).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(time.Second).
		SetMaxReconnectInterval(10*time.Second).
		SetWill(t.Status(), Offline, 1, true).
		SetOnConnectHandler(b.onConnect).
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			b.log.Warn("mqtt: connection lost; reconnecting", "broker", b.o.Broker, "err", err)
		})
	if b.o.User != "" {
		opts.SetUsername(b.o.User).SetPassword(b.o.Password)
	}
	c := paho.NewClient(opts)
	c.Connect() // with ConnectRetry the token completes once connected; onConnect does the rest
	defer func() {
		b.cmds.Wait()
		c.Disconnect(250)
		b.log.Info("mqtt: disconnected", "broker", b.o.Broker)
	}()
	tick := time.NewTicker(b.o.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-b.poke:
		}
		if c.IsConnectionOpen() {
			b.sync(ctx, c)
		}
	}
}

func (b *Bridge) onConnect(c paho.Client) {
	var n [6]byte
	_, _ = rand.Read(n[:])
	b.nonce.Store(hex.EncodeToString(n[:]))
	b.fresh.Store(true)
	for _, f := range b.o.Topics.Subscriptions() {
		tok := c.Subscribe(f, 1, b.onCommand)
		if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			b.log.Error("mqtt: subscribe", "filter", f, "err", tok.Error())
		}
	}
	b.log.Info("mqtt: connected", "broker", b.o.Broker, "client_id", b.o.Topics.ClientID())
	b.Poke()
}

// desired is every retained message the cluster should show now, in the
// order to publish: availability, discovery configs, then states.
func (b *Bridge) desired() [][2]string {
	t := b.o.Topics
	out := [][2]string{{t.Status(), Online}}
	for _, bd := range b.o.Source.Boards() {
		out = append(out, [2]string{t.BoardStatus(bd.Name), BoardAvailability(bd)})
	}
	devs := b.o.Source.Devices()
	if b.o.Discovery {
		for _, s := range devs {
			for _, e := range Entities(s) {
				p, err := json.Marshal(t.Config(e, b.o.Version))
				if err != nil {
					continue
				}
				out = append(out, [2]string{t.ConfigTopic(e), string(p)})
			}
		}
	}
	for _, s := range devs {
		ps := t.StatePayloads(s)
		for _, k := range sortedKeys(ps) {
			out = append(out, [2]string{k, ps[k]})
		}
	}
	return out
}

// sync publishes, retained, every message whose payload differs from what
// this connection last sent.
func (b *Bridge) sync(ctx context.Context, c paho.Client) {
	if b.fresh.Swap(false) {
		clear(b.published)
	}
	for _, m := range b.desired() {
		if ctx.Err() != nil {
			return
		}
		if b.published[m[0]] == m[1] {
			continue
		}
		tok := c.Publish(m[0], 1, true, m[1])
		if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			b.log.Warn("mqtt: publish", "topic", m[0], "err", tok.Error())
			return // the next round tries again
		}
		b.published[m[0]] = m[1]
	}
}

// onCommand turns a message on a command topic into a device action through
// the front door. QoS 1 and 2 messages carry an Idempotency-Key made of the
// connection's nonce and the packet id, so a redelivery runs once.
func (b *Bridge) onCommand(_ paho.Client, m paho.Message) {
	defer func() {
		if p := recover(); p != nil {
			b.log.Error("mqtt: command handler panicked", "topic", m.Topic(), "panic", p)
		}
	}()
	if m.Retained() {
		// a command left retained on the broker would replay at every
		// takeover: refused
		b.log.Warn("mqtt: retained command ignored", "topic", m.Topic())
		return
	}
	id, brightness, ok := b.o.Topics.ParseCommand(m.Topic())
	if !ok {
		return
	}
	name := ""
	for _, s := range b.o.Source.Devices() {
		if ID(s.Name) == id {
			name = s.Name
			break
		}
	}
	if name == "" {
		b.log.Warn("mqtt: command for unknown device", "topic", m.Topic())
		return
	}
	cmd, err := parseCommand(name, string(m.Payload()), brightness)
	if err != nil {
		b.log.Warn("mqtt: bad command", "topic", m.Topic(), "err", err)
		return
	}
	if m.Qos() > 0 {
		nonce, _ := b.nonce.Load().(string)
		cmd.Key = fmt.Sprintf("mqtt-%s-%d", nonce, m.MessageID())
	}
	ctx := b.ctx
	select {
	case b.cmdSem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	b.cmds.Add(1)
	defer func() { <-b.cmdSem; b.cmds.Done() }()
	ctx, cancel := context.WithTimeout(ctx, b.o.CommandTimeout)
	defer cancel()
	if err := b.o.Actor.Act(ctx, cmd); err != nil {
		b.log.Warn("mqtt: command refused", "device", name, "action", cmd.Kind.String(), "err", err)
		return
	}
	b.log.Debug("mqtt: command run", "device", name, "action", cmd.Kind.String())
	b.Poke()
}

// parseCommand reads ON, OFF, TOGGLE, or a brightness of 0 … 100.
func parseCommand(device, payload string, brightness bool) (actuate.Command, error) {
	c := actuate.Command{Device: device, Origin: "mqtt"}
	p := strings.TrimSpace(payload)
	if brightness {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return c, fmt.Errorf("mqtt: brightness %q is not a number", p)
		}
		c.Kind, c.Value = hal.Set, v
		return c, nil
	}
	switch strings.ToUpper(p) {
	case On:
		c.Kind = hal.TurnOn
	case Off:
		c.Kind = hal.TurnOff
	case Toggle:
		c.Kind = hal.Toggle
	default:
		return c, fmt.Errorf("mqtt: payload %q: want ON, OFF or TOGGLE", p)
	}
	return c, nil
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
