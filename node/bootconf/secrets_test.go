package bootconf

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/rotate"
)

// rotateConfig is a board of a three-board cluster with key, written to
// dir (a kept secrets file goes beside it); node is more of its [node] lines.
func rotateConfig(t *testing.T, dir string, key []byte, node ...string) *config.Config {
	t.Helper()
	doc := "[node]\nname = \"ews1\"\n" + strings.Join(node, "") + "[cluster]\nkey = \"" + base64.StdEncoding.EncodeToString(key) +
		"\"\npeers = [\"ews1=127.0.0.1:1\", \"ews2=127.0.0.1:2\", \"ews3=127.0.0.1:3\"]\n"
	path := filepath.Join(dir, "ews1.toml")
	testutil.WriteFile(t, path, []byte(doc), 0o600)
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
				testutil.WriteFile(t, filepath.Join(dir, "ews1.secrets.json"), []byte(tt.kept), 0o600)
			}
			b, err := Map(cfg)
			if tt.errSays != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSays) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("err %v, want one naming %s/ews1.secrets.json", err, dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.ClusterKey, tt.key) || !bytes.Equal(b.State.Key, tt.key) || len(b.State.Keys) != tt.keys || !bytes.Equal(b.StoreKey, tt.store) {
				t.Errorf("key %x (state %x, %d more), store %x; want %x, %d more, store %x", b.ClusterKey[:4], b.State.Key[:4], len(b.State.Keys), b.StoreKey[:4], tt.key[:4], tt.keys, tt.store[:4])
			}
			if notes := strings.Join(b.Security.Notes, "\n"); tt.note != "" && !strings.Contains(notes, tt.note) {
				t.Errorf("notes %q, want %q", notes, tt.note)
			}
		})
	}
}

func keptJSON(s rotate.Saved) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A backup names the cluster by its store secret's id: a board on a
// rotation's kept secrets and one on the card agree (ews cluster backup
// refuses boards it takes for two clusters).
func TestBackupKeyIDSurvivesRotation(t *testing.T) {
	card := newKey(t)
	dir := t.TempDir()
	cfg := rotateConfig(t, dir, card)
	onCard := bootOf(t, cfg)
	kept := keptJSON(rotate.Saved{Gen: 1, Phase: rotate.Done, Key: newKey(t), Session: newKey(t), Store: card})
	testutil.WriteFile(t, filepath.Join(dir, "ews1.secrets.json"), []byte(kept), 0o600)
	rotated := bootOf(t, cfg)
	if bytes.Equal(rotated.ClusterKey, card) {
		t.Fatal("the kept secrets were not taken")
	}
	if a, b := onCard.BackupOptions().Cluster, rotated.BackupOptions().Cluster; !a.Same(b) {
		t.Fatalf("the board on its card names the cluster %v, the rotated one %v", a, b)
	}
}

// A board whose state_dir is not made yet still keeps a rotation's secrets
// under it (state_dir/secrets.json), not beside the config.
func TestRotatedSecretsPathUnderAStateDirNotMadeYet(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	key := newKey(t)
	cfg := rotateConfig(t, dir, key, "state_dir = \""+state+"\"\n")
	b, err := Map(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(state, "secrets.json"); b.SecretsPath != want {
		t.Errorf("secrets kept at %q, want %q", b.SecretsPath, want)
	}
}
