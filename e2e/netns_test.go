package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// needNetns skips unless the test (what, for the message) may create
// network namespaces: not -short, root, iproute2, and a namespace can be
// made here.
func needNetns(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real ews processes in network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip(what + " needs root for ip netns")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip(what + " needs iproute2 (ip)")
	}
	probe := fmt.Sprintf("ewsp%d", os.Getpid()%100000)
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		t.Skipf("network namespaces not permitted here: %v %s", err, out)
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
}

// ipCmd runs ip(8) and fails the test on error.
func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
