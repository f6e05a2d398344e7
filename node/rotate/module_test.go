package rotate

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/durable"
)

func newKey(t *testing.T) []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

func pass(h http.Handler) http.Handler { return h }

// testModule is the module of board ews1 of a cluster whose store secret
// is store, on state (nil: no log: nothing to rotate), TLS on or off.
func testModule(t *testing.T, state durable.State, store []byte, verify ed25519.PublicKey, tlsOn bool) *Module {
	o := ModuleOptions{
		Roller: Options{Self: "ews1", State: state, Saved: Saved{Key: store, Store: store, Phase: Done}, Verify: verify, Log: slog.New(slog.DiscardHandler)},
		Store:  store, Admin: pass, Read: pass,
		Who: func(*http.Request) string { return "admin" },
		PeerName: func(r *http.Request) (string, bool) {
			return r.Header.Get("X-Test-Peer"), r.Header.Get("X-Test-Peer") != ""
		},
		Boards: func() []Board { return []Board{{Name: "ews1"}, {Name: "ews2", Down: true}} },
	}
	if tlsOn {
		o.Client = &tls.Config{}
	}
	m := NewModule(o)
	t.Cleanup(m.Close)
	return m
}

// StoreID is the figure earlier builds computed through node/dispatch's
// mark key: an admin bundle's CLI and a board of either build agree.
func TestStoreIDUnchanged(t *testing.T) {
	store := []byte("the store's secret, 32 bytes....")
	k, err := dispatch.DeriveKey(append([]byte("ews store id\x00"), store...))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := StoreID(store), fmt.Sprintf("%x", k[:8]); got != want {
		t.Fatalf("StoreID = %s, want %s", got, want)
	}
}

// POST /api/cluster/rotate: committed (200, phase install); a second one
// while the first rolls, 409; a side without a majority, 503 with
// Retry-After; secrets of the wrong size, an admin bundle of another
// cluster, a body that is not JSON: refused.
func TestServeRotate(t *testing.T) {
	key := newKey(t)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	signed := func(store []byte, keyLen int, gen uint64, signGen uint64) string {
		k, s := newKey(t)[:keyLen], newKey(t)
		b, _ := json.Marshal(Request{Key: k, Session: s, StoreID: StoreID(store), Gen: gen, Sig: ed25519.Sign(priv, Signed(signGen, k, s))})
		return string(b)
	}
	body := func(store []byte, keyLen int) string { return signed(store, keyLen, 1, 1) }
	tests := []struct {
		name  string
		state durable.State
		first bool // a rotation started before this one
		body  string
		code  int
		says  string
	}{
		{"committed", durable.NewAlone(nil), false, body(key, 32), http.StatusOK, `"phase":"install"`},
		{"a second while the first rolls", durable.NewAlone(nil), true, signed(key, 32, 2, 2), http.StatusConflict, "still rolling"},
		{"no quorum", noQuorumState{durable.NewAlone(nil)}, false, body(key, 32), http.StatusServiceUnavailable, "no quorum"},
		{"another cluster's admin bundle", durable.NewAlone(nil), false, body(newKey(t), 32), http.StatusConflict, "not this cluster's"},
		{"a key of the wrong size", durable.NewAlone(nil), false, body(key, 20), http.StatusBadRequest, "key"},
		{"not JSON", durable.NewAlone(nil), false, "rotate", http.StatusBadRequest, "want"},
		{"not signed by the admin", durable.NewAlone(nil), false, signed(key, 32, 1, 7), http.StatusForbidden, "not signed"},
		{"for a generation the cluster is past", durable.NewAlone(nil), false, signed(key, 32, 3, 3), http.StatusConflict, "moved on"},
		{"a board alone, no log", nil, false, body(key, 32), http.StatusBadRequest, "no cluster secrets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModule(t, tt.state, key, pub, false)
			mux := http.NewServeMux()
			m.Routes(mux)
			if tt.first {
				k, s := newKey(t), newKey(t)
				if _, err := m.Roller().Start(context.Background(), Secrets{Key: k, Session: s}, "admin", 1, ed25519.Sign(priv, Signed(1, k, s))); err != nil {
					t.Fatal(err)
				}
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, httptest.NewRequest(http.MethodPost, Path, strings.NewReader(tt.body)))
			if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.says) {
				t.Fatalf("status %d %s, want %d saying %q", w.Code, w.Body, tt.code, tt.says)
			}
			if tt.code == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
				t.Errorf("503 without Retry-After: %v", w.Header())
			}
			if strings.Contains(w.Body.String(), `"key"`) || strings.Contains(w.Body.String(), `"session"`) {
				t.Errorf("the answer shows a secret: %s", w.Body)
			}
		})
	}
}

