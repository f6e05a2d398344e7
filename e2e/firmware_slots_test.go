package e2e

// OTA on a packaged board (docs/NOTES.md "A/B slots on packaged boards"): the binary at the unit's
// ExecStart path is never written; uploads go to A/B slots under the
// unit's ReadWritePaths, a bad one is rolled back, a good one committed,
// and a package upgrade after it wins. systemd is emulated: restart on a
// non-zero exit (Restart=on-failure, RestartSec), INVOCATION_ID set.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/firmware"
)

// rsService is `ews run` under an emulated systemd unit.
type rsService struct {
	exe, cfg string
	env      []string
	log      *testutil.Buffer
	cancel   context.CancelFunc
	done     chan struct{}
}

func (s *rsService) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		for ctx.Err() == nil {
			cmd := exec.Command(s.exe, "run", "--config", s.cfg)
			cmd.Env = s.env
			cmd.Stdout, cmd.Stderr = s.log, s.log
			if err := cmd.Start(); err != nil {
				fmt.Fprintf(s.log, "rs: start: %v\n", err)
				return
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var err error
			select {
			case err = <-exited:
			case <-ctx.Done():
				_ = cmd.Process.Kill()
				<-exited
				return
			}
			if err == nil {
				return // exit 0: Restart=on-failure does not restart
			}
			fmt.Fprintf(s.log, "rs: ews exited (%v); restarting in 200ms\n", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond): // RestartSec
			}
		}
	}()
}

func (s *rsService) stop() {
	s.cancel()
	<-s.done
}

type rsBoardInfo struct {
	Version string `json:"version"`
	Upgrade *struct {
		Outcome string `json:"outcome"`
		Reason  string `json:"reason"`
	} `json:"last_upgrade"`
}

func rsBoardPage(url string) (rsBoardInfo, error) {
	var b rsBoardInfo
	req, _ := http.NewRequest(http.MethodGet, url+"/api/board", nil)
	req.Header.Set("Authorization", "Bearer "+rsSlotsToken) // the version is for credentials only
	resp, err := rsClient.Do(req)
	if err != nil {
		return b, err
	}
	defer resp.Body.Close()
	return b, json.NewDecoder(resp.Body).Decode(&b)
}

// rsSlotsToken is the packaged board's token in TestFirmwareSlotsPackagedBoard.
const rsSlotsToken = "rs-slots-token-1"

func rsUpload(t *testing.T, url, token string, bin []byte) {
	t.Helper()
	key, err := firmwareAdmin(t).Signer()
	if err != nil {
		t.Fatal(err)
	}
	bin = firmware.Sign(bin, key) // boards take signed images only
	h := sha256.Sum256(bin)
	req, _ := http.NewRequest(http.MethodPost, url+"/api/board/firmware", bytes.NewReader(bin))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Firmware-Sha256", hex.EncodeToString(h[:]))
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: %s %s", resp.Status, body)
	}
}

func TestFirmwareSlotsPackagedBoard(t *testing.T) {
	beside(t, "builds and starts real ews processes")
	v1, v2, v3 := versionBinary(t, "v1-rs"), versionBinary(t, "v2-rs"), versionBinary(t, "v3-rs")
	bad, err := exec.LookPath("false") // a real executable for this machine that exits 1
	if err != nil {
		t.Skip("no false(1)")
	}
	// the unit's paths under a temp root: ExecStart=/usr/bin/ews, ReadWritePaths=/var/lib/ews
	root := t.TempDir()
	base := filepath.Join(root, "usr/bin/ews")
	slots := filepath.Join(root, "var/lib/ews/firmware")
	install := func(from string) { // as dpkg does: a new file renamed over the old
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(base), 0o755)
		if err := os.WriteFile(base+".dpkg-new", b, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(base+".dpkg-new", base); err != nil {
			t.Fatal(err)
		}
	}
	install(v1)
	port := freeBase(t, 1)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	const token = rsSlotsToken
	cfg := filepath.Join(root, "ews.toml")
	doc := fmt.Sprintf("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:%d\"\n[http]\nauth = \"token\"\ntoken = %q\n[sim]\n", port, token)
	doc = withBundle(t, root, "ews1", doc) // the firmware verify key
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := &rsService{exe: base, cfg: cfg, log: &testutil.Buffer{},
		env: append(os.Environ(), "INVOCATION_ID=rs-test", "EWS_FIRMWARE_DIR="+slots)}
	svc.start(t)
	t.Cleanup(func() {
		svc.stop()
		if t.Failed() {
			t.Logf("service log:\n%s", svc.log.String())
		}
	})
	version := func(want string) func() bool {
		return func() bool { b, err := rsBoardPage(url); return err == nil && b.Version == want }
	}
	testutil.EventuallyWithin(t, "v1 serving", 20*time.Second, version("v1-rs"))
	packaged := fileSHA(t, base)

	// a binary that cannot serve: tried once, rolled back at the next start
	badBin, _ := os.ReadFile(bad)
	rsUpload(t, url, token, badBin)
	testutil.EventuallyWithin(t, "bad upload rolled back, v1 serving", 30*time.Second, func() bool {
		b, err := rsBoardPage(url)
		return err == nil && b.Version == "v1-rs" && b.Upgrade != nil && b.Upgrade.Outcome == "rolled back"
	})

	// a good one: committed once it serves
	good, _ := os.ReadFile(v2)
	rsUpload(t, url, token, good)
	testutil.EventuallyWithin(t, "v2 serving, committed", 30*time.Second, func() bool {
		b, err := rsBoardPage(url)
		return err == nil && b.Version == "v2-rs" && b.Upgrade != nil && b.Upgrade.Outcome == "committed"
	})
	if fileSHA(t, base) != packaged {
		t.Fatal("the packaged binary was written by an upload")
	}
	// it stays across a restart (systemctl restart)
	svc.stop()
	svc.start(t)
	testutil.EventuallyWithin(t, "v2 after a restart", 20*time.Second, version("v2-rs"))

	// apt installs v3 after the upload: the one installed last wins
	svc.stop()
	install(v3)
	svc.start(t)
	testutil.EventuallyWithin(t, "v3 (the package) after apt", 20*time.Second, version("v3-rs"))
	for _, l := range strings.Split(svc.log.String(), "\n") {
		if strings.Contains(l, "firmware") || strings.HasPrefix(l, "rs:") {
			t.Log(l)
		}
	}
}
