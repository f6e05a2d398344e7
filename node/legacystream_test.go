package node

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// TestLegacyPeerStreamCapped: an unmarked scope=local stream from a peer's
// address (a board of an older version) is let through at most
// legacyPerAddr at a time; one address used to hold 11 of 12 places.
func TestLegacyPeerStreamCapped(t *testing.T) {
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
	open := func(from string) (func(), int) {
		r := httptest.NewRequest(http.MethodGet, "/events?scope=local", nil)
		r.RemoteAddr = from
		w := httptest.NewRecorder()
		done, ok := n.peerStream(w, r)
		if ok {
			return done, http.StatusOK
		}
		return nil, w.Code
	}
	var held []func()
	for i := range legacyPerAddr {
		done, code := open("10.0.0.12:4000")
		if code != http.StatusOK {
			t.Fatalf("unmarked stream %d from ews2's address: %d, want let through", i+1, code)
		}
		held = append(held, done)
	}
	if _, code := open("10.0.0.12:4001"); code != http.StatusTooManyRequests {
		t.Fatalf("stream %d from one address: %d, want 429", legacyPerAddr+1, code)
	}
	if _, code := open("10.0.0.99:4000"); code != http.StatusUnauthorized {
		t.Fatalf("an unmarked stream from elsewhere: %d, want 401", code)
	}
	held[0]()
	if _, code := open("10.0.0.12:4002"); code != http.StatusOK {
		t.Fatalf("after one ended: %d, want let through", code)
	}
}
