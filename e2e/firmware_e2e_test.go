package e2e

// Firmware upgrade, rollback, restart and the rolling upgrade against real `ews run` processes
// on loopback, each board with its own copy of the binary (an upgrade replaces it):
//
//	go test -run 'TestFirmware|TestRollingUpgrade' -v ./e2e/

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/internal/tool/demo"
)

// badBinary is a real executable for this machine that exits 1 at once: it
// passes every check before the swap and can only be caught by the rollback.
func badBinary(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module bad\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nimport \"os\"\n\nfunc main() { os.Stderr.WriteString(\"bad firmware: exiting\\n\"); os.Exit(1) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ews-bad")
	cmd := exec.Command("go", "build", "-o", p, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the bad binary: %v\n%s", err, out)
	}
	return p
}

// otherArchCopy is bin with its ELF e_machine made another arch's (arm64,
// or amd64 on an arm64 host): what a board reads to refuse a wrong-arch
// image (firmware.CheckELF), without cross-building all of ews for it.
func otherArchCopy(t *testing.T, bin string) string {
	t.Helper()
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	machine := uint16(183) // EM_AARCH64
	if hostArch() == "arm64" {
		machine = 62 // EM_X86_64
	}
	b[18], b[19] = byte(machine), byte(machine>>8) // e_machine; ews builds are little-endian
	p := filepath.Join(t.TempDir(), "ews-other-arch")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func copyBinary(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

type boardJSON struct {
	Name     string  `json:"name"`
	PID      int     `json:"pid"`
	Version  string  `json:"version"`
	SHA256   string  `json:"sha256"`
	Runstate string  `json:"runstate"`
	UptimeS  float64 `json:"uptime_s"`
	Started  string  `json:"started"`
	Restart  string  `json:"restart"`
	Last     *struct {
		Outcome string `json:"outcome"`
		Reason  string `json:"reason"`
		SHA256  string `json:"sha256"`
	} `json:"last_upgrade"`
}

func (b *board) info() (boardJSON, error) {
	var v boardJSON
	c := &http.Client{Timeout: time.Second, Transport: checked(nil)}
	req, err := http.NewRequest(http.MethodGet, "http://"+b.http+"/api/board", nil)
	if err != nil {
		return v, err
	}
	req.Header.Set("Authorization", "Bearer "+demo.Token) // the version and SHA-256 are for credentials only
	resp, err := c.Do(req)
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return v, fmt.Errorf("GET /api/board: %s", resp.Status)
	}
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

func postBoard(t *testing.T, b *board, path, file string) (int, string) {
	t.Helper()
	var body io.Reader
	req, _ := http.NewRequest("POST", "http://"+b.http+path, nil)
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(data)
		req, _ = http.NewRequest("POST", "http://"+b.http+path, body)
		req.Header.Set("X-Firmware-Sha256", fileSHA(t, file))
	}
	req.Header.Set("Authorization", "Bearer "+demo.Token)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(msg)
}

// uploadUntil uploads the firmware at file to board b (202 wanted) and
// waits (60 s at most) until b runs test-2 again with that upload's
// outcome; it returns b's info then and how long that took.
func uploadUntil(t *testing.T, b *board, file, outcome string) (boardJSON, time.Duration) {
	t.Helper()
	start := time.Now()
	if code, msg := postBoard(t, b, "/api/board/firmware", file); code != 202 {
		t.Fatalf("upload: %d %s", code, msg)
	}
	sum := fileSHA(t, file)
	var info boardJSON
	testutil.EventuallyWithin(t, "test-2 running, the upload "+outcome, 60*time.Second, func() bool {
		i, err := b.info()
		info = i
		return err == nil && i.Version == "test-2" && i.Runstate == "running" && i.Last != nil && i.Last.Outcome == outcome && i.Last.SHA256 == sum
	})
	return info, time.Since(start).Round(time.Millisecond)
}

func TestFirmwareUpgradeRollbackRestart(t *testing.T) {
	beside(t, "builds three binaries")
	v1, v2, bad := versionBinary(t, "test-1"), signedCopy(t, versionBinary(t, "test-2")), signedCopy(t, badBinary(t))
	b := ownCopyCluster(t, 1, v1)[0]
	var info boardJSON
	testutil.EventuallyWithin(t, "board serving test-1", 30*time.Second, func() bool {
		var err error
		info, err = b.info()
		return err == nil && info.Runstate == "running" && info.Version == "test-1"
	})
	if info.Restart != "exec" {
		t.Fatalf("restart mode %q, want exec (no systemd, no supervisor)", info.Restart)
	}

	t.Run("restart replaces the process in place", func(t *testing.T) {
		before := info
		if code, msg := postBoard(t, b, "/api/board/restart", ""); code != 202 {
			t.Fatalf("restart: %d %s", code, msg)
		}
		testutil.EventuallyWithin(t, "board back after restart", 30*time.Second, func() bool {
			i, err := b.info()
			return err == nil && i.Runstate == "running" && i.Started != before.Started && i.PID == before.PID
		})
	})

	t.Run("unsigned binary with its correct SHA-256: refused, the board keeps its binary", func(t *testing.T) {
		code, msg := postBoard(t, b, "/api/board/firmware", versionBinary(t, "test-2"))
		if code != 403 || !strings.Contains(msg, `"reason":"signature"`) {
			t.Fatalf("unsigned upload: %d %s, want 403 reason signature", code, msg)
		}
		if i, err := b.info(); err != nil || i.SHA256 != info.SHA256 || i.Version != "test-1" || i.PID != info.PID {
			t.Fatalf("after a refused upload: %+v %v", i, err)
		}
	})

	t.Run("good binary: version changes", func(t *testing.T) {
		var took time.Duration
		info, took = uploadUntil(t, b, v2, "committed")
		t.Logf("upload to serving test-2: %v (restart mode now %s)", took, info.Restart)
		if info.SHA256 != fileSHA(t, v2) {
			t.Fatalf("sha256 %s, want the upload's", info.SHA256)
		}
	})

	t.Run("bad binary: rolled back", func(t *testing.T) {
		var took time.Duration
		info, took = uploadUntil(t, b, bad, "rolled back")
		t.Logf("bad upload to serving test-2 again: %v; reason: %s", took, info.Last.Reason)
		b.waitLog(t, "bad firmware: exiting", 5*time.Second) // else the rollback was not tested
	})

	t.Run("wrong arch refused up front", func(t *testing.T) {
		code, msg := postBoard(t, b, "/api/board/firmware", signedCopy(t, otherArchCopy(t, ewsBinary(t))))
		if code != 400 || !strings.Contains(msg, "this board needs") {
			t.Fatalf("wrong arch: %d %s, want 400 naming the arch", code, msg)
		}
	})

	t.Run("SIGTERM stops the supervisor and the board", func(t *testing.T) {
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		exitCode(t, b.cmd, 30*time.Second)
		if _, err := b.info(); err == nil {
			t.Fatal("the board still serves after its supervisor stopped: a child leaked")
		}
	})
}

// loadResult counts a load loop's answers.
type loadResult struct {
	ok, shed, refused atomic.Int64
	bad               sync.Map // description -> count
	badN              atomic.Int64
}

// upgradeLoad sends POST /api/devices/temp1/read round-robin to every board until stop
// closes. A board that is restarting refuses the connection (not an
// accepted request); every answer must be 2xx, or 503 with Retry-After.
func upgradeLoad(boards []*board, stop <-chan struct{}, res *loadResult) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 10 * time.Second}
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				b := boards[i%len(boards)]
				req, _ := http.NewRequest("POST", "http://"+b.http+"/api/devices/temp1/read", nil)
				req.Header.Set("Authorization", "Bearer "+demo.Token)
				req.Header.Set("Idempotency-Key", fmt.Sprintf("load-%d-%d", w, i))
				resp, err := c.Do(req)
				switch {
				case err != nil && errors.Is(err, syscall.ECONNREFUSED):
					res.refused.Add(1)
					time.Sleep(20 * time.Millisecond) // pacing, not waiting for a condition
					continue
				case err != nil:
					res.badN.Add(1)
					res.bad.Store(b.name+": "+err.Error(), true)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode < 300:
					res.ok.Add(1)
				case resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "":
					res.shed.Add(1)
				default:
					res.badN.Add(1)
					res.bad.Store(fmt.Sprintf("%s: %s", b.name, resp.Status), true)
				}
				time.Sleep(10 * time.Millisecond) // ~100 requests/s per worker at most
			}
		}()
	}
	return &wg
}

