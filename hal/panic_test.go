package hal

import (
	"context"
	"errors"
	"testing"
)

// panicky is a driver whose every operation panics.
type panicky struct{}

func (panicky) Do(context.Context, Action) (Reading, error) { panic("wire came loose") }
func (panicky) Close() error                                { return nil }

func init() {
	Register(Driver{Name: "test-panicky", Actions: Kinds(), Simulated: true,
		Open: func(*Env) (Instance, Reading, error) { return panicky{}, Reading{State: StateUnknown}, nil }})
}

func TestDriverPanicIsAnError(t *testing.T) {
	ds := open(t, parse(t, "[[device]]\nname = \"p\"\ndriver = \"test-panicky\"\n\n[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n"), nil)
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
