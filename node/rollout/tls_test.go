package rollout

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// tlsBoard is a board with TLS on: its http address is an HTTPS listener.
type tlsBoard struct {
	mu        sync.Mutex
	sha       string
	plainSeen int  // requests that arrived without TLS
	readAuth  bool // GETs without the token get 401
	noToken   int  // requests without the bearer token
	srv       *httptest.Server
}

func newTLSBoard(t *testing.T, readAuth bool) *tlsBoard {
	b := &tlsBoard{sha: "old", readAuth: readAuth}
	b.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if r.TLS == nil {
			b.plainSeen++
		}
		if r.Header.Get("Authorization") != "Bearer tok" {
			if b.readAuth {
				http.Error(w, "401", http.StatusUnauthorized)
				return
			}
			b.noToken++
		}
		switch r.URL.Path {
		case "/api/board/firmware":
			_, _ = io.Copy(io.Discard, r.Body)
			b.sha = r.Header.Get(HeaderSHA256)
			w.WriteHeader(http.StatusAccepted)
		case "/api/board":
			_ = json.NewEncoder(w).Encode(map[string]any{"version": "v", "sha256": b.sha, "runstate": "running"})
		case "/api/cluster":
			_ = json.NewEncoder(w).Encode(View{Master: "b1", Nodes: []Board{{Name: "b1", HTTP: b.srv.Listener.Addr().String(), Runstate: "running"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *tlsBoard) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(b.srv.Certificate())
	return p
}

// The rolling upgrade once used a hard-coded http://, which a TLS board
// does not answer (and which would carry the token in clear). Now it
// speaks HTTPS with the cluster CA, told or learnt from the URL
// (docs/NOTES.md, Boards: lifecycle, page, upgrades).
func TestRolloutOverHTTPS(t *testing.T) {
	cases := []struct {
		name     string
		scheme   string
		readAuth bool
		base     func(b *tlsBoard) string // "" : no GetView
	}{
		{"scheme told (a board's own rollout)", "https", false, nil},
		{"scheme from the URL given", "", false, func(b *tlsBoard) string { return b.srv.URL }},
		{"a plain listener that redirects to HTTPS", "", true, func(b *tlsBoard) string {
			plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "" {
					t.Errorf("the token crossed the plain listener")
				}
				http.Redirect(w, r, b.srv.URL+r.URL.RequestURI(), http.StatusPermanentRedirect)
			}))
			t.Cleanup(plain.Close)
			return plain.URL
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newTLSBoard(t, c.readAuth)
			r := &Rollout{Body: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("bin")), nil },
				SHA256: "new", Token: "tok", PerBoard: 10 * time.Second, Scheme: c.scheme, TLS: &tls.Config{RootCAs: b.pool()}}
			board := Board{Name: "b1", HTTP: b.srv.Listener.Addr().String()}
			if c.base != nil {
				v, err := r.GetView(context.Background(), c.base(b))
				if err != nil {
					t.Fatal(err)
				}
				board = v.Nodes[0]
			}
			msg, err := r.One(context.Background(), board)
			if err != nil {
				t.Fatalf("one board over HTTPS: %v", err)
			}
			if !strings.Contains(msg, "back in the table") {
				t.Fatalf("msg %q", msg)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.plainSeen != 0 || b.sha != "new" || !c.readAuth && c.base == nil && b.noToken != 0 {
				t.Fatalf("plain requests %d, without token %d, sha %q", b.plainSeen, b.noToken, b.sha)
			}
		})
	}
}

// A board whose certificate is not of the cluster CA is refused.
func TestRolloutRefusesOtherCA(t *testing.T) {
	b := newTLSBoard(t, false)
	r := &Rollout{Body: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("bin")), nil },
		SHA256: "new", Token: "tok", Scheme: "https", TLS: &tls.Config{RootCAs: x509.NewCertPool()}}
	if _, err := r.One(context.Background(), Board{Name: "b1", HTTP: b.srv.Listener.Addr().String()}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("err %v", err)
	}
	if b.sha != "old" {
		t.Fatal("uploaded to a board of another CA")
	}
}
