package bootconf

import (
	"errors"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/config"
)

// node.board: auto by default, sim with or without [sim], host refusing
// [sim], anything else refused, each error at the key's line.
func TestNodeBoard(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		kind      string // hal's board kind; "" when the file is refused
		sim       bool   // the mapped hal.Config has Sim settings
		line      int
		msg       string
	}{
		{"default, no [sim]", "[node]\nname = \"ews1\"\n", hal.BoardHost, false, 0, ""},
		{"default, [sim]", "[node]\nname = \"ews1\"\n[sim]\n", hal.BoardSim, true, 0, ""},
		{"auto", "[node]\nname = \"ews1\"\nboard = \"auto\"\n", hal.BoardHost, false, 0, ""},
		{"sim without [sim]", "[node]\nname = \"ews1\"\nboard = \"sim\"\n", hal.BoardSim, true, 0, ""},
		{"host", "[node]\nname = \"ews1\"\nboard = \"host\"\n", hal.BoardHost, false, 0, ""},
		{"host with [sim]", "[node]\nname = \"ews1\"\nboard = \"host\"\n\n[sim]\ndevice_latency = \"1ms\"\n", "", false, 3, "[sim] table (line 5)"},
		{"unknown", "[node]\nname = \"ews1\"\nboard = \"pi\"\n", "", false, 3, `"pi": want auto, sim or host`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parseConfig("/boot/ews.toml", []byte(c.doc))
			if c.kind == "" {
				var es config.Errors
				if !errors.As(err, &es) {
					t.Fatalf("err %v, want config.Errors", err)
				}
				for _, e := range es {
					if e.Key == "node.board" && e.Line == c.line && strings.Contains(e.Msg, c.msg) {
						return
					}
				}
				t.Fatalf("no node.board error at line %d with %q in %v", c.line, c.msg, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			hc := halConfig(cfg)
			if kind, err := hc.Kind(); err != nil || kind != c.kind || (hc.Sim != nil) != c.sim || simulated(cfg) != (c.kind == hal.BoardSim) {
				t.Fatalf("kind %q (%v), sim %v, Simulated %v; want %q, sim %v", kind, err, hc.Sim != nil, simulated(cfg), c.kind, c.sim)
			}
		})
	}
}

// The warnings of hal.Preflight come back with the device's line; a
// simulated board has none.
func TestHardwareWarnings(t *testing.T) {
	doc := "[node]\nname = \"ews1\"\nboard = \"host\"\n\n[[device]]\nname = \"fan\"\ndriver = \"pwm\"\npin = \"pwmchip97/pwm0\"\n"
	cfg, err := parseConfig("/boot/ews.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	ws := HardwareWarnings(cfg)
	if len(ws) != 1 || !ws[0].Warning || ws[0].Line != 8 || ws[0].Key != "device[0].pin" || !strings.Contains(ws[0].Msg, "pwmchip97") {
		t.Fatalf("warnings %v, want one at line 8, device[0].pin, naming pwmchip97", ws)
	}
	cfg.Node.Board = "sim"
	if ws := HardwareWarnings(cfg); len(ws) != 0 {
		t.Fatalf("simulated board warned: %v", ws)
	}
}
