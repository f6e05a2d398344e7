package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// Keys that name a file a secret is read from and sent away ([mqtt]
// password_file, key_file) take only files under [node] secrets_dir,
// symlinks and .. resolved, and never the board's own bundle, key or
// token file nor state_dir (issue 50: password_file pointed at the card's
// bundle shipped it to the broker). Each refusal names its key and line.
func TestSecretFilesOnlyFromSecretsDir(t *testing.T) {
	root := t.TempDir()
	secrets, state := filepath.Join(root, "secrets"), filepath.Join(root, "state")
	for _, d := range []string{secrets, state} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	bundle := filepath.Join(root, "cluster.bundle")
	inSecrets := filepath.Join(secrets, "mqtt.password")
	for _, f := range []string{bundle, inSecrets} {
		testutil.WriteFile(t, f, []byte("x\n"), 0o600)
	}
	if err := os.Symlink(bundle, filepath.Join(secrets, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(state, filepath.Join(secrets, "state")); err != nil {
		t.Fatal(err)
	}
	node := func(dir string) string {
		return "[node]\nname = \"ews1\"\nsecrets_dir = \"" + dir + "\"\nstate_dir = \"" + state + "\"\n[http]\nauth = \"token\"\ntoken_file = \"" + filepath.Join(secrets, "token") + "\"\n"
	}
	mqtt := func(key, file string) string {
		return "[mqtt]\nbroker = \"h:1\"\nuser = \"u\"\n" + key + " = \"" + file + "\"\n" // the key on line 11
	}
	cases := []struct {
		name, doc, key, want string // want "": no problem
	}{
		{"under secrets_dir", node(secrets) + mqtt("password_file", inSecrets), "", ""},
		{"not written yet, under secrets_dir", node(secrets) + mqtt("password_file", filepath.Join(secrets, "new", "pass")), "", ""},
		{"the packaged bundle", node(secrets) + mqtt("password_file", "/etc/ews/cluster.bundle"), "mqtt.password_file", "is not under node.secrets_dir"},
		{"the default secrets_dir", "[node]\nname = \"ews1\"\n[http]\nauth = \"none\"\n" + mqtt("password_file", bundle), "mqtt.password_file", "(" + DefaultSecretsDir + ")"},
		{"out through ..", node(secrets) + mqtt("password_file", secrets+"/../cluster.bundle"), "mqtt.password_file", "is not under node.secrets_dir"},
		{"a .. that cannot be resolved", node(secrets) + mqtt("password_file", secrets+"/nope/../../cluster.bundle"), "mqtt.password_file", "cannot be resolved"},
		{"out through a link", node(secrets) + mqtt("password_file", filepath.Join(secrets, "link")), "mqtt.password_file", "is not under node.secrets_dir"},
		{"into state_dir through a link", node(secrets) + mqtt("key_file", filepath.Join(secrets, "state", "secrets.json")), "mqtt.key_file", "is not under node.secrets_dir"},
		{"the board's token", node(secrets) + mqtt("password_file", filepath.Join(secrets, "token")), "mqtt.password_file", "this board's http.token_file"},
		{"relative", node(secrets) + mqtt("password_file", "mqtt.password"), "mqtt.password_file", "want an absolute path"},
		{"secrets_dir is the root", node("/") + mqtt("password_file", inSecrets), "node.secrets_dir", "is the root"},
		{"secrets_dir is state_dir", node(state) + mqtt("password_file", filepath.Join(state, "p")), "node.secrets_dir", "overlaps node.state_dir"},
		{"secrets_dir relative", node("secrets"), "node.secrets_dir", "want an absolute directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs := ParseAll("ews.toml", []byte(c.doc))
			if c.want == "" {
				if len(errs) != 0 {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			for _, e := range errs {
				if e.Key == c.key && strings.Contains(e.Msg, c.want) && e.Line > 0 && strings.HasPrefix(e.Error(), "config: ews.toml:") {
					return
				}
			}
			t.Fatalf("errors %v: want %s: ...%s", errs, c.key, c.want)
		})
	}
}
