package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// CGI in a box (docs/NOTES.md "CGI in a box"), through the real binary: a CGI program runs in the box
// that `ews run` re-executes itself as, as [cgi] user, under the limits;
// it cannot read a 0600 secret or the board's /proc/PID/environ, has no
// capabilities, and a background child holding stdout does not hold the
// answer.
func TestCGIBoxThroughTheBinary(t *testing.T) {
	nobody := testutil.Nobody(t)
	dir := testutil.OpenTempDir(t)
	secret := filepath.Join(dir, "token")
	if err := os.WriteFile(secret, []byte("sekrit-e2e\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cgi := filepath.Join(dir, "cgi-bin")
	if err := os.Mkdir(cgi, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`#!/bin/sh
printf 'Content-Type: text/plain\r\n\r\n'
echo "uid=$(id -u)"
cat %s || echo "token: refused"
cat /proc/%s/environ || echo "environ: refused"
grep -E '^Cap(Eff|Amb)' /proc/self/status
grep -E 'Max (cpu time|address space)' /proc/self/limits
sleep 120 &
`, secret, "EWS_PID")
	boards, _ := layout(t, 1)
	b := boards[0]
	doc := fmt.Sprintf("[node]\nname = %q\nhttp = %q\n[http]\nauth = \"none\"\n[cgi]\ndir = %q\ntimeout = \"60s\"\nuser = \"nobody\"\ncpu_seconds = 7\n[sim]\n", b.name, b.http, cgi)
	b.cfg = filepath.Join(dir, "ews.toml")
	if err := os.WriteFile(b.cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	b.start(t, ewsBinary(t))
	script = strings.Replace(script, "EWS_PID", fmt.Sprint(b.cmd.Process.Pid), 1)
	if err := os.WriteFile(filepath.Join(cgi, "peek"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyWithin(t, "board ready", 20*time.Second, func() bool {
		resp, err := http.Get("http://" + b.http + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + b.http + "/cgi-bin/peek")
	if err != nil {
		t.Fatalf("no answer while a background child holds stdout: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := string(body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	for _, want := range []string{"uid=" + nobody.Uid, "token: refused", "environ: refused",
		"CapEff:\t0000000000000000", "CapAmb:\t0000000000000000", "Max cpu time              7", "Max address space         268435456"} {
		if !strings.Contains(out, want) {
			t.Errorf("answer lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sekrit") {
		t.Fatalf("the program read a secret:\n%s", out)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") {
		t.Errorf("CSP %q", csp)
	}
}
