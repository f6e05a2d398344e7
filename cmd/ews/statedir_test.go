package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/bootconf"
)

// TestMain keeps the boards these tests build (ews run, config check) off
// the machine's default state_dir, as node's tests are: where /var/lib/ews
// existed, `config check` warned of a "store this board keeps" that
// another test's board had left there, and a board run here would take
// its users store and write its own files there.
func TestMain(m *testing.M) {
	bootconf.NoDefaultStateDir = true
	os.Exit(m.Run())
}

// envStateDirChild marks the run of TestOffTheDefaultStateDir inside its
// own mount namespace.
const envStateDirChild = "EWS_TEST_STATE_DIR_CHILD"

// The tests never read or write the default state_dir, even where it
// exists and holds a board's files. The test runs itself again in a mount
// namespace of its own with a tmpfs on /var/lib, so that the default
// exists there (a kept configuration store that differs from the boot
// file) and the machine's own /var/lib is not touched; there `ews config
// check` must not see the store and `ews run` must write nothing there.
func TestOffTheDefaultStateDir(t *testing.T) {
	if os.Getenv(envStateDirChild) == "1" {
		offTheDefaultStateDir(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (a mount namespace with a tmpfs on /var/lib)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare (util-linux)")
	}
	script := fmt.Sprintf(`mount -t tmpfs tmpfs %s && mkdir -m 0751 %s && exec "$0" -test.run '^TestOffTheDefaultStateDir$' -test.count=1 -test.v`,
		filepath.Dir(config.DefaultStateDir), config.DefaultStateDir)
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script, os.Args[0])
	cmd.Env = append(os.Environ(), envStateDirChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestOffTheDefaultStateDir") {
		t.Fatalf("the run in its own namespace: %v\n%s", err, out)
	}
}

// offTheDefaultStateDir is the test inside the namespace, where
// config.DefaultStateDir is an empty tmpfs directory of its own.
func offTheDefaultStateDir(t *testing.T) {
	dir := config.DefaultStateDir
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("%s: %v", dir, err)
	}
	kept, _ := json.Marshal(map[string]any{"v": 1, "versions": []map[string]any{{"version": 4, "text": "[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\n"}}})
	if err := os.WriteFile(filepath.Join(dir, "config.json"), kept, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// a board on real hardware (no [sim]): the one the default is for
	p := filepath.Join(t.TempDir(), "ews.toml")
	doc := fmt.Sprintf("[node]\nname = \"ews1\"\nhttp = %q\n[http]\nauth = \"none\"\n", ln.Addr().String())
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, out, errs := run("config", "check", p); strings.Contains(out+errs, "this board keeps") {
		t.Errorf("config check read the default state_dir's store:\n%s%s", out, errs)
	}
	if code, _, errs := run("run", "--config", p); code != exitError || !strings.Contains(errs, "address in use") {
		t.Errorf("run: exit %d %q; want 1, address in use", code, errs)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"config.json"}) {
		t.Errorf("%s holds %v after the tests' board: want only the kept store put there", dir, names)
	}
}
