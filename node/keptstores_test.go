package node

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/boardpage"
)

// A kept store the board cannot read never stops it (issue 45): it serves,
// and its Board page names the store, the file and the fix. Before, an
// unreadable users.json made `ews run` exit 1 and systemd restart it for
// ever.
func TestKeptStoreUnreadable(t *testing.T) {
	cases := []struct {
		name, store string
		spoil       func(t *testing.T, dir string)
	}{
		{"users store does not decode", "users", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "users.json"), "{not json")
		}},
		{"users store cannot be read", "users", func(t *testing.T, dir string) {
			mkdir(t, filepath.Join(dir, "users.json")) // read(2) fails: EISDIR, as root too
		}},
		{"config store does not decode", "config", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "config.json"), "{not json")
		}},
		{"config store cannot be read", "config", func(t *testing.T, dir string) {
			mkdir(t, filepath.Join(dir, "config.json"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.spoil(t, dir)
			cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\nstate_dir = \""+dir+
				"\"\n[http]\nauth = \"token\"\ntoken = \"board-test-token-1\"\nshutdown_timeout = \"5s\"\n[sim]\n"))
			if err != nil {
				t.Fatal(err)
			}
			_, base, _, _ := startNode(t, cfg) // fails the test if the board does not serve
			probs := boardProblems(t, base, bearer)
			if len(probs) != 1 {
				t.Fatalf("problems = %+v, want one for the %s store", probs, c.store)
			}
			p := probs[0]
			path := filepath.Join(dir, c.store+".json")
			if p.Store != c.store || p.Path != path || p.Error == "" || !strings.Contains(p.Fix, path) {
				t.Errorf("problem = %+v, want store %s, path %s and a fix naming it", p, c.store, path)
			}
			if got := boardProblems(t, base, nil); len(got) != 0 {
				t.Errorf("anonymous clients see %+v", got)
			}
		})
	}
}

// The users store of a board that could not read its kept file is written
// anew on the next change: the board heals itself.
func TestKeptUsersStoreHeals(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "users.json"), "{not json")
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\nstate_dir = \""+dir+
		"\"\n[http]\nauth = \"token\"\ntoken = \"board-test-token-1\"\nshutdown_timeout = \"5s\"\n[sim]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, base, _, _ := startNode(t, cfg)
	if code, _, m := getJSON(t, "POST", base+"/api/users", strings.NewReader(`{"name":"v1","role":"viewer"}`), bearer); code != http.StatusCreated {
		t.Fatalf("create = %d %v", code, m)
	}
	b, err := os.ReadFile(filepath.Join(dir, "users.json"))
	if err != nil || !json.Valid(b) || !strings.Contains(string(b), `"v1"`) {
		t.Errorf("users.json after a change: %v %q", err, b)
	}
}

func boardProblems(t *testing.T, base string, hdr map[string]string) []boardpage.StoreProblem {
	t.Helper()
	code, _, body := send(t, "GET", base+"/api/board", nil, hdr)
	var b boardpage.BoardInfo
	if err := json.Unmarshal(body, &b); err != nil || code != 200 {
		t.Fatalf("GET /api/board = %d %v", code, err)
	}
	return b.Problems
}

func write(t *testing.T, path, text string) {
	t.Helper()
	testutil.WriteFile(t, path, []byte(text), 0o600)
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
}
