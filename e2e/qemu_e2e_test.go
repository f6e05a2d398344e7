package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestARMClusterQemu proves what we ship for boards works as a cluster: three
// armv7 binaries under qemu-arm-static on loopback elect a master, list
// three running boards, run a device action through the master, and survive
// kill -9 of the master.
func TestARMClusterQemu(t *testing.T) {
	long(t, "builds an ARM binary and emulates three boards")
	qemu, err := exec.LookPath("qemu-arm-static")
	if err != nil {
		t.Skip("qemu-arm-static missing (the test command installs qemu-user-static)")
	}
	bin := binary(t, build{goarch: "arm"})
	boards, _ := layout(t, 3)
	// Emulation is slow: timings a weak board would also want.
	boardTOML{
		node:    "capacity = 2\n",
		cluster: "tmax = \"2s\"\ntthreshold = \"1s\"\nheartbeat = \"200ms\"\n",
		rest:    "[http]\nauth = \"token\"\ntoken = \"t0k\"\n[sim]\ndevice_latency = \"5ms\"\n[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\nnode = \"ews2\"\n",
	}.write(t, boards)
	start := time.Now()
	for _, b := range boards {
		b.startWith(t, []string{qemu}, bin)
	}
	testutil.EventuallyWithin(t, "a board serving under qemu", 60*time.Second, func() bool { _, err := boards[0].view(); return err == nil })
	t.Logf("armv7 under qemu: first /api/cluster answer %v after start", time.Since(start).Round(time.Millisecond))
	waitAgree(t, "ews1 master of three running boards", 60*time.Second, boards, "ews1", 1)

	action := func(via *board) (int, string) {
		code, body, err := via.do("t0k", "POST", "/api/devices/relay1/toggle", "")
		if err != nil {
			return 0, err.Error()
		}
		return code, string(body)
	}
	// relay1 is wired to ews2; the request enters at the master, ews1.
	if code, body := action(boards[0]); code != 200 || !strings.Contains(body, `"state":"on"`) {
		t.Fatalf("device action through the master: %d %s", code, body)
	}
	if rss := rssKB(boards[1].cmd.Process.Pid); rss > 0 {
		t.Logf("armv7 under qemu: RSS of a board %d KiB (qemu's own memory included)", rss)
	}

	boards[0].kill9()
	took := waitAgree(t, "ews2 takes over", 60*time.Second, boards[1:], "ews2", 2)
	t.Logf("armv7 under qemu: takeover seen %v after kill -9 (tmax 2s)", took.Round(time.Millisecond))
	if code, body := action(boards[2]); code != 200 || !strings.Contains(body, `"state":"off"`) {
		t.Fatalf("device action after the takeover: %d %s", code, body)
	}
}

func rssKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			var kb int
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:")), "%d", &kb)
			return kb
		}
	}
	return 0
}
