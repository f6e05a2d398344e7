package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// mustRun runs ews with args and returns what it printed; t fails
// unless it exits 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := run(args...)
	if code != exitOK {
		t.Fatalf("ews %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	bad := filepath.Join(dir, "bad.toml")
	notoken := filepath.Join(dir, "notoken.toml")
	testutil.WriteFile(t, notoken, []byte("[node]\nhttp = \"127.0.0.1:0\"\n[http]\ntoken_file = \"/nonexistent/token\"\n"), 0o600)
	invalid := filepath.Join(dir, "invalid.toml")
	testutil.WriteFile(t, invalid, []byte("[node]\nname = \"ews1\"\ncapacity = -2\n"), 0o600)
	token := filepath.Join(dir, "token")
	testutil.WriteFile(t, token, []byte("s3cret\n"), 0o600)
	testutil.WriteFile(t, good, []byte("[node]\nname = \"ews1\"\n[http]\ntoken_file = \""+token+"\"\n"), 0o600)
	testutil.WriteFile(t, bad, []byte("[node]\nname = \"ews1\"\ncapacity = -2\nspeed = 1\n"), 0o600)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no args", nil, 2, "", "Usage:"},
		{"help", []string{"--help"}, 0, "", "ews run"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"version", []string{"version"}, 0, runtime.GOOS + "/" + runtime.GOARCH, ""},
		{"version extra arg", []string{"version", "x"}, 2, "", "unexpected argument"},
		{"config init", []string{"config", "init"}, 0, "[cluster]", ""},
		{"config check good", []string{"config", "check", good}, 0, "ok (board ews1", ""},
		{"config check bad", []string{"config", "check", bad}, 1, "", bad + ":4:1: node.speed: unknown key"},
		{"config check missing", []string{"config", "check", filepath.Join(dir, "nope.toml")}, 1, "", "nope.toml"},
		{"config no sub", []string{"config"}, 2, "", "Usage: ews config"},
		{"run bad flag", []string{"run", "--nope"}, 2, "", "flag provided but not defined"},
		{"run bad log format", []string{"run", "--log-format", "xml"}, 2, "", "bad --log-format"},
		{"run bad config", []string{"run", "--config", invalid}, 1, "", invalid + ":3: node.capacity: must be at least 1"},
		{"run token file missing", []string{"run", "--config", notoken}, 1, "", notoken + ":4: http.token_file: cannot read the token"},
		{"demo bad nodes", []string{"demo", "--nodes", "0"}, 1, "", "--nodes 0"},
		{"demo bad log level", []string{"demo", "--log-level", "loud"}, 2, "", "bad --log-level \"loud\""},
	}
	for _, c := range commands() {
		tests = append(tests, struct {
			name   string
			args   []string
			code   int
			stdout string
			stderr string
		}{c.name + " --help", []string{c.name, "--help"}, 0, "", "Usage: ews " + c.name})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errs)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Fatalf("stdout %q lacks %q", out, tt.stdout)
			}
			if !strings.Contains(errs, tt.stderr) {
				t.Fatalf("stderr %q lacks %q", errs, tt.stderr)
			}
			if strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic") {
				t.Fatalf("stack trace on stderr: %s", errs)
			}
		})
	}
}

// TestConfigInitRoundTrip: what `config init` prints, `config check` accepts.
func TestConfigInitRoundTrip(t *testing.T) {
	code, out, _ := run("config", "init")
	if code != 0 {
		t.Fatal(code)
	}
	// The example names the board's token file; check reads it as run
	// does, so point it at one that exists here.
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	testutil.WriteFile(t, token, []byte("s3cret\n"), 0o600)
	if !strings.Contains(out, `"/etc/ews/token"`) {
		t.Fatal("example no longer names /etc/ews/token; update this test")
	}
	out = strings.Replace(out, `"/etc/ews/token"`, strconv.Quote(token), 1)
	p := filepath.Join(dir, "ews.toml")
	testutil.WriteFile(t, p, []byte(out), 0o600)
	if code, _, errs := run("config", "check", p); code != 0 {
		t.Fatalf("check of init output: exit %d: %s", code, errs)
	}
}

func TestStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/cluster" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"epoch":3,"master":"ews2","version":9,"self":"ews1","queue":{"control":1,"browse":4},
		"nodes":[{"name":"ews1","rank":0,"linknum":1,"capacity":2,"runstate":"down","load":{"cpu":0.5,"mem":0.25},"last_seen_ms":1500},
		{"name":"ews2","rank":1,"linknum":2,"capacity":2,"runstate":"running","load":{"cpu":0.1,"mem":0.2},"last_seen_ms":0}]}`)
	}))
	defer srv.Close()
	code, out, errs := run("status", "--url", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"master ews2, epoch 3", "ews1", "board*", "down", "1/2", "50%", "1.5s ago", "master ", "queue: browse=4 control=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run("status", "--url", srv.URL, "--json")
	if code != 0 || !strings.Contains(out, `"epoch":3`) {
		t.Fatalf("--json: exit %d %q", code, out)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	if code, _, errs := run("status", "--url", deadURL); code != 1 || !strings.Contains(errs, "cannot reach") {
		t.Fatalf("dead URL: exit %d %q", code, errs)
	}
	if code, _, errs := run("status", "--url", srv.URL+"/nothing"); code != 1 || !strings.Contains(errs, "404") {
		t.Fatalf("not a board: exit %d %q", code, errs)
	}
}

func TestRunPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := filepath.Join(t.TempDir(), "ews.toml")
	doc := fmt.Sprintf("[node]\nname = \"ews1\"\nhttp = %q\n[http]\nauth = \"none\"\n", ln.Addr().String())
	testutil.WriteFile(t, p, []byte(doc), 0o600)
	code, _, errs := run("run", "--config", p)
	if code != 1 || !strings.Contains(errs, "address in use") || !strings.Contains(errs, ln.Addr().String()) {
		t.Fatalf("exit %d, stderr %q; want 1 and address in use naming the port", code, errs)
	}
}