// rollingUnderLoad is a rolling upgrade's start: three boards on test-1
// (v1), each on its own copy, ews1 master, under upgradeLoad, and v2 the
// signed test-2 to upgrade to. done stops the load and fails t unless it
// was answered and nothing was lost or answered badly; what names the run
// in the load's log line.
func rollingUnderLoad(t *testing.T) (boards []*board, v1, v2 string, done func(what string)) {
	t.Helper()
	v1, v2 = versionBinary(t, "test-1"), signedCopy(t, versionBinary(t, "test-2"))
	boards = ownCopyCluster(t, 3, v1)
	waitAgree(t, "ews1 master on every board", 30*time.Second, boards, "ews1", 1)
	stop := make(chan struct{})
	var res loadResult
	wg := upgradeLoad(boards, stop, &res)
	done = func(what string) {
		t.Helper()
		close(stop)
		wg.Wait()
		var bad []string
		res.bad.Range(func(k, _ any) bool { bad = append(bad, k.(string)); return true })
		t.Logf("%s; load: %d 2xx, %d shed (503 + Retry-After), %d connections refused by a restarting board, %d lost/bad %v",
			what, res.ok.Load(), res.shed.Load(), res.refused.Load(), res.badN.Load(), bad)
		if res.ok.Load() == 0 {
			t.Fatal("the load loop got no answers: it did not test anything")
		}
		if res.badN.Load() != 0 {
			t.Fatalf("%d requests lost or answered badly during the rolling upgrade: %v", res.badN.Load(), bad)
		}
	}
	return boards, v1, v2, done
}

