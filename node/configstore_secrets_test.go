package node

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// A PUT of the configuration store whose secret file keys name anything
// but a file under the board's [node] secrets_dir is refused with 400 and
// the line and key, and nothing commits (issue 50: an admin's web token
// pointed [mqtt] password_file at the card's bundle, which the bridge
// then sent to a broker the same config named).
func TestConfigStoreRefusesSecretFilesOutsideSecretsDir(t *testing.T) {
	secrets := t.TempDir()
	token := filepath.Join(secrets, "token") // the board's own token, kept among the secrets
	password := filepath.Join(secrets, "mqtt.password")
	for f, body := range map[string]string{token: "board-test-token-1\n", password: "broker-pass\n"} {
		testutil.WriteFile(t, f, []byte(body), 0o600)
	}
	outside := filepath.Join(filepath.Dir(secrets), "board.bundle") // a bundle beside the secrets dir
	testutil.WriteFile(t, outside, []byte("cert_key = sekrit\n"), 0o600)
	if err := os.Symlink(outside, filepath.Join(secrets, "link")); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\nsecrets_dir = \""+secrets+"\"\n"+
		"[http]\nauth = \"token\"\ntoken_file = \""+token+"\"\nshutdown_timeout = \"5s\"\n[sim]\ndevice_latency = \"1ms\"\n"+
		"[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, base, _, _ := startNode(t, cfg)
	var text string
	testutil.Eventually(t, "the store seeded", func() bool {
		code, _, body := do(t, "GET", base+"/api/config", "", bearer)
		text = body
		return code == 200
	})
	put := func(file string) (int, string) {
		code, _, body := do(t, "PUT", base+"/api/config", text+"\n[mqtt]\nbroker = \"127.0.0.1:1\"\nuser = \"u\"\npassword_file = \""+file+"\"\n",
			map[string]string{"Authorization": bearer["Authorization"], "If-Match": `"1"`})
		return code, body
	}
	line := strconv.Itoa(strings.Count(text, "\n") + 5)
	for _, c := range []struct{ name, file, want string }{
		{"the packaged bundle", "/etc/ews/cluster.bundle", "is not under node.secrets_dir"},
		{"out through ..", secrets + "/../board.bundle", "is not under node.secrets_dir"},
		{"out through a link", filepath.Join(secrets, "link"), "is not under node.secrets_dir"},
		{"the board's own token", token, "this board's http.token_file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := put(c.file)
			if code != 400 || !strings.Contains(body, c.want) || !strings.Contains(body, `"key":"mqtt.password_file"`) || !strings.Contains(body, `"line":`+line) {
				t.Fatalf("%d %s: want 400 naming mqtt.password_file at line %s: %s", code, body, line, c.want)
			}
		})
	}
	if code, _, body := do(t, "GET", base+"/api/config", "", bearer); code != 200 || strings.Contains(body, "password_file") {
		t.Fatalf("a refused PUT changed the store: %d %s", code, body)
	}
	if code, body := put(password); code != 200 {
		t.Fatalf("a password file under secrets_dir: %d %s", code, body)
	}
}
