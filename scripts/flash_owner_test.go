package scripts_test

import (
	"bytes"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ews-firmware/ews/node/users"
)

// TestFlashFromBackupFirstBoot boots a card made by flash.sh --from-backup
// the way systemd does (systemd-sysusers, then systemd-tmpfiles, each with
// --root on the card) and reads the stores as the unit's user: issue 45's
// rebuilt board could not, since tmpfiles refused to give ews the files
// root wrote in a directory ews owned ("unsafe path transition"), and
// `ews run` exited at every start.
func TestFlashFromBackupFirstBoot(t *testing.T) {
	if hostEws == "" {
		t.Skip("no ews binary for this machine")
	}
	if os.Geteuid() != 0 {
		t.Skip("the card's owners need root (CI runs as root)")
	}
	for _, tool := range []string{"systemd-sysusers", "systemd-tmpfiles"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s: %v (Debian's systemd package)", tool, err)
		}
	}
	c := newCard(t)
	// a fresh OS image: root only; systemd-sysusers adds the rest at first boot
	write(t, filepath.Join(c.root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n", 0o644)
	write(t, filepath.Join(c.root, "etc", "group"), "root:x:0:\n", 0o644)
	write(t, filepath.Join(c.root, "etc", "shadow"), "root:*:19000:0:99999:7:::\n", 0o600)
	write(t, filepath.Join(c.root, "etc", "gshadow"), "root:*::\n", 0o600)
	a := backupArchive(stringsSplit(peers))
	a.Config = storeText
	a.Manifest.ConfigVersion = 7
	a.Users = &users.Doc{Version: 3, Users: []users.User{{Name: users.AdminName, Role: users.RoleAdmin}}}
	args := append(dropArg(c.flashArgs(), "--peers"), "--from-backup", writeArchive(t, a))
	if out, code := run(t, "flash.sh", args...); code != 0 {
		t.Fatalf("flash.sh: exit %d:\n%s", code, out)
	}
	// the first boot: users, then the package's directories and owners
	for _, step := range [][]string{{"systemd-sysusers", "--root=" + c.root}, {"systemd-tmpfiles", "--root=" + c.root, "--create"}} {
		out, err := exec.Command(step[0], step[1:]...).CombinedOutput()
		if err != nil || bytes.Contains(out, []byte("unsafe path transition")) {
			t.Errorf("%s: %v\n%s", strings.Join(step, " "), err, out)
		}
	}
	uid, gid := cardIDs(t, c.root, "ews")
	// the card's directories, then each store, as user ews sees them
	// (by the card's ids: the card's files are checked, not this machine's)
	for _, dir := range []string{"var", "var/lib", "var/lib/ews"} {
		fi, err := os.Stat(filepath.Join(c.root, dir))
		if err != nil {
			t.Fatal(err)
		}
		if !may(fi, uid, gid, 0o1) {
			u, g := owner(fi)
			t.Errorf("/%s (%v, owner %d:%d): user ews cannot pass", dir, fi.Mode(), u, g)
		}
	}
	for _, f := range []string{"config.json", "users.json"} {
		p := filepath.Join(c.root, "var/lib/ews", f)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if u, g := owner(fi); u != uid || g != gid || fi.Mode() != 0o600 {
			t.Errorf("/var/lib/ews/%s: %v %d:%d, want -rw------- ews:ews (%d:%d)", f, fi.Mode(), u, g, uid, gid)
		}
		// and read for real by that uid (the temp dirs above the card let it pass)
		for d := filepath.Dir(c.root); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("head", "-c", "1", p)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		if out, err := cmd.CombinedOutput(); err != nil || len(out) != 1 {
			t.Errorf("user ews reads /var/lib/ews/%s: %v %q", f, err, out)
		}
	}
}

func stringsSplit(s string) []string { return strings.Split(s, ",") }

// cardIDs is name's uid and gid in the card's /etc/passwd.
func cardIDs(t *testing.T, root, name string) (uint32, uint32) {
	t.Helper()
	for _, l := range strings.Split(testutil.ReadFile(t, filepath.Join(root, "etc", "passwd")), "\n") {
		f := strings.Split(l, ":")
		if len(f) > 3 && f[0] == name {
			u, err1 := strconv.ParseUint(f[2], 10, 32)
			g, err2 := strconv.ParseUint(f[3], 10, 32)
			if err1 != nil || err2 != nil {
				t.Fatalf("passwd: %q", l)
			}
			return uint32(u), uint32(g)
		}
	}
	t.Fatalf("the card has no user %s after systemd-sysusers", name)
	return 0, 0
}

func owner(fi os.FileInfo) (uint32, uint32) {
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid
}

// may says whether uid:gid has the permission bits want (r=4 w=2 x=1) on fi.
func may(fi os.FileInfo, uid, gid uint32, want os.FileMode) bool {
	u, g := owner(fi)
	m := fi.Mode().Perm()
	switch {
	case u == uid:
		return (m>>6)&want == want
	case g == gid:
		return (m>>3)&want == want
	}
	return m&want == want
}