func TestRollingUpgrade(t *testing.T) {
	beside(t, "builds two binaries and runs three boards")
	boards, v1, v2, done := rollingUnderLoad(t)
	var out, errOut bytes.Buffer
	start := time.Now()
	cli := exec.Command(v1, "upgrade", "--url", "http://"+boards[1].http, "--binary", v2, "--token-file", tokenFile(t))
	cli.Stdout, cli.Stderr = &out, &errOut
	code := -1
	if err := cli.Run(); err == nil || cli.ProcessState != nil {
		code = cli.ProcessState.ExitCode()
	}
	took := time.Since(start)
	done("ews upgrade through ews2")
	t.Logf("ews upgrade (%v):\n%s%s", took.Round(time.Millisecond), out.String(), errOut.String())
	if code != 0 {
		t.Fatalf("ews upgrade exit %d", code)
	}
	if err := checkUpgradeOrder(out.String(), "ews1"); err != nil {
		t.Fatal(err)
	}
	for _, b := range boards {
		if i := answered(t, b.name+"'s /api/board", b.info); i.Version != "test-2" {
			t.Fatalf("%s: %+v, want test-2", b.name, i)
		}
	}
	// the master restarted last: a board takes over (or it comes back)
	testutil.EventuallyWithin(t, "a master after the upgrade", 10*time.Second, func() bool {
		v, err := boards[0].view()
		return err == nil && v.Master != ""
	})
}

