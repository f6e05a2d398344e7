package node

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// TestUnmarkedPeerStreamRefused: an unmarked scope=local stream is refused
// from a peer's own address too (issue 50: an address proves nothing; a
// card's holder on the LAN read the boards' stream that way), and the
// answer names the upgrade a board of a build before marks needs.
func TestUnmarkedPeerStreamRefused(t *testing.T) {
	cfg, err := config.Parse("test.toml", []byte(`[node]
name = "ews1"
http = "127.0.0.1:0"
[cluster]
peers = ["ews1=127.0.0.1:7946", "ews2=10.0.0.12:7946"]
key = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="
[http]
auth = "token"
token = "board-test-token-1"
`))
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	open := func(from string) (int, string) {
		r := httptest.NewRequest(http.MethodGet, "/events?scope=local", nil)
		r.RemoteAddr = from
		w := httptest.NewRecorder()
		done, ok := n.acc.peers.Stream(w, r)
		if ok {
			done()
			return http.StatusOK, ""
		}
		return w.Code, w.Body.String()
	}
	for _, from := range []string{"10.0.0.12:4000", "10.0.0.99:4000", "127.0.0.1:4000"} {
		if code, body := open(from); code != http.StatusUnauthorized || !strings.Contains(body, "upgrade") {
			t.Errorf("an unmarked stream from %s: %d %s, want 401 naming the upgrade", from, code, body)
		}
	}
}
