package hal

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/spec"
)

func TestPollAndWatch(t *testing.T) {
	cfg := parse(t, "[[device]]\nname = \"t\"\ndriver = \"sim-sensor\"\ndrift = 1.0\n\n[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n")
	ds, err := New(cfg, Options{Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan Snapshot, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	polled := make(chan error, 1)
	go func() { polled <- ds.Run(context.Background()) }() // ended by Close below
	done := make(chan struct{})
	go func() {
		defer close(done)
		ds.Watch(ctx, func(s Snapshot) {
			select {
			case got <- s:
			default:
			}
		})
	}()
	seen := map[string]bool{}
	deadline := time.After(5 * time.Second)
	for !seen["t"] {
		select {
		case s := <-got:
			seen[s.Name] = true
		case <-deadline:
			t.Fatal("no polled sensor change seen through Watch")
		}
	}
	if seen["s"] {
		t.Fatal("the switch was polled")
	}
	cancel()
	<-done

	// Watch also ends when the devices close
	done = make(chan struct{})
	go func() {
		defer close(done)
		ds.Watch(context.Background(), func(Snapshot) {})
	}()
	if err := ds.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := <-polled; err != nil {
		t.Fatalf("Run after Close: %v", err)
	}
	if err := ds.Run(context.Background()); err != nil { // closed: returns at once
		t.Fatal(err)
	}
}

// TestPollPerDevice: a sensor with its own poll is read at that period even
// with no board-wide default; one without is not read at all.
func TestPollPerDevice(t *testing.T) {
	cfg := parse(t, "[[device]]\nname = \"fast\"\ndriver = \"sim-sensor\"\ndrift = 1.0\n\n[[device]]\nname = \"idle\"\ndriver = \"sim-sensor\"\ndrift = 1.0\n")
	cfg.Devices[0].Poll = spec.D(MinPoll)
	ds, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	ch, cancel := ds.Subscribe(64)
	defer cancel()
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- ds.Run(ctx) }() // New starts nothing: Run polls
	defer func() { stop(); <-ran }()
	reads := map[string]int{}
	deadline := time.After(5 * time.Second)
	for reads["fast"] < 3 {
		select {
		case s := <-ch:
			reads[s.Name]++
		case <-deadline:
			t.Fatalf("fast sensor read %d times in 5s at a 100ms poll", reads["fast"])
		}
	}
	if reads["idle"] != 0 {
		t.Fatalf("the sensor without poll was read %d times", reads["idle"])
	}
}

func TestPollRefused(t *testing.T) {
	cfg := parse(t, "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\n")
	cfg.Devices[0].Poll = spec.D(time.Second)
	if _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "poll") {
		t.Fatalf("poll on a switch: %v", err)
	}
}

// TestWatchFromNowKeepsAChangeBeforeItsLoop: a change made after
// WatchFromNow returns and before its loop runs reaches fn (Watch called in
// a goroutine that starts late misses it: a board's event stream lost a
// relay's toggle that way).
func TestWatchFromNowKeepsAChangeBeforeItsLoop(t *testing.T) {
	ds, err := New(parse(t, "[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	watch := ds.WatchFromNow()
	on, err := ds.Do(context.Background(), "s", Action{Kind: TurnOn})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan Snapshot, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		watch(ctx, func(s Snapshot) {
			select {
			case got <- s:
			default:
			}
		})
	}()
	defer func() { cancel(); <-done }()
	select {
	case s := <-got:
		if s.Name != "s" || s.State != on.State {
			t.Fatalf("first change seen %s = %s, want s = %s", s.Name, s.State, on.State)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the change made before the loop ran never reached it")
	}
}
