package hal

import "testing"

func TestOpenBoard(t *testing.T) {
	if b := OpenBoard(&SimConfig{}, nil); b.Kind() != "sim" {
		t.Fatalf("sim set: board %q, want sim", b.Kind())
	}
	b := OpenBoard(nil, nil)
	defer b.Close()
	_, hostErr := NewHostBoard()
	switch {
	case hostErr != nil && b.Kind() != "sim":
		t.Fatalf("no hardware (%v) but board %q, want the sim fallback", hostErr, b.Kind())
	case hostErr == nil && b.Kind() != "host":
		t.Fatalf("hardware found but board %q", b.Kind())
	}
	if hostErr == nil {
		if _, err := b.Pin("NO_SUCH_PIN_42"); err == nil {
			t.Fatal("host board returned a pin for a made-up name")
		}
	}
}
