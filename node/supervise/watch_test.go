package supervise

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func TestCheckWatchesTheWatcher(t *testing.T) {
	// Bounds: pass every 1s, stale after 5s (and no pass while Check
	// waits: its timer has fired); restart overdue after maxBackoff (2s) +
	// grace (1s) + a pass (1s) = 4s down.
	tests := []struct {
		name    string
		helpers int
		passes  bool          // run one sweep before the clock moves
		down    time.Duration // helper 0 down this long before the sweep (0: up)
		advance time.Duration // clock moved after the sweep
		want    string        // "" for healthy, else a part of the error
	}{
		{name: "no helpers: nothing to watch", helpers: 0, advance: time.Hour},
		{name: "before the first pass", helpers: 1},
		{name: "fresh pass", helpers: 1, passes: true, advance: 5 * time.Second},
		{name: "stalled loop", helpers: 1, passes: true, advance: 5*time.Second + time.Millisecond, want: "watch loop stalled"},
		{name: "helper in its backoff", helpers: 1, passes: true, down: 4 * time.Second},
		{name: "helper restart overdue", helpers: 1, passes: true, down: 4*time.Second + time.Millisecond, want: "restart overdue: h0 down 4.001s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testutil.NewClock(time.Unix(1_000_000, 0))
			var entries []Helper
			for i := range tt.helpers {
				entries = append(entries, Helper{Name: "h" + strconv.Itoa(i), Command: []string{"/bin/true"}})
			}
			s := New(entries, testutil.Logger(), withClock(clk.Now), withWatch(time.Second, 5*time.Second),
				withBackoff(time.Second, 2*time.Second), withGrace(time.Second), withTick(fired))
			if tt.down > 0 {
				s.setDown(0, clk.Now().Add(-tt.down))
			}
			if tt.passes {
				s.sweep()
			}
			clk.Add(tt.advance)
			err := s.Check(context.Background())
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check = %v, want healthy", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Check = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// A pass that is late, not stuck (a board starved of CPU runs Check and
// the loop's overdue pass together), passes while Check waits: healthy.
// One that never comes fails, and so does a check whose deadline ends
// the wait.
func TestCheckWaitsForALatePass(t *testing.T) {
	for _, tt := range []struct {
		name string
		late bool // the loop passes while Check waits
		ctx  bool // Check's context ends instead
		want string
	}{
		{name: "late pass", late: true},
		{name: "no pass", want: "none while waiting 5s more"},
		{name: "deadline", ctx: true, want: "none before the check's deadline"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := testutil.NewClock(time.Unix(1_000_000, 0))
			tick := fired
			if tt.late || tt.ctx {
				tick = never
			}
			s := New([]Helper{{Name: "h", Command: []string{"/bin/true"}}}, testutil.Logger(),
				withClock(clk.Now), withWatch(time.Second, 5*time.Second), withTick(tick))
			s.sweep()
			clk.Add(time.Minute) // the process slept a minute: the pass is overdue
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.ctx {
				cancel()
			}
			got := make(chan error, 1)
			go func() { got <- s.Check(ctx) }()
			if tt.late {
				s.sweep()
			}
			err := <-got
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check = %v, want healthy", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Check = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestWatchLoopStopsWithRun(t *testing.T) {
	s := New([]Helper{{Name: "idle", Command: []string{"/bin/sh", "-c", "exec sleep 60"}}}, testutil.Logger(),
		withWatch(10*time.Millisecond, time.Minute), withGrace(2*time.Second))
	stop := start(t, s)
	testutil.Eventually(t, "a first pass of the watch loop", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return !s.beat.IsZero()
	})
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("Check on a running loop = %v", err)
	}
	stop() // fails the test if the watch loop keeps Run from returning
}

// helperEnv makes the test binary a helper: it serves /readyz on loopback
// and writes "PID ADDR" to the file the variable names.
const helperEnv = "EWS_SUPERVISE_TEST_SERVE"

func TestMain(m *testing.M) {
	if f := os.Getenv(helperEnv); f != "" {
		serveReadyz(f)
		return
	}
	os.Exit(m.Run())
}

func serveReadyz(file string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%d %s", os.Getpid(), ln.Addr()), 0o644); err != nil || os.Rename(tmp, file) != nil {
		os.Exit(2)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ready") })
	_ = http.Serve(ln, mux)
}

// TestKilledHelperRestartTime kills a supervised helper with SIGKILL and
// prints the time until its successor answers /readyz 200, with the
// default first backoff (paper 002: a killed process back "within
// seconds"). A printed figure, not an assertion: the wait is bounded only
// so that a broken restart fails.
func TestKilledHelperRestartTime(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "helper.addr")
	t.Setenv(helperEnv, file) // the helper inherits ews's environment
	s := New([]Helper{{Name: "web", Command: []string{exe}}}, testutil.Logger(), withGrace(2*time.Second))
	stop := start(t, s)
	defer stop()

	client := &http.Client{Timeout: 2 * time.Second}
	ready := func(notPID int) (int, bool, string) {
		b, err := os.ReadFile(file)
		if err != nil {
			return 0, false, err.Error()
		}
		var pid int
		var addr string
		if _, err := fmt.Sscanf(string(b), "%d %s", &pid, &addr); err != nil || pid == notPID {
			return 0, false, string(b)
		}
		resp, err := client.Get("http://" + addr + "/readyz")
		if err != nil {
			return 0, false, err.Error()
		}
		resp.Body.Close()
		return pid, resp.StatusCode == http.StatusOK, resp.Status
	}
	var first int
	testutil.WaitFor(t, "the helper's first /readyz 200", 20*time.Second, func() (bool, string) {
		pid, ok, seen := ready(0)
		first = pid
		return ok, seen
	})
	killed := time.Now()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the restarted helper's /readyz 200", 20*time.Second, func() (bool, string) {
		_, ok, seen := ready(first)
		return ok, seen
	})
	took := time.Since(killed)
	fmt.Printf("supervise: killed helper answered /readyz 200 again after %v (first backoff %v)\n", took.Round(time.Millisecond), DefaultMinBackoff)
	if st := s.status()[0]; st.Restarts != 1 || !strings.Contains(st.LastExit, "killed") {
		t.Errorf("status after one kill = %+v, want 1 restart after a kill", st)
	}
}

// A wait that took far longer than planned was starved itself and proves
// nothing: Check waits again, and fails only after a wait on time.
func TestCheckWaitsAgainAfterAStarvedWait(t *testing.T) {
	clk := testutil.NewClock(time.Unix(1_000_000, 0))
	waits := 0
	tick := func(d time.Duration) <-chan time.Time {
		waits++
		if waits == 1 {
			clk.Add(2 * d) // the process slept through the first wait
		}
		return fired(d)
	}
	s := New([]Helper{{Name: "h", Command: []string{"/bin/true"}}}, testutil.Logger(),
		withClock(clk.Now), withWatch(time.Second, 5*time.Second), withTick(tick))
	s.sweep()
	clk.Add(time.Minute)
	err := s.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "none while waiting") {
		t.Fatalf("Check = %v, want a stall", err)
	}
	if waits != 2 {
		t.Fatalf("Check waited %d times, want 2 (the starved wait again)", waits)
	}
}