// checkUpgradeOrder holds ews upgrade's order to its rule: the followers
// from the last rank up (ews3 before ews2 before ews1), then the master the
// rollout saw. That master is the one the first board's progress line names
// ("back in the table (master ewsN)"): a busy machine can miss heartbeats and
// hand mastership over between the test's look and the rollout's, and the
// rollout rightly follows the table it read. A master other than want is
// accepted only when the order is the rule's for it.
func checkUpgradeOrder(out, want string) error {
	order := regexpOrder(out)
	master := want
	if m := firstMasterRe.FindStringSubmatch(out); m != nil {
		master = m[1]
	}
	var rule []string
	for _, b := range []string{"ews3", "ews2", "ews1"} {
		if b != master {
			rule = append(rule, b)
		}
	}
	rule = append(rule, master)
	if order != strings.Join(rule, ",") {
		return fmt.Errorf("upgrade order %q, want the followers first and the master %s last (%s)", order, master, strings.Join(rule, ","))
	}
	return nil
}

// firstMasterRe finds the master named by ews upgrade's first progress line.
var firstMasterRe = regexp.MustCompile(`back in the table \(master (ews[0-9]+)\)`)

// regexpOrder pulls "ewsN: ..." line names from ews upgrade's output, in order.
func regexpOrder(out string) string {
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if name, _, ok := strings.Cut(l, ": "); ok && strings.HasPrefix(name, "ews") && !strings.Contains(name, " ") {
			names = append(names, name)
		}
	}
	return strings.Join(names, ",")
}

func hostArch() string {
	out, err := exec.Command("go", "env", "GOARCH").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// TestRollingUpgradeFromABoard is the UI's rolling upgrade: the binary goes to one follower,
// which upgrades the others (followers first, then the master) and itself last.
func TestRollingUpgradeFromABoard(t *testing.T) {
	beside(t, "builds two binaries and runs three boards")
	boards, _, v2, done := rollingUnderLoad(t)
	start := time.Now()
	code, msg := postBoard(t, boards[1], "/api/cluster/upgrade", v2)
	if code != 202 || !strings.Contains(msg, `"order":["ews3","ews1","ews2"]`) {
		t.Fatalf("POST /api/cluster/upgrade on ews2: %d %s, want 202 with the order ews3, ews1 (master), ews2 (itself) last", code, msg)
	}
	testutil.EventuallyWithin(t, "every board on test-2, running", 2*time.Minute, func() bool {
		for _, b := range boards {
			if i, err := b.info(); err != nil || i.Version != "test-2" || i.Runstate != "running" {
				return false
			}
		}
		v, err := boards[0].view()
		return err == nil && v.Master != ""
	})
	done(fmt.Sprintf("rolling upgrade from ews2: %v", time.Since(start).Round(time.Millisecond)))
	boards[1].waitLog(t, `msg="rolling upgrade" board=ews1`, 5*time.Second)
	log := boards[1].log.String()
	i3, i1 := strings.Index(log, `msg="rolling upgrade" board=ews3`), strings.Index(log, `msg="rolling upgrade" board=ews1`)
	if !strings.Contains(log, "rolling upgrade started") || i3 < 0 || i1 < 0 || i3 > i1 {
		t.Fatalf("ews2's log does not show ews3 upgraded before ews1:\n%s", log)
	}
}

// TestFirmwareInterruptedTrial: the supervisor died during the trial (kill -9, a power cut) and
// left its marker: the next start supervises the new binary and commits it once it serves.
func TestFirmwareInterruptedTrial(t *testing.T) {
	beside(t, "builds a binary")
	b := ownCopyCluster(t, 1, versionBinary(t, "test-1"))[0]
	testutil.EventuallyWithin(t, "board serving", 30*time.Second, func() bool { i, err := b.info(); return err == nil && i.Runstate == "running" })
	b.kill9()
	exe := filepath.Join(filepath.Dir(b.cfg), b.name, "ews")
	if err := os.WriteFile(exe+".upgrade", []byte(`{"sha256":"`+fileSHA(t, exe)+`","from_version":"test-0","ready_within":"30s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	b.start(t, exe)
	testutil.EventuallyWithin(t, "trial committed under a supervisor", 30*time.Second, func() bool {
		i, err := b.info()
		return err == nil && i.Runstate == "running" && i.Restart == "supervisor" && i.Last != nil && i.Last.Outcome == "committed"
	})
	if _, err := os.Stat(exe + ".upgrade"); err == nil {
		t.Fatal("marker still there after the commit")
	}
}
