package hal

import (
	"context"
	"errors"
	"testing"
)

// panicky is a driver whose every operation panics.
type panicky struct{}

func (panicky) supports(string) bool                        { return true }
func (panicky) do(context.Context, Action) (reading, error) { panic("wire came loose") }
func (panicky) close() error                                { return nil }

func TestDriverPanicIsAnError(t *testing.T) {
	saved := openers["sim-sensor"]
	openers["sim-sensor"] = func(*openEnv) (driver, reading, error) { return panicky{}, reading{state: StateUnknown}, nil }
	defer func() { openers["sim-sensor"] = saved }()

	ds := open(t, parse(t, "[[device]]\nname = \"p\"\ndriver = \"sim-sensor\"\n\n[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n"), nil)
	_, err := ds.Do(t.Context(), "p", Action{Kind: Read})
	var de *DriverError
	if !errors.As(err, &de) {
		t.Fatalf("err %v, want a DriverError", err)
	}
	contains(t, err, `"p"`, "panicked", "wire came loose")
	if s, _ := ds.Get("p"); s.State != StateError {
		t.Fatalf("state %q, want error", s.State)
	}
	do(t, ds, "s", Action{Kind: TurnOn})
}
