package hal

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/sandbox"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// commandDevice opens one command device running sh -c script.
func commandDevice(t *testing.T, script, timeout string, box *sandbox.Box) *Devices {
	t.Helper()
	doc := fmt.Sprintf("[[device]]\nname = \"c\"\ndriver = \"command\"\ncommand = [\"sh\", \"-c\", %q]\n", script)
	if timeout != "" {
		doc += "timeout = \"" + timeout + "\"\n"
	}
	ds, err := New(parse(t, doc), Options{Programs: box})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = ds.Close() })
	return ds
}

// valueOf runs a read of device c and returns its value as text.
func valueOf(t *testing.T, ds *Devices) string {
	t.Helper()
	s, err := ds.Do(t.Context(), "c", Action{Kind: Read})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return fmt.Sprint(s.Value)
}

// A command device's program runs like a CGI program (issue 50): an
// environment built from nothing (ews's own, where systemd or a shell may
// have put secrets, never reaches it) and rlimits. It used to inherit
// ews's whole environment and run without limits.
func TestCommandRunsInTheBox(t *testing.T) {
	t.Setenv("EWS_TEST_SECRET", "sekrit-env")
	t.Setenv("EWS_CONFIG", "/etc/ews/ews.toml")
	cases := []struct {
		name, script string
		want, not    []string
	}{
		{"a clean environment", `env | tr '\n' ' '`, []string{"EWS_DEVICE=c", "EWS_ACTION=read", "PATH="}, []string{"sekrit", "EWS_CONFIG", "HOME="}},
		{"rlimits", `grep -E 'Max (cpu time|address space)' /proc/self/limits | tr -s ' '`,
			[]string{"Max cpu time " + strconv.Itoa(sandbox.DefaultCPUSeconds), "Max address space " + strconv.Itoa(sandbox.DefaultMaxMemory)}, nil},
		{"in /", `[ "$(pwd)" = / ] && echo in-root`, []string{"in-root"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := valueOf(t, commandDevice(t, c.script, "20s", nil))
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("value lacks %q: %q", w, got)
				}
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("value has %q: %q", n, got)
				}
			}
		})
	}
}

// At its timeout a command device's program is killed with everything it
// started; a background child used to live on.
func TestCommandTimeoutKillsItsChildren(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	ds := commandDevice(t, fmt.Sprintf("sleep 60 </dev/null >/dev/null 2>&1 & echo $! >%s; sleep 60", pidfile), "2s", nil)
	if _, err := ds.Do(t.Context(), "c", Action{Kind: Read}); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err %v, want a timeout", err)
	}
	b, _ := os.ReadFile(pidfile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the program wrote no pid: %q", b)
	}
	testutil.Eventually(t, "the background child is killed", func() bool { return testutil.Gone(pid) })
}

// With the box's user (ews-cgi on a board; nobody here, as root), a
// command device cannot read what only ews may: the card's keys under
// /etc/ews (root:ews 0770) and state_dir's files (ews's, 0600). The
// review's program printed the card's cert_key into a device value
// anonymous clients read.
func TestCommandCannotReadEwsFiles(t *testing.T) {
	nobody := testutil.Nobody(t)
	root := testutil.OpenTempDir(t)
	etc := filepath.Join(root, "etc-ews")
	if err := os.Mkdir(etc, 0o770); err != nil { // as packaging/tmpfiles.conf: root:ews 0770
		t.Fatal(err)
	}
	state := filepath.Join(root, "state")
	if err := os.Mkdir(state, 0o751); err != nil { // /var/lib/ews 0751
		t.Fatal(err)
	}
	bundle, kept := filepath.Join(etc, "cluster.bundle"), filepath.Join(state, "secrets.json")
	for _, f := range []string{bundle, kept} {
		testutil.WriteFile(t, f, []byte("cert_key = sekrit\n"), 0o600)
	}
	box, err := sandbox.New(sandbox.Config{User: "nobody", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	got := valueOf(t, commandDevice(t, fmt.Sprintf("id -u; cat %s %s 2>/dev/null; echo done", bundle, kept), "20s", box))
	if strings.Contains(got, "sekrit") {
		t.Fatalf("the program read ews's files: %q", got)
	}
	if !strings.HasPrefix(got, nobody.Uid) || !strings.HasSuffix(got, "done") {
		t.Fatalf("value %q: want the program run as nobody (%s) to its end", got, nobody.Uid)
	}
	// the same program as ews itself (a laptop) reads them: the test can fail
	if got := valueOf(t, commandDevice(t, fmt.Sprintf("cat %s", bundle), "20s", sandbox.Own())); !strings.Contains(got, "sekrit") {
		t.Fatalf("as ews the program could not read the file either (%q): the check above proves nothing", got)
	}
}
