package hal

import (
	"errors"
	"strings"
	"testing"
)

func TestConfigKind(t *testing.T) {
	sim := &SimConfig{}
	for _, c := range []struct {
		board string
		sim   *SimConfig
		want  string
		err   string
	}{
		{"", nil, BoardHost, ""},
		{"auto", nil, BoardHost, ""},
		{"", sim, BoardSim, ""},
		{"auto", sim, BoardSim, ""},
		{"sim", nil, BoardSim, ""},
		{"sim", sim, BoardSim, ""},
		{"host", nil, BoardHost, ""},
		{"host", sim, "", "drop one"},
		{"fake", nil, "", "want auto, sim or host"},
	} {
		got, err := Config{Board: c.board, Sim: c.sim}.Kind()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("board %q sim %v: err %v, want %q", c.board, c.sim != nil, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("board %q sim %v: %q, %v; want %q", c.board, c.sim != nil, got, err, c.want)
		}
	}
}

func TestOpenBoard(t *testing.T) {
	b, err := OpenBoard(Config{Sim: &SimConfig{}})
	if err != nil || b.Kind() != BoardSim {
		t.Fatalf("sim set: board %v, %v; want sim", b, err)
	}
	if b, err := OpenBoard(Config{Board: BoardSim}); err != nil || b.Kind() != BoardSim {
		t.Fatalf("board = sim: %v, %v", b, err)
	}

	// With no device needing hardware, a host board opens on any machine.
	b, err = OpenBoard(Config{Devices: []DeviceSpec{{Name: "cmd", Driver: "command", Command: []string{"true"}}}})
	if err != nil || b.Kind() != BoardHost {
		t.Fatalf("no hardware needed: %v, %v; want a host board", b, err)
	}
	defer b.Close()
	if _, err := b.Pin("NO_SUCH_PIN_42"); err == nil {
		t.Fatal("host board returned a pin for a made-up name")
	}

	// A device that needs a pin: on this machine the answer depends on its
	// hardware, and is never the simulated board.
	cfg := Config{Node: "ews1", Devices: []DeviceSpec{
		{Name: "remote", Driver: "gpio-out", Pin: "GPIO17", Node: "ews2"},
		{Name: "relay", Driver: "gpio-out", Pin: "GPIO17"},
	}}
	_, hostErr := NewHostBoard()
	b, err = OpenBoard(cfg)
	if hostErr == nil {
		if err != nil || b.Kind() != BoardHost {
			t.Fatalf("hardware found but %v, %v", b, err)
		}
		return
	}
	var se SpecErrors
	if !errors.As(err, &se) || len(se) != 1 || se[0].Index != 1 || se[0].Key != "pin" || !errors.Is(err, ErrNoHardware) {
		t.Fatalf("no hardware: %v; want one SpecError for device 1, key pin, wrapping ErrNoHardware", err)
	}
	for _, want := range []string{"/dev/gpiochip*", "/sys/class/gpio", "GPIO17", `board = "sim"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}
