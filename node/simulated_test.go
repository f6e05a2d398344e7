package node

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// A board asked to be simulated says so in /api/cluster and on each of its
// devices in /api/devices; a host board without devices that need GPIO
// starts on this (GPIO-less) machine and says nothing of the kind, except
// for its sim-* devices, which drive no hardware on any board.
func TestSimulatedIsShown(t *testing.T) {
	for _, c := range []struct {
		name, board string
		devices     string
		cluster     bool
		devs        map[string]bool // device -> simulated
	}{
		{"board sim", "sim", "[[device]]\nname = \"relay\"\ndriver = \"gpio-out\"\npin = \"GPIO17\"\n", true, map[string]bool{"relay": true}},
		{"host, no pins", "host", "[[device]]\nname = \"fake\"\ndriver = \"sim-switch\"\n", false, map[string]bool{"fake": true}},
		{"auto, no devices", "auto", "", false, map[string]bool{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := "[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\nboard = \"" + c.board + "\"\n[http]\nauth = \"none\"\n" + c.devices
			cfg, err := config.Parse("test.toml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			_, base, _, _ := startNode(t, cfg)
			var v struct {
				Nodes []map[string]any `json:"nodes"`
			}
			testutil.Eventually(t, "the board's own report in /api/cluster", func() bool {
				getInto(t, base+"/api/cluster", &v)
				return len(v.Nodes) == 1 && v.Nodes[0]["runstate"] == "running"
			})
			if sim, has := v.Nodes[0]["simulated"]; (sim == true) != c.cluster || (has && sim != true) {
				t.Errorf("/api/cluster simulated = %v (present %v), want %v", sim, has, c.cluster)
			}
			var devs []map[string]any
			getInto(t, base+"/api/devices", &devs)
			if len(devs) != len(c.devs) {
				t.Fatalf("/api/devices has %d devices, want %d", len(devs), len(c.devs))
			}
			for _, d := range devs {
				if got := d["simulated"] == true; got != c.devs[d["name"].(string)] {
					t.Errorf("device %v: simulated %v, want %v", d["name"], d["simulated"], !got)
				}
			}
		})
	}
}

func getInto(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
