//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

const capNetBindService = 10

// A service granted CAP_SETUID/CAP_SETGID as ambient capabilities (so that
// ews may start programs as [cgi] user) must not pass them to the other
// programs it runs: keepSetuidToSelf lowers them out of the ambient set,
// keeping the rest and ews's own effective set.
func TestKeepSetuidToSelf(t *testing.T) {
	if os.Getenv("EWS_CGI_AMBIENT_CHILD") == "1" {
		if _, _, e := syscall.AllThreadsSyscall(syscall.SYS_GETPID, 0, 0, 0); e == syscall.ENOTSUP {
			fmt.Println("unsupported")
			os.Exit(0)
		}
		if err := keepSetuidToSelf(); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		amb, _ := capsOf("CapAmb")
		eff, _ := capsOf("CapEff")
		fmt.Printf("amb=%x eff=%x\n", amb, eff)
		os.Exit(0)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a child ambient capabilities")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKeepSetuidToSelf$")
	cmd.Env = append(os.Environ(), "EWS_CGI_AMBIENT_CHILD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{AmbientCaps: []uintptr{capSetuid, capSetgid, capKill, capNetBindService}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "unsupported") {
		t.Skip("this binary links cgo (-race): AllThreadsSyscall is not available; the board's static binary has it")
	}
	var amb, eff uint64
	if _, err := fmt.Sscanf(string(out), "amb=%x eff=%x", &amb, &eff); err != nil {
		t.Fatalf("child said %q", out)
	}
	if amb != 1<<capNetBindService {
		t.Errorf("ambient %x, want only CAP_NET_BIND_SERVICE (%x)", amb, 1<<capNetBindService)
	}
	if eff&(1<<capSetuid) == 0 {
		t.Errorf("effective %x lost CAP_SETUID: ews could no longer start programs as [cgi] user", eff)
	}
}
