package hal

import (
	"context"
	"testing"
	"time"
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
