package hal

import (
	"testing"

	"github.com/ews-firmware/ews/internal/promx"
)

func TestSlowSubscriberDropped(t *testing.T) {
	ds := open(t, parse(t, "[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n"), nil)
	slow, cancelSlow := ds.Subscribe(2)
	defer cancelSlow()
	fast, cancelFast := ds.Subscribe(100)
	defer cancelFast()
	for range 10 {
		do(t, ds, "s", Action{Kind: Toggle}) // never blocks, though slow never reads
	}
	n := 0
	for range slow {
		n++
	}
	if n != 2 {
		t.Fatalf("slow subscriber got %d before being dropped, want its buffer of 2", n)
	}
	if len(fast) != 10 {
		t.Fatalf("fast subscriber has %d changes, want 10", len(fast))
	}
	_ = ds.Close()
	if _, ok := <-ds.subsClosedProbe(); ok {
		t.Fatal("subscribe after Close gives an open channel")
	}
}

func (ds *Devices) subsClosedProbe() <-chan Snapshot {
	ch, _ := ds.Subscribe(1)
	return ch
}

func TestMetrics(t *testing.T) {
	reg := promx.NewRegistry()
	ds, err := New(parse(t, "[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n\n[[device]]\nname = \"c\"\ndriver = \"command\"\ncommand = [\"false\"]\n"), Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	do(t, ds, "s", Action{Kind: TurnOn})
	do(t, ds, "s", Action{Kind: TurnOn})
	_, _ = ds.Do(t.Context(), "c", Action{Kind: Read})
	m := ds.metrics
	if got := float64(m.ops.WithLabelValues("s", "turn_on").Get()); got != 2 {
		t.Errorf("ops{s,turn_on} = %v, want 2", got)
	}
	if got := float64(m.errs.WithLabelValues("c", "read").Get()); got != 1 {
		t.Errorf("errors{c,read} = %v, want 1", got)
	}
	if n := reg.Count("ews_device_operation_seconds"); n != 2 {
		t.Errorf("latency series = %d, want 2", n)
	}
}
