package e2e

// Outputs the cluster remembers (docs/DESIGN.md "Board services"), end to end: three real
// `ews run` processes on loopback, simulated boards.

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/dispatch"
)

// rsDevices are the cluster's outputs: all wired to ews2.
const rsDevices = `
[[device]]
name = "relay1"
driver = "sim-switch"
node = "ews2"
restore = "last"

[[device]]
name = "relay2"
driver = "sim-switch"
node = "ews2"
restore = "initial"

[[device]]
name = "fan"
driver = "sim-pwm"
node = "ews2"
`

// rsCluster writes the configs of n boards sharing one key and devices.
func rsCluster(t *testing.T, n int) []*board {
	t.Helper()
	boards, _ := layout(t, n)
	boardTOML{
		node:    "capacity = 4\n",
		cluster: "tmax = \"1s\"\ntthreshold = \"1s\"\nheartbeat = \"100ms\"\n",
		rest:    "[http]\nauth = \"none\"\n[sim]\n" + rsDevices,
	}.write(t, boards)
	return boards
}

// rsClient bounds a request of this file's (an /events stream too).
var rsClient = &http.Client{Timeout: 2 * time.Second}

// rsDevice is a device as GET /api/devices/{name} shows it.
type rsDevice struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	Value    any    `json:"value"`
	Seq      uint64 `json:"seq"`
	Restored bool   `json:"restored"`
	Error    string `json:"error"`
}

func rsGet(b *board, name string) (rsDevice, error) {
	var d rsDevice
	resp, err := rsClient.Get("http://" + b.http + "/api/devices/" + name)
	if err != nil {
		return d, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return d, fmt.Errorf("GET %s: %s", name, resp.Status)
	}
	return d, json.NewDecoder(resp.Body).Decode(&d)
}

func rsAct(t *testing.T, b *board, path string) {
	t.Helper()
	resp, err := rsClient.Post("http://"+b.http+"/api/devices/"+path, "", nil)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s via %s: %s", path, b.name, resp.Status)
	}
}

// rsRemembered waits until board b remembers device name in state: the
// first event of its local stream ("outputs", what a restarting board
// reads) lists it so.
func rsRemembered(t *testing.T, b *board, name, state string) {
	t.Helper()
	testutil.EventuallyWithin(t, b.name+" remembers "+name+" "+state, 10*time.Second, func() bool {
		for _, d := range rsOutputs(b) {
			if d.Name == name {
				return d.State == state && d.Seq > 0
			}
		}
		return false
	})
}

// rsOutputs reads the "outputs" event that opens b's local stream, as a
// board would: with a peer mark signed with the cluster key (docs/NOTES.md "Peer streams").
func rsOutputs(b *board) []rsDevice {
	req, _ := http.NewRequest(http.MethodGet, "http://"+b.http+"/events?scope=local", nil)
	if ck, err := base64.StdEncoding.DecodeString(b.key); err == nil {
		if k, err := dispatch.DeriveKey(ck); err == nil {
			if m, err := dispatch.NewMarker(k, dispatch.MarkOptions{}); err == nil {
				m.SignPeer(req, b.name)
			}
		}
	}
	resp, err := rsClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok && event == "outputs" {
			var list []rsDevice
			if json.Unmarshal([]byte(v), &list) != nil {
				return nil
			}
			return list
		}
		if event != "" && event != "outputs" {
			return nil // an older board: no memory
		}
	}
	return nil
}

// rsRestart kills ews2 with SIGKILL, starts it again and returns how long
// after the start relay1 showed want, restored.
func rsRestart(t *testing.T, boards []*board, bin, want string) time.Duration {
	t.Helper()
	ews2 := boards[1]
	ews2.kill9()
	start := time.Now()
	ews2.start(t, bin)
	var got rsDevice
	testutil.EventuallyWithin(t, "relay1 on ews2 "+want+" again", 15*time.Second, func() bool {
		d, err := rsGet(ews2, "relay1")
		got = d
		return err == nil && d.State == want && d.Restored
	})
	took := time.Since(start)
	ews2.waitLog(t, "restore: output restored", 5*time.Second)
	t.Logf("relay1 %s, restored (seq %d), %v after ews2 was started again", got.State, got.Seq, took.Round(time.Millisecond))
	return took
}

