package node

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// TestStandaloneRestoresItsOwnOutputs: a board with its state directory
// saves its outputs' last commands and, started again with nobody to ask
// (standalone, or a whole cluster back from a power loss), restores them.
func TestStandaloneRestoresItsOwnOutputs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state") // created by the board
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\nstate_dir = \""+dir+"\"\n[http]\nauth = \"none\"\nshutdown_timeout = \"5s\"\n[sim]\n"+
		"[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n[[device]]\nname = \"lamp\"\ndriver = \"sim-switch\"\nrestore = \"initial\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, url, cancel, wait := startNode(t, cfg)
	for _, a := range []string{"relay1/turn_on", "lamp/turn_on"} {
		if code, _, b := getJSON(t, "POST", url+"/api/devices/"+a, nil, nil); code != 200 {
			t.Fatalf("%s: %d %v", a, code, b)
		}
	}
	cancel()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "outputs.json")); err != nil {
		t.Fatalf("outputs not saved under state_dir: %v", err)
	}
	_, url, _, _ = startNode(t, cfg)
	code, _, b := getJSON(t, "GET", url+"/api/devices/relay1", nil, nil)
	if code != 200 || b["state"] != "on" || b["restored"] != true {
		t.Fatalf("relay1 after a restart: %d %v, want on, restored", code, b)
	}
	if _, _, b := getJSON(t, "GET", url+"/api/devices/lamp", nil, nil); b["state"] != "off" {
		t.Errorf("lamp (restore = initial) after a restart: %v, want off", b)
	}
}
