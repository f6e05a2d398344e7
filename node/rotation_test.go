package node

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/rotate"
)

// rotateConfig is a board of a three-board cluster with key, written to
// dir (a kept secrets file goes beside it).
func rotateConfig(t *testing.T, dir string, key []byte) *config.Config {
	t.Helper()
	doc := "[node]\nname = \"ews1\"\n[cluster]\nkey = \"" + base64.StdEncoding.EncodeToString(key) +
		"\"\npeers = [\"ews1=127.0.0.1:1\", \"ews2=127.0.0.1:2\", \"ews3=127.0.0.1:3\"]\n"
	path := filepath.Join(dir, "ews1.toml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(path, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newKey(t *testing.T) []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
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
		b, _ := json.Marshal(RotateRequest{Key: k, Session: s, StoreID: StoreID(store), Gen: gen, Sig: ed25519.Sign(priv, rotate.Signed(signGen, k, s))})
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &Node{boot: bootOf(t, rotateConfig(t, t.TempDir(), key)), log: slog.New(slog.DiscardHandler)}
			n.acc.rotation = &rotation{roller: rotate.New(rotate.Options{Self: "ews1", State: tt.state, Saved: n.boot.rotated, Verify: pub, Log: n.log})}
			if tt.first {
				k, s := newKey(t), newKey(t)
				if _, err := n.acc.rotation.roller.Start(context.Background(), rotate.Secrets{Key: k, Session: s}, "admin", 1, ed25519.Sign(priv, rotate.Signed(1, k, s))); err != nil {
					t.Fatal(err)
				}
			}
			w := httptest.NewRecorder()
			n.serveRotate(w, httptest.NewRequest(http.MethodPost, RotatePath, strings.NewReader(tt.body)))
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

// The secrets a rotation kept beside the config are preferred to the
// card's at the start; the store's secret stays the first key; a file of
// another cluster is left aside with a note; a corrupt one stops the
// start naming the file.
func TestRotatedSecretsAtStart(t *testing.T) {
	card, rolled, old := newKey(t), newKey(t), newKey(t)
	tests := []struct {
		name    string
		kept    string // the file's text; "" none
		key     []byte // the gossip key the board runs with
		keys    int    // further keys its keyring decrypts with
		store   []byte
		note    string
		errSays string
	}{
		{"no file: the card's", "", card, 0, card, "", ""},
		{"a finished rotation", keptJSON(rotate.Saved{Gen: 1, Phase: rotate.Done, Key: rolled, Session: newKey(t), Store: card}), rolled, 0, card, "", ""},
		{"in the middle of one", keptJSON(rotate.Saved{Gen: 1, Phase: rotate.Install, Key: rolled, OldKey: card, Store: card}), card, 1, card, "", ""},
		{"another cluster's", keptJSON(rotate.Saved{Gen: 1, Phase: rotate.Done, Key: rolled, Store: old}), card, 0, card, "another cluster", ""},
		{"corrupt", "{not json", nil, 0, nil, "", "ews1.secrets.json are corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := rotateConfig(t, dir, card)
			if tt.kept != "" {
				if err := os.WriteFile(filepath.Join(dir, "ews1.secrets.json"), []byte(tt.kept), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			b, err := mapConfig(cfg)
			if tt.errSays != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSays) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("err %v, want one naming %s/ews1.secrets.json", err, dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.clusterKey, tt.key) || !bytes.Equal(b.state.Key, tt.key) || len(b.state.Keys) != tt.keys || !bytes.Equal(b.storeKey, tt.store) {
				t.Errorf("key %x (state %x, %d more), store %x; want %x, %d more, store %x", b.clusterKey[:4], b.state.Key[:4], len(b.state.Keys), b.storeKey[:4], tt.key[:4], tt.keys, tt.store[:4])
			}
			if notes := strings.Join(b.security.Notes, "\n"); tt.note != "" && !strings.Contains(notes, tt.note) {
				t.Errorf("notes %q, want %q", notes, tt.note)
			}
		})
	}
}

func keptJSON(s rotate.Saved) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A board offers a rotation to another only over HTTPS on its
// certificate: without TLS the offer is refused (such a board needs a new
// board bundle).
func TestRotatePushNeedsACertificate(t *testing.T) {
	n := &Node{boot: bootOf(t, rotateConfig(t, t.TempDir(), newKey(t))), log: slog.New(slog.DiscardHandler)}
	w := httptest.NewRecorder()
	n.serveRotatePush(w, httptest.NewRequest(http.MethodPost, PushPath, strings.NewReader("sealed")))
	if w.Code != http.StatusForbidden {
		t.Fatalf("an offer without a certificate: %d %s, want 403", w.Code, w.Body)
	}
}

// A backup names the cluster by its store secret's id: a board on a
// rotation's kept secrets and one on the card agree (ews cluster backup
// refuses boards it takes for two clusters).
func TestBackupKeyIDSurvivesRotation(t *testing.T) {
	card := newKey(t)
	dir := t.TempDir()
	cfg := rotateConfig(t, dir, card)
	onCard := &Node{boot: bootOf(t, cfg)}
	kept := keptJSON(rotate.Saved{Gen: 1, Phase: rotate.Done, Key: newKey(t), Session: newKey(t), Store: card})
	if err := os.WriteFile(filepath.Join(dir, "ews1.secrets.json"), []byte(kept), 0o600); err != nil {
		t.Fatal(err)
	}
	rotated := &Node{boot: bootOf(t, cfg)}
	if bytes.Equal(rotated.boot.clusterKey, card) {
		t.Fatal("the kept secrets were not taken")
	}
	if a, b := onCard.backupOptions().Cluster, rotated.backupOptions().Cluster; !a.Same(b) {
		t.Fatalf("the board on its card names the cluster %v, the rotated one %v", a, b)
	}
}

// The automation's requests carry the board credential of the rotation
// the board is on, whatever generation its rules were built with; a
// user's token passes as it is.
func TestActorDoorSendsTheCurrentBoardCredential(t *testing.T) {
	n := &Node{log: slog.New(slog.DiscardHandler)}
	n.acc.rotation = &rotation{}
	cur := "ewsb_generation2"
	n.acc.rotation.boardCred.Store(&cur)
	var got string
	n.web.handler = http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Get("Authorization") })
	for sent, want := range map[string]string{
		"Bearer ewsb_generation0": "Bearer ewsb_generation2",
		"Bearer ewsb_generation1": "Bearer ewsb_generation2",
		"Bearer ews_usertoken":    "Bearer ews_usertoken",
	} {
		r := httptest.NewRequest(http.MethodPost, "/api/devices/relay1/turn_on", nil)
		r.Header.Set("User-Agent", "ews-rule-1")
		r.Header.Set("Authorization", sent)
		n.actorDoor().ServeHTTP(httptest.NewRecorder(), r)
		if got != want {
			t.Errorf("sent %q: the door passed %q, want %q", sent, got, want)
		}
	}
}