// A board offers a rotation to another only over HTTPS on its
// certificate: without TLS, or without a board's certificate, the offer is
// refused (such a board needs a new board bundle).
func TestPushNeedsACertificate(t *testing.T) {
	tests := []struct {
		name  string
		tlsOn bool
		peer  string
	}{
		{"TLS off", false, "ews2"},
		{"no board's certificate", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModule(t, durable.NewAlone(nil), newKey(t), nil, tt.tlsOn)
			mux := http.NewServeMux()
			m.Routes(mux)
			r := httptest.NewRequest(http.MethodPost, PushPath, strings.NewReader("sealed"))
			if tt.peer != "" {
				r.Header.Set("X-Test-Peer", tt.peer)
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			if w.Code != http.StatusForbidden {
				t.Fatalf("an offer: %d %s, want 403", w.Code, w.Body)
			}
		})
	}
}

// A board that missed a rotation takes one offered on a board's
// certificate when the admin signed it, whatever it hears; one sealed
// under the store secret (on every card) but not signed is refused.
func TestPushSigned(t *testing.T) {
	card := newKey(t)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	m := testModule(t, durable.NewAlone(nil), card, pub, true)
	next, session := newKey(t), newKey(t)
	signed, _ := Seal(card, Doc{Gen: 1, Phase: Done, Key: next, Session: session, Sig: ed25519.Sign(priv, Signed(1, next, session))})
	forged, _ := Seal(card, Doc{Gen: 2, Phase: Done, Key: newKey(t), Session: newKey(t)})
	offer := func(body []byte) int {
		r := httptest.NewRequest(http.MethodPost, PushPath, bytes.NewReader(body))
		r.Header.Set("X-Test-Peer", "ews2")
		w := httptest.NewRecorder()
		m.servePush(w, r)
		return w.Code
	}
	if code := offer(forged); code != http.StatusForbidden {
		t.Fatalf("an offer not signed by the admin: %d, want 403", code)
	}
	if code := offer(signed); code != http.StatusOK || !bytes.Equal(m.Roller().Saved().Key, next) {
		t.Fatalf("a signed offer: %d, key taken %v", code, bytes.Equal(m.Roller().Saved().Key, next))
	}
}

// The module's board credential is the one the board started with until a
// rotation installs secrets with another; Live and Missed come from the
// boards the gossip hears.
func TestModuleBoardCredAndBoards(t *testing.T) {
	card := newKey(t)
	var installed int
	m := NewModule(ModuleOptions{
		Roller:    Options{Self: "ews1", State: durable.NewAlone(nil), Saved: Saved{Key: card, Store: card, Phase: Done}, Log: slog.New(slog.DiscardHandler)},
		BoardCred: "ewsb_start",
		Install: func(p Secrets, _ []Secrets) string {
			installed++
			return "ewsb_" + fmt.Sprintf("%x", p.Key[:2])
		},
		Boards: func() []Board { return []Board{{Name: "ews1"}, {Name: "ews2", Down: true}, {Name: "ews3"}} },
	})
	if installed != 1 || m.BoardCred() != "ewsb_"+fmt.Sprintf("%x", card[:2]) {
		t.Errorf("after the start: %d installs, credential %q", installed, m.BoardCred())
	}
	if got := strings.Join(m.live(), ","); got != "ews1,ews3" {
		t.Errorf("live %s", got)
	}
	if got := strings.Join(m.missed(), ","); got != "ews2" {
		t.Errorf("missed %s", got)
	}
	if !m.hearsOthers() {
		t.Error("hears no other board")
	}
	alone := NewModule(ModuleOptions{BoardCred: "ewsb_start"})
	if alone.Roller() != nil || alone.BoardCred() != "ewsb_start" {
		t.Errorf("a board alone: roller %v, credential %q", alone.Roller(), alone.BoardCred())
	}
}

// noQuorumState is the durable log on a side without a majority.
type noQuorumState struct{ *durable.Alone }

func (noQuorumState) Apply(context.Context, string, []byte, uint64) (uint64, error) {
	return 0, &durable.NoQuorumError{Reachable: 1, Voters: 3}
}
