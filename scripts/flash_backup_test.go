package scripts_test

import (
	"crypto/x509"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/node/backup"
)

// backupConf is ews2's boot config in the test backup.
const backupConf = `[node]
name = "ews2"
http = ":8080"
gossip = ":7947"

[cluster]
peers = ["ews1=10.0.0.11:7946", "ews2=10.0.0.12:7947", "ews3=10.0.0.13:7946"]
key_file = "/etc/ews/cluster.key"

[http]
auth = "none"

[[device]]
name = "relay1"
driver = "sim-switch"
`

// writeBackup writes a cluster backup of the test's peers to a temp file.
func writeBackup(t *testing.T, peerList []string) string {
	t.Helper()
	return writeArchive(t, backupArchive(peerList))
}

// storeText is a configuration store's document: the cluster-wide sections.
const storeText = `[[device]]
name = "relay9"
driver = "sim-switch"
`

// backupArchive is the test backup of ews2 with peerList's cluster.
func backupArchive(peerList []string) backup.Archive {
	return backup.Archive{
		Manifest: backup.Manifest{Cluster: backup.Cluster{Peers: peerList}, Boards: []backup.BoardEntry{{Name: "ews2"}}},
		Configs:  map[string]string{"ews2": backupConf},
		Outputs:  []hal.Snapshot{{Name: "relay1", Node: "ews2", State: "on", Value: true, Seq: 42}},
	}
}

// writeArchive writes a to a temp file.
func writeArchive(t *testing.T, a backup.Archive) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cluster.tar.gz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := backup.Write(f, a); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFlashFromBackup(t *testing.T) {
	if hostEws == "" {
		t.Skip("no ews binary for this machine")
	}
	ours := strings.Split(peers, ",")
	fromBackup := func(c *card, file string, extra ...string) []string {
		return append(dropArg(c.flashArgs(), "--peers"), append([]string{"--from-backup", file}, extra...)...)
	}
	t.Run("fresh card", func(t *testing.T) {
		c := newCard(t)
		out, code := run(t, "flash.sh", fromBackup(c, writeBackup(t, ours))...)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		if got := testutil.ReadFile(t, filepath.Join(c.boot, "ews.toml")); got != backupConf {
			t.Errorf("ews.toml:\n%s", got)
		}
		if got := testutil.ReadFile(t, filepath.Join(c.boot, "ews-outputs.json")); !strings.Contains(got, `"seq": 42`) {
			t.Errorf("ews-outputs.json:\n%s", got)
		}
		if testutil.ReadFile(t, filepath.Join(c.root, "usr/bin/ews")) != string(c.bin) {
			t.Error("binary not installed")
		}
		// The board's certificate names its address from the backup's
		// peers (no --peers with a backup): a rebuilt board must be
		// verifiable at it, not only at loopback.
		b, err := bundle.Read(filepath.Join(c.root, "etc/ews/cluster.bundle"))
		if err != nil {
			t.Fatal(err)
		}
		crt, err := b.BoardCert("ews2", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(crt.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(leaf.IPAddresses, func(ip net.IP) bool { return ip.String() == "10.0.0.12" }) {
			t.Errorf("the board's certificate names %v, not its address 10.0.0.12", leaf.IPAddresses)
		}
	})
	t.Run("a card with another config keeps it", func(t *testing.T) {
		c := newCard(t)
		mine := strings.Replace(backupConf, `auth = "none"`, `auth = "none"
read_auth = false`, 1)
		write(t, filepath.Join(c.boot, "ews.toml"), mine, 0o644)
		out, code := run(t, "flash.sh", fromBackup(c, writeBackup(t, ours))...)
		if code != 0 || !strings.Contains(out, "kept the card's") || !strings.Contains(out, c.boot+"/ews.toml.from-backup") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		if testutil.ReadFile(t, filepath.Join(c.boot, "ews.toml")) != mine || testutil.ReadFile(t, filepath.Join(c.boot, "ews.toml.from-backup")) != backupConf {
			t.Error("the card's config was not kept beside the backup's")
		}
	})
	t.Run("a card of another cluster is refused", func(t *testing.T) {
		c := newCard(t)
		write(t, filepath.Join(c.boot, "ews.toml"), backupConf, 0o644)
		before := snapshot(t, filepath.Dir(c.boot))
		out, code := run(t, "flash.sh", fromBackup(c, writeBackup(t, []string{"ews2=192.168.0.2:7946"}))...)
		if code != 1 || !strings.Contains(out, "ews2=192.168.0.2:7946") || !strings.Contains(out, "refused") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		sameTree(t, "card", before, snapshot(t, filepath.Dir(c.boot)))
	})
	t.Run("the stores go to the root side, not in a dry run", func(t *testing.T) {
		c := newCard(t)
		a := backupArchive(ours)
		a.Config = storeText
		a.Manifest.ConfigVersion = 7
		file := writeArchive(t, a)
		before := snapshot(t, c.root)
		if out, code := run(t, "flash.sh", fromBackup(c, file, "--dry-run")...); code != 0 {
			t.Fatalf("dry run: exit %d:\n%s", code, out)
		}
		sameTree(t, "root side after --dry-run", before, snapshot(t, c.root))
		out, code := run(t, "flash.sh", fromBackup(c, file)...)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		p := filepath.Join(c.root, "var/lib/ews/config.json")
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("the configuration store is not on the card: %v\n%s", err, out)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
		if got := testutil.ReadFile(t, p); !strings.Contains(got, "relay9") || !strings.Contains(got, `"version":7`) {
			t.Errorf("%s does not hold the backup's version 7:\n%s", p, got)
		}
		if _, err := os.Stat(filepath.Join(c.root, "var/lib/ews/etc")); err == nil {
			t.Error("the backup's bundle went under the state directory")
		}
		// flashed again: the board's own store is kept
		write(t, p, "mine", 0o600)
		out, code = run(t, "flash.sh", append(fromBackup(c, file), "--force")...)
		if code != 0 || testutil.ReadFile(t, p) != "mine" || !strings.Contains(out, "kept (the board's own store)") {
			t.Errorf("exit %d, store %q:\n%s", code, testutil.ReadFile(t, p), out)
		}
	})
	t.Run("no peers with it", func(t *testing.T) {
		c := newCard(t)
		out, code := run(t, "flash.sh", append(c.flashArgs(), "--from-backup", writeBackup(t, ours))...)
		if code != 2 || !strings.Contains(out, "no --peers") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
}