// A board that missed a rotation takes one offered on a board's
// certificate when the admin signed it, whatever it hears; one sealed
// under the store secret (on every card) but not signed is refused.
func TestRotatePushSigned(t *testing.T) {
	card := newKey(t)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	n := &Node{boot: bootOf(t, rotateConfig(t, t.TempDir(), card)), log: slog.New(slog.DiscardHandler)}
	n.sec.server, n.sec.verify = &tls.Config{}, pub // TLS on, the bundle's verify key
	n.acc.rotation = &rotation{roller: rotate.New(rotate.Options{Self: "ews1", State: durable.NewAlone(nil), Saved: n.boot.rotated, Verify: pub, Log: n.log})}
	next, session := newKey(t), newKey(t)
	signed, _ := rotate.Seal(card, rotate.Doc{Gen: 1, Phase: rotate.Done, Key: next, Session: session, Sig: ed25519.Sign(priv, rotate.Signed(1, next, session))})
	forged, _ := rotate.Seal(card, rotate.Doc{Gen: 2, Phase: rotate.Done, Key: newKey(t), Session: newKey(t)})
	leaf := &x509.Certificate{Subject: pkix.Name{CommonName: "ews2"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	offer := func(body []byte) int {
		r := httptest.NewRequest(http.MethodPost, PushPath, bytes.NewReader(body))
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
		w := httptest.NewRecorder()
		n.serveRotatePush(w, r)
		return w.Code
	}
	if code := offer(forged); code != http.StatusForbidden {
		t.Fatalf("an offer not signed by the admin: %d, want 403", code)
	}
	if code := offer(signed); code != http.StatusOK || !bytes.Equal(n.acc.rotation.roller.Saved().Key, next) {
		t.Fatalf("a signed offer: %d, key taken %v", code, bytes.Equal(n.acc.rotation.roller.Saved().Key, next))
	}
}

// A board whose config names a state_dir that is not made yet (its first
// start) keeps the rotation's secrets there, where its next start, the dir
// made by then, looks for them; before, the first start chose the file
// beside the config and the restart came back on the card's key.
func TestRotatedSecretsPathUnderAStateDirNotMadeYet(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	key := newKey(t)
	doc := "[node]\nname = \"ews1\"\nstate_dir = \"" + state + "\"\n[cluster]\nkey = \"" + base64.StdEncoding.EncodeToString(key) +
		"\"\npeers = [\"ews1=127.0.0.1:1\", \"ews2=127.0.0.1:2\", \"ews3=127.0.0.1:3\"]\n"
	path := filepath.Join(dir, "ews1.toml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(path, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	b, err := mapConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(state, "secrets.json"); b.secretsPath != want {
		t.Errorf("secrets kept at %q, want %q", b.secretsPath, want)
	}
}

// noQuorumState is the durable log on a side without a majority.
type noQuorumState struct{ *durable.Alone }

func (noQuorumState) Apply(context.Context, string, []byte, uint64) (uint64, error) {
	return 0, &durable.NoQuorumError{Reachable: 1, Voters: 3}
}
