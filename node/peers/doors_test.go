package peers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ews-firmware/ews/node/boardrevoke"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/durable"
)

// The log's doors (its stream, forwarded writes) and the boards' own
// stream take, with TLS on, a board's certificate and nothing else (issue
// 50: with ews3's card alone, a peer mark keyed from the gossip key that
// every card holds opened the forward route, and a revoked card's mark
// still read the boards' stream).
func TestBoardDoorsWithTLS(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	m, err := dispatch.NewMarker([]byte("the gossip key, on every card!!!"), dispatch.MarkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	boards := boardrevoke.Open(boardrevoke.Options{State: durable.NewAlone(nil), Logger: log, Peers: []string{"ews1", "ews2", "ews3"}})
	if _, err := boards.Add(context.Background(), boardrevoke.Entry{Board: "ews3"}); err != nil {
		t.Fatal(err)
	}
	p := New(Options{Self: "ews1", TLS: true, Marker: m, Revoked: boards.Revoked, Logger: log})
	cert := func(name string) *tls.ConnectionState {
		leaf := &x509.Certificate{Subject: pkix.Name{CommonName: name}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		return &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
	}
	tests := []struct {
		name string
		tls  *tls.ConnectionState
		mark bool
		code int
	}{
		{"a peer mark without a certificate", nil, true, http.StatusUnauthorized},
		{"nothing", nil, false, http.StatusUnauthorized},
		{"a board's certificate", cert("ews2"), false, http.StatusOK},
		{"a revoked board's certificate and a mark", cert("ews3"), true, http.StatusForbidden},
	}
	reached := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for door, h := range map[string]http.Handler{
				"log": p.Only(reached),
				"stream": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if done, ok := p.Stream(w, r); ok {
						done()
						w.WriteHeader(http.StatusOK)
					}
				}),
			} {
				r := httptest.NewRequest(http.MethodPost, durable.ForwardPath, nil)
				r.TLS = tt.tls
				if tt.mark {
					m.SignPeer(r, "ews1")
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != tt.code {
					t.Errorf("%s: %d %s, want %d", door, w.Code, w.Body, tt.code)
				}
			}
		})
	}
}
