package boardrevoke

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/state"
)

// noQuorumState is the durable log on a side without a majority.
type noQuorumState struct{ *durable.Alone }

func (noQuorumState) Apply(context.Context, string, []byte, uint64) (uint64, error) {
	return 0, &durable.NoQuorumError{Reachable: 1, Voters: 3}
}

// module is the module of ews1 in a cluster of three, its gates open.
func module(st durable.State, verify ed25519.PublicKey) *Module {
	pass := func(h http.Handler) http.Handler { return h }
	return Open(Options{State: st, Logger: slog.New(slog.DiscardHandler), Peers: []string{"ews1", "ews2", "ews3"}, Verify: verify,
		Admin: pass, Read: pass, Who: func(*http.Request) string { return "admin" }})
}

// post sends POST Path with body through m's routes.
func post(m *Module, body string) *httptest.ResponseRecorder {
	mux := http.NewServeMux()
	m.Routes(mux)
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodPost, Path, strings.NewReader(body)))
	return w
}

// POST /api/cluster/revoke: a board of cluster.peers is committed to the
// list, then marked revoked in the view; a side without a majority says
// so with 503 and Retry-After; an unknown board or a bad body is refused.
func TestServeRevoke(t *testing.T) {
	tests := []struct {
		name    string
		state   durable.State
		body    string
		code    int
		revoked bool
	}{
		{"committed", durable.NewAlone(nil), `{"name":"ews3"}`, http.StatusOK, true},
		{"no quorum", noQuorumState{durable.NewAlone(nil)}, `{"name":"ews3"}`, http.StatusServiceUnavailable, false},
		{"not a board of the cluster", durable.NewAlone(nil), `{"name":"ews9"}`, http.StatusNotFound, false},
		{"no name", durable.NewAlone(nil), `{}`, http.StatusBadRequest, false},
		{"not JSON", durable.NewAlone(nil), `ews3`, http.StatusBadRequest, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := module(tt.state, nil)
			w := post(m, tt.body)
			if w.Code != tt.code {
				t.Fatalf("status %d %s, want %d", w.Code, w.Body, tt.code)
			}
			if tt.code == http.StatusServiceUnavailable && (w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "no quorum")) {
				t.Errorf("503 without Retry-After or 'no quorum': %v %s", w.Header(), w.Body)
			}
			if got := m.Revoked("ews3"); got != tt.revoked {
				t.Errorf("ews3 revoked %v, want %v", got, tt.revoked)
			}
			v := m.Mark(state.View{Nodes: []state.Board{{Name: "ews1", Runstate: state.Running}, {Name: "ews3", Runstate: state.Running}}})
			if want := map[bool]state.Runstate{true: state.Revoked, false: state.Running}[tt.revoked]; v.Nodes[1].Runstate != want || v.Nodes[0].Runstate != state.Running {
				t.Errorf("view runstates %v %v, want running %v", v.Nodes[0].Runstate, v.Nodes[1].Runstate, want)
			}
		})
	}
}

// A request on a connection a board opened before its revocation is
// refused by its certificate's name; others pass.
func TestRefuse(t *testing.T) {
	m := module(durable.NewAlone(nil), nil)
	if _, err := m.Add(context.Background(), Entry{Board: "ews3"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		peer    string // "": no client certificate
		refused bool
	}{
		{"a revoked board", "ews3", true},
		{"another board", "ews2", false},
		{"a browser", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/api/cluster", nil)
			if tt.peer != "" {
				leaf := &x509.Certificate{Subject: pkix.Name{CommonName: tt.peer}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
				r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
			}
			w := httptest.NewRecorder()
			if got := m.Refuse(w, r); got != tt.refused || (got && w.Code != http.StatusForbidden) {
				t.Fatalf("refused %v (%d), want %v", got, w.Code, tt.refused)
			}
		})
	}
}

// With an admin key, a revocation needs its signature (issue 50: a board's
// card, or any admin token, revoked boards); revoking a majority is
// refused with 409 before anything is committed.
func TestServeRevokeSigned(t *testing.T) {
	pub, admin, _ := ed25519.GenerateKey(strings.NewReader(strings.Repeat("admin key seed 0123456789abcdef!", 2)))
	at := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	body := func(name string, key ed25519.PrivateKey) string {
		rq := Request{Name: name, At: at}
		if key != nil {
			rq.Sig = Sign(key, Entry{Board: name, At: at})
		}
		b, _ := json.Marshal(rq)
		return string(b)
	}
	m := module(durable.NewAlone(nil), pub) // Open puts Guard on the log, as every board does
	for _, step := range []struct {
		name, body string
		code       int
	}{
		{"unsigned", body("ews3", nil), http.StatusForbidden},
		{"signed", body("ews3", admin), http.StatusOK},
		{"a majority", body("ews2", admin), http.StatusConflict},
	} {
		if w := post(m, step.body); w.Code != step.code {
			t.Errorf("%s: %d %s, want %d", step.name, w.Code, w.Body, step.code)
		}
	}
	if got := m.Entries(); len(got) != 1 || got[0].Board != "ews3" {
		t.Errorf("list %+v, want ews3 alone", got)
	}
}