// TestRestoreAfterKill9: with restore =
// "last", relay1 on ews2 turned on through the master is on again within
// 15 s after kill -9 and a restart of ews2 (a fresh card with the same
// name is the same case: ews keeps nothing on the board for it).
func TestRestoreAfterKill9(t *testing.T) {
	beside(t, "starts real ews processes")
	bin := ewsBinary(t)
	boards := rsCluster(t, 3)
	startAll(t, bin, boards)
	waitAgree(t, "one master, every board running", 30*time.Second, boards, "ews1", 0)
	master := boards[0]

	rsAct(t, master, "relay1/turn_on")
	rsAct(t, master, "relay2/turn_on") // restore = "initial": comes back off
	rsAct(t, master, "fan/set?value=40")
	rsRemembered(t, master, "relay1", "on")
	rsRemembered(t, boards[2], "fan", "on")

	took := rsRestart(t, boards, bin, "on")
	if d, err := rsGet(boards[1], "relay2"); err != nil || d.State != "off" || d.Restored {
		t.Errorf("relay2 (restore = initial) after restart: %+v %v, want off, not restored", d, err)
	}
	if d, err := rsGet(boards[1], "fan"); err != nil || d.Value != 40.0 || !d.Restored {
		t.Errorf("fan after restart: %+v %v, want 40 restored", d, err)
	}

	// A later command is what is remembered next: turned off through the
	// master, relay1 comes back off, not on from the older memory.
	waitAgree(t, "cluster settled after the restart", 20*time.Second, boards, "ews1", 0)
	rsAct(t, master, "relay1/turn_off")
	rsRemembered(t, master, "relay1", "off")
	rsRemembered(t, boards[2], "relay1", "off")
	took2 := rsRestart(t, boards, bin, "off")
	t.Logf("restart to restored: %v, then %v", took.Round(time.Millisecond), took2.Round(time.Millisecond))
}

// rsRun runs the ews CLI and returns its exit code and output.
func rsRun(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ews %v: %v", args, err)
	}
	return code, string(out)
}

// TestBackupAndRestore: `ews cluster backup` saves every board's config and
// relay1's last state; after the whole cluster is lost (nobody remembers),
// the outputs `ews cluster restore` leaves beside ews2's config bring
// relay1 back on; a card of another cluster is refused.
func TestBackupAndRestore(t *testing.T) {
	beside(t, "starts real ews processes")
	bin := ewsBinary(t)
	boards := rsCluster(t, 3)
	startAll(t, bin, boards)
	waitAgree(t, "one master, every board running", 30*time.Second, boards, "ews1", 0)
	rsAct(t, boards[0], "relay1/turn_on")
	rsRemembered(t, boards[0], "relay1", "on")

	archive := filepath.Join(t.TempDir(), "cluster.tar.gz")
	code, out := rsRun(t, bin, "cluster", "backup", "--url", "http://"+boards[2].http, "--out", archive)
	if code != 0 || !strings.Contains(out, "3 board configs, 1 outputs") || !strings.Contains(out, "configuration version 1") {
		t.Fatalf("backup: exit %d\n%s", code, out)
	}

	// the whole cluster goes: nobody remembers relay1 any more
	for _, b := range boards {
		b.kill9()
	}
	card := t.TempDir()
	code, out = rsRun(t, bin, "cluster", "restore", "--from", archive, "--board", "ews2", "--out", card)
	if code != 0 || !strings.Contains(out, "ews-outputs.json") {
		t.Fatalf("restore: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(card, "ews.toml")); err != nil || !strings.Contains(string(b), `name = "ews2"`) || strings.Contains(string(b), "key = ") {
		t.Errorf("restored config (secrets left out): %v\n%s", err, b)
	}
	// the new card boots with its key put back (flash.sh --bundle does it)
	// and the backup's outputs beside its config
	orig, err := os.ReadFile(boards[1].cfg)
	if err != nil {
		t.Fatal(err)
	}
	boards[1].cfg = filepath.Join(card, "ews.toml")
	if err := os.WriteFile(boards[1].cfg, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	startAll(t, bin, boards)
	testutil.EventuallyWithin(t, "relay1 on from the backup", 20*time.Second, func() bool {
		d, err := rsGet(boards[1], "relay1")
		return err == nil && d.State == "on" && d.Restored
	})
	boards[1].waitLog(t, "from=backup", 5*time.Second) // the backup named as the source
	testutil.EventuallyWithin(t, "the backup's outputs set aside once used", 5*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(card, "ews-outputs.json.used"))
		return err == nil
	})

	// a card of another cluster is refused, naming both
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "ews.toml"), []byte("[node]\nname = \"ews2\"\n[cluster]\npeers = [\"ews2=10.9.9.9:7946\"]\n"), 0o644)
	code, out = rsRun(t, bin, "cluster", "restore", "--from", archive, "--board", "ews2", "--out", other)
	if code != 1 || !strings.Contains(out, "ews2=10.9.9.9:7946") || !strings.Contains(out, "refused") {
		t.Errorf("another cluster's card: exit %d\n%s", code, out)
	}
}
