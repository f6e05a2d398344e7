package demo

import (
	"os/exec"
	"testing"
)

func TestExitText(t *testing.T) {
	for _, tc := range []struct {
		script, want string
	}{
		{"exit 0", "exited with status 0"},
		{"exit 3", "exited with status 3"},
		{"kill -9 $$", "killed by signal 9 (killed)"},
		{"kill -TERM $$", "killed by signal 15 (terminated)"},
	} {
		err := exec.Command("sh", "-c", tc.script).Run()
		if got := exitText(err); got != tc.want {
			t.Errorf("sh -c %q: exitText = %q, want %q", tc.script, got, tc.want)
		}
	}
}

func TestStopAllStopsEveryLiveProcess(t *testing.T) {
	var procs []*proc
	for _, name := range []string{"a", "b", "c"} {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p := &proc{Board: Board{Name: name}, cmd: cmd, done: make(chan struct{})}
		go func() { p.err = cmd.Wait(); close(p.done) }()
		procs = append(procs, p)
	}
	_ = procs[1].cmd.Process.Kill() // one died earlier, as a board killed from outside
	<-procs[1].done
	stopAll(procs)
	for _, p := range procs {
		if p.alive() {
			t.Errorf("%s still running after stopAll", p.Name)
		}
	}
	if got := exitText(procs[0].err); got != "killed by signal 15 (terminated)" {
		t.Errorf("a live process ended with %q, want SIGTERM", got)
	}
}
