package pin

import (
	"net/http/httptest"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/bootconf"
)

// An action on a node = "any" device with an Idempotency-Key always goes to
// the same board, whichever board asks (invariant 5); without a key, or for
// a read, any board may run it; a wired device goes to its board.
func TestPinAnyDeviceByKey(t *testing.T) {
	doc := "[node]\nname = \"ews1\"\n[cluster]\ninsecure = true\npeers = [\"ews1=127.0.0.1:1\", \"ews2=127.0.0.1:2\", \"ews3=127.0.0.1:3\"]\n" +
		"[[device]]\nname = \"pump\"\ndriver = \"sim-switch\"\nnode = \"any\"\n[[device]]\nname = \"relay\"\ndriver = \"sim-switch\"\nnode = \"ews2\"\n"
	cfg, err := config.Parse("t.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bootconf.Map(cfg)
	if err != nil {
		t.Fatal(err)
	}
	live := b.Live(0)
	pin := New(b.State.Name, b.State.Peers, func() map[string]string { return live.Pins }, func() (string, string, bool) { return "", "", false })
	req := func(method, path, key string) string {
		r := httptest.NewRequest(method, path, nil)
		if key != "" {
			r.Header.Set("Idempotency-Key", key)
		}
		return pin(r)
	}
	seen := map[string]bool{}
	for i := range 64 {
		key := "k" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		b := req("POST", "/api/devices/pump/toggle", key)
		if b != "ews1" && b != "ews2" && b != "ews3" {
			t.Fatalf("key %s pinned to %q", key, b)
		}
		if again := req("POST", "/api/devices/pump/toggle", key); again != b {
			t.Fatalf("key %s pinned to %s, then %s", key, b, again)
		}
		seen[b] = true
	}
	if len(seen) != 3 {
		t.Fatalf("64 keys landed on %v: the hash should spread them", seen)
	}
	if b := req("POST", "/api/devices/pump/toggle", ""); b != "" && b != "any" {
		t.Fatalf("no key: pinned to %q", b)
	}
	if b := req("GET", "/api/devices/pump", "k1"); b != "" && b != "any" {
		t.Fatalf("a read with a key: pinned to %q", b)
	}
	if b := req("POST", "/api/devices/relay/toggle", "k1"); b != "ews2" {
		t.Fatalf("wired device: pinned to %q, want ews2", b)
	}
}

func TestPinByDevice(t *testing.T) {
	pin := pinByDevice(func() map[string]string { return map[string]string{"relay1": "ews2", "bus": "any"} })
	tests := []struct{ path, want string }{
		{"/api/devices/relay1", "ews2"},
		{"/api/devices/relay1/toggle", "ews2"},
		{"/api/devices/bus/read", "any"},
		{"/api/devices/nope/read", ""},
		{"/api/devices", ""},
		{"/api/devices/", ""},
		{"/cgi-bin/relay1", ""},
		{"/", ""},
	}
	for _, tt := range tests {
		if got := pin(httptest.NewRequest("GET", tt.path, nil)); got != tt.want {
			t.Errorf("%s pinned to %q, want %q", tt.path, got, tt.want)
		}
	}
}
