package mqtt

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/actuate"
	"github.com/ews-firmware/ews/node/mqtt/mqtttest"
	"github.com/ews-firmware/ews/state"
)

// fakeCluster is a Source whose devices an Actor changes, like a cluster would.
type fakeCluster struct {
	mu     sync.Mutex
	devs   []hal.Snapshot
	boards []state.Board
	cmds   []actuate.Command
}

func (f *fakeCluster) Devices() []hal.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]hal.Snapshot(nil), f.devs...)
}

func (f *fakeCluster) Boards() []state.Board {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]state.Board(nil), f.boards...)
}

func (f *fakeCluster) Act(_ context.Context, c actuate.Command) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cmds = append(f.cmds, c)
	for i := range f.devs {
		if f.devs[i].Name == c.Device && c.Kind == hal.Toggle {
			on := f.devs[i].State != hal.StateOn
			f.devs[i].Value = on
			f.devs[i].State = map[bool]string{true: hal.StateOn, false: hal.StateOff}[on]
		}
	}
	return nil
}

func (f *fakeCluster) commands() []actuate.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]actuate.Command(nil), f.cmds...)
}

func TestBridgeAgainstMosquitto(t *testing.T) {
	broker := mqtttest.Broker(t)
	fc := &fakeCluster{
		devs: []hal.Snapshot{
			{Name: "relay1", Driver: "sim-switch", Node: "ews2", State: hal.StateOff, Value: false},
			{Name: "temp1", Driver: "sim-sensor", Node: "ews1", State: hal.StateOK, Value: 21.5, Unit: "°C"},
		},
		boards: []state.Board{{Name: "ews1", Runstate: state.Running}, {Name: "ews2", Runstate: state.Running}},
	}
	rec := mqtttest.Listen(t, broker, "#")
	b := New(Options{Broker: broker, Topics: topics, Discovery: true, Version: "test", Source: fc, Actor: fc, Logger: testutil.Logger()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); b.Run(ctx) }()
	defer func() { cancel(); <-done }()

	want := map[string]string{"ews/status": Online, "ews/board/ews1/status": Online, "ews/board/ews2/status": Online,
		"ews/relay1/state": Off, "ews/temp1/state": "21.5"}
	testutil.Eventually(t, "state and availability published", func() bool {
		for k, v := range want {
			if got, _ := rec.Last(k); got != v {
				return false
			}
		}
		return true
	})
	var cfg map[string]any
	testutil.Eventually(t, "switch discovery published", func() bool {
		p, ok := rec.Last("homeassistant/switch/ews/relay1/config")
		return ok && json.Unmarshal([]byte(p), &cfg) == nil
	})
	if cfg["command_topic"] != "ews/relay1/set" || cfg["unique_id"] != "ews_relay1" {
		t.Fatalf("discovery = %v", cfg)
	}
	if p, _ := rec.Last("homeassistant/sensor/ews/temp1/config"); p == "" {
		t.Fatal("no sensor discovery")
	}

	rec.Publish(t, "ews/relay1/set", "TOGGLE")
	testutil.Eventually(t, "the toggle reached the actor and the new state is published", func() bool {
		got, _ := rec.Last("ews/relay1/state")
		return got == On
	})
	cmds := fc.commands()
	if len(cmds) != 1 || cmds[0].Kind != hal.Toggle || cmds[0].Device != "relay1" || cmds[0].Key == "" || cmds[0].Origin != "mqtt" {
		t.Fatalf("commands = %+v", cmds)
	}
	rec.Publish(t, "ews/relay1/set", "TOGGLE")
	testutil.Eventually(t, "second toggle", func() bool { return len(fc.commands()) == 2 })
	if c := fc.commands(); c[0].Key == c[1].Key {
		t.Fatalf("two commands share the Idempotency-Key %q", c[0].Key)
	}
	rec.Publish(t, "ews/nope/set", "ON")
	rec.Publish(t, "ews/relay1/set", "EXPLODE")

	fc.mu.Lock()
	fc.boards[1].Runstate = state.Down
	fc.mu.Unlock()
	b.Poke()
	testutil.Eventually(t, "a board that is down goes offline", func() bool {
		got, _ := rec.Last("ews/board/ews2/status")
		return got == Offline
	})
	if n := len(fc.commands()); n != 2 {
		t.Fatalf("bad commands reached the actor: %+v", fc.commands())
	}
}

// A broker that hangs up on every connection: Run keeps retrying and still
// returns soon after its context ends (no goroutine left connecting).
func TestBridgeStopsWhileBrokerIsAway(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var attempts atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			attempts.Add(1)
			c.Close()
		}
	}()
	fc := &fakeCluster{}
	b := New(Options{Broker: "tcp://" + ln.Addr().String(), Topics: topics, Source: fc, Actor: fc, Logger: testutil.Logger()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); b.Run(ctx) }()
	testutil.Eventually(t, "two connection attempts", func() bool { return attempts.Load() >= 2 })
	select {
	case <-done:
		t.Fatal("Run returned before its context ended")
	default:
	}
	cancel()
	testutil.EventuallyWithin(t, "Run returns after cancel", 5*time.Second, func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
}
