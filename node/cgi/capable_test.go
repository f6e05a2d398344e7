//go:build linux

package cgi

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// The packaged case: ews is not root but holds CAP_SETUID, CAP_SETGID and
// CAP_KILL, its binary is 0750 and its own (an uploaded firmware slot),
// and [cgi] user is someone else. The program runs as that user (the box
// switches after its exec, so it need not execute ews's binary), with no
// capabilities, and a timeout still kills its group (CAP_KILL: the
// processes are no longer ews's). Played by a copy of this test binary run
// as nobody, with daemon as [cgi] user.
func TestCapableNonRootEws(t *testing.T) {
	if dir := os.Getenv("EWS_CGI_CAPABLE_DIR"); dir != "" {
		capableChild(t, dir)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to play a non-root ews with capabilities")
	}
	ews, err1 := user.Lookup("nobody")
	cgiUser, err2 := user.Lookup("daemon")
	if err1 != nil || err2 != nil {
		t.Skip("needs users nobody and daemon")
	}
	uid, _ := strconv.Atoi(ews.Uid)
	gid, _ := strconv.Atoi(ews.Gid)
	dir := testutil.OpenTempDir(t)
	// ews's binary: 0750, nobody:nogroup; daemon may not execute it
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ews.test")
	copyFile(t, self, bin)
	if err := os.Chown(bin, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bin, 0o750); err != nil {
		t.Fatal(err)
	}
	cgiDir := filepath.Join(dir, "cgi")
	scratch := filepath.Join(dir, "scratch") // where programs write their pids
	for _, d := range []string{cgiDir, scratch} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(scratch, 0o777); err != nil {
		t.Fatal(err)
	}
	writeProgram(t, cgiDir, "who", "printf 'Content-Type: text/plain\\r\\n\\r\\n'\necho \"uid=$(id -u)\"\ngrep -E '^Cap(Prm|Eff|Amb)' /proc/self/status\n")
	writeProgram(t, cgiDir, "slow", fmt.Sprintf("sleep 60 </dev/null >/dev/null 2>&1 &\necho $! >%s/pids\necho $$ >>%s/pids\nsleep 60\n", scratch, scratch))

	cmd := exec.Command(bin, "-test.run=^TestCapableNonRootEws$", "-test.v")
	cmd.Env = append(os.Environ(), "EWS_CGI_CAPABLE_DIR="+dir, "EWS_CGI_CAPABLE_USER="+cgiUser.Username)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential:  &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
		AmbientCaps: []uintptr{capSetuid, capSetgid, capKill},
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "capable child: ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "uid="+cgiUser.Uid) {
		t.Fatalf("the program did not run as %s:\n%s", cgiUser.Username, out)
	}
}

// The capabilities the non-root ews is given (packaging/ews.service).
const (
	capKill   = 5
	capSetgid = 6
	capSetuid = 7
)

// capableChild is the non-root ews: it serves both programs.
func capableChild(t *testing.T, dir string) {
	if os.Geteuid() == 0 {
		t.Fatal("the child runs as root")
	}
	h := mustNew(t, Config{Dir: filepath.Join(dir, "cgi"), User: os.Getenv("EWS_CGI_CAPABLE_USER"), Timeout: 20 * time.Second}, Options{})
	// 20 s: the box costs two execs of this (race-built) binary, seconds on
	// a loaded machine; the test asserts the answer, not a speed
	w := serve(h, "GET", "/cgi-bin/who")
	out := w.Body.String()
	fmt.Print(out)
	if w.Code != 200 || strings.Contains(out, "uid="+strconv.Itoa(os.Geteuid())) {
		t.Fatalf("who: %d %s", w.Code, out)
	}
	for _, want := range []string{"CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapAmb:\t0000000000000000"} {
		if !strings.Contains(out, want) {
			t.Fatalf("who lacks %q: %s", want, out)
		}
	}
	// the client leaves once the program and its child run: the same kill
	// as a timeout's, with no race between the box's start and a short one
	pidfile := filepath.Join(dir, "scratch", "pids")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := serveAsync(h, httptest.NewRequest("GET", "/cgi-bin/slow", nil).WithContext(ctx))
	testutil.Eventually(t, "slow started its child", func() bool { return len(pids(t, pidfile)) == 2 })
	cancel()
	if w = within(t, done, 20*time.Second); w.Code != 502 || !strings.Contains(w.Body.String(), "killed") {
		t.Fatalf("slow: %d %s", w.Code, w.Body)
	}
	allGone(t, "the program and its child, another user's, are killed", pids(t, filepath.Join(dir, "scratch", "pids")))
	fmt.Println("capable child: ok")
}

func writeProgram(t *testing.T, dir, name, body string) {
	t.Helper()
	testutil.WriteFile(t, filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
