package peers

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/bootconf"
)

// The boards' addresses are the peers' hosts, loopback included; a name
// that does not resolve makes every address believed (logged).
func TestFromBoard(t *testing.T) {
	for _, tc := range []struct {
		name, peers, remote string
		want                bool
	}{
		{"a peer's address", `["ews1=10.0.0.11:7946", "ews2=10.0.0.12:7946"]`, "10.0.0.12:40000", true},
		{"a client's", `["ews1=10.0.0.11:7946", "ews2=10.0.0.12:7946"]`, "10.0.0.99:40000", false},
		{"loopback boards", `["ews1=127.0.0.1:7946", "ews2=127.0.0.1:7947"]`, "127.0.0.1:40000", true},
		{"a name that does not resolve", `["ews1=10.0.0.11:7946", "ews2=nowhere.invalid:7946"]`, "10.0.0.99:40000", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("t.toml", []byte("[node]\nname = \"ews1\"\n[cluster]\ninsecure = true\npeers = "+tc.peers+"\n[http]\nauth = \"none\"\n"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := bootconf.Map(cfg)
			if err != nil {
				t.Fatal(err)
			}
			p := New(Options{Peers: b.State.Peers, Logger: slog.New(slog.DiscardHandler)})
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			if got := p.From(r); got != tc.want {
				t.Fatalf("fromBoard(%s) = %v, want %v", tc.remote, got, tc.want)
			}
		})
	}
}
