package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// Options of a demo run.
type Options struct {
	Nodes    int
	BasePort int
	Exe      string // the ews binary to start; default: this executable
	Dir      string // where configs go; default: a temp dir removed at the end
	LogLevel string // the boards' --log-level; default "error": the demo prints exits and takeovers itself
	Stdout   io.Writer
	Stderr   io.Writer // children's logs, prefixed with the board name
}

// watchEvery is how often the demo asks a live board who the master is.
const watchEvery = 500 * time.Millisecond

// Run starts the boards, prints their URLs and PIDs once all are ready, and
// stops them all when ctx is done. A board that fails to start is an error;
// one that dies later (say `kill -9` of the master, to watch a takeover) is
// reported and the others keep running; Run returns an error only when every
// board has exited.
func Run(ctx context.Context, o Options) error {
	if o.Nodes < 1 || o.Nodes > 32 {
		return fmt.Errorf("demo: --nodes %d: want 1 to 32", o.Nodes)
	}
	if o.BasePort < 1 || o.BasePort+100+o.Nodes > 65535 {
		return fmt.Errorf("demo: --base-port %d out of range", o.BasePort)
	}
	if o.LogLevel == "" {
		o.LogLevel = "error"
	}
	if o.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("demo: find ews binary: %w", err)
		}
		o.Exe = exe
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "ews-demo-")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer os.RemoveAll(dir)
		o.Dir = dir
	}
	cgiDir := filepath.Join(o.Dir, "cgi-bin")
	if err := writeCGI(cgiDir); err != nil {
		return err
	}
	boards := Boards(o.Nodes, o.BasePort)
	key := config.NewKey()

	exited := make(chan *proc, len(boards))
	procs := make([]*proc, 0, len(boards))
	defer func() { stopAll(procs) }()
	for i, b := range boards {
		path := filepath.Join(o.Dir, b.Name+".toml")
		if err := os.WriteFile(path, []byte(Config(boards, i, key, cgiDir)), 0o600); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		// Each board runs its own copy of the binary: a firmware upload
		// from a board's page replaces that board's file only.
		exe, err := ownBinary(o.Exe, filepath.Join(o.Dir, b.Name))
		if err != nil {
			return err
		}
		cmd := exec.Command(exe, "run", "--config", path, "--log-level", o.LogLevel)
		cmd.Stdout = prefixed(o.Stderr, b.Name)
		cmd.Stderr = prefixed(o.Stderr, b.Name)
		// Own process group: a terminal's Ctrl-C reaches only the demo, which
		// then stops each board once, and `kill -9 PID` hits one board only;
		// Pdeathsig stops them if the demo dies.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("demo: start %s: %w", b.Name, err)
		}
		p := &proc{Board: b, cmd: cmd, done: make(chan struct{})}
		procs = append(procs, p)
		go func() {
			p.err = cmd.Wait()
			close(p.done)
			exited <- p
		}()
	}
	for _, p := range procs {
		if err := waitReady(ctx, "http://"+p.HTTP, exited); err != nil {
			return fmt.Errorf("demo: board %s: %w", p.Name, err)
		}
	}
	fmt.Fprintf(o.Stdout, "ews demo: %d simulated boards on loopback (token for device actions: %s)\n", len(boards), Token)
	for _, p := range procs {
		fmt.Fprintf(o.Stdout, "  %s  pid %-7d http://%s/\n", p.Name, p.pid(), p.HTTP)
	}
	w := &watcher{procs: procs, out: o.Stdout}
	if m, epoch := waitMaster(ctx, "http://"+boards[0].HTTP, exited); m != "" {
		w.saw(m, epoch)
	}
	// ready means the configuration store answers too: it is seeded into the durable log
	// after the election, and a `ews config pull` right after the demo started got 503
	if !waitStore(ctx, "http://"+boards[0].HTTP, exited) {
		fmt.Fprintf(o.Stdout, "ews demo: the configuration store is not ready yet (GET /api/config answers 503 until it is)\n")
	}
	fmt.Fprintf(o.Stdout, "board logs: errors only (ews demo --log-level info for all); press Ctrl-C to stop them all\n")
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(o.Stdout, "ews demo: stopping")
			return nil
		case p := <-exited:
			live := liveNames(procs)
			if len(live) == 0 {
				return fmt.Errorf("demo: board %s (pid %d) %s, and no board is left", p.Name, p.pid(), exitText(p.err))
			}
			fmt.Fprintf(o.Stdout, "ews demo: board %s (pid %d) %s; %s keep running\n", p.Name, p.pid(), exitText(p.err), strings.Join(live, ", "))
		case <-tick.C:
			w.check(ctx)
		}
	}
}

// liveNames lists the boards whose process has not exited.
func liveNames(procs []*proc) []string {
	var out []string
	for _, p := range procs {
		if p.alive() {
			out = append(out, p.Name)
		}
	}
	return out
}

func waitReady(ctx context.Context, base string, exited chan *proc) error {
	c := &http.Client{Timeout: time.Second}
	err := poll(ctx, 30*time.Second, exited, func() bool {
		resp, err := c.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	return nil
}

// poll calls done every 50 ms until it holds, ctx ends, a board exits
// (it is put back for Run's main loop) or limit passes.
func poll(ctx context.Context, limit time.Duration, exited chan *proc, done func() bool) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case p := <-exited:
			exited <- p
			return fmt.Errorf("board %s %s", p.Name, exitText(p.err))
		case <-deadline.C:
			return fmt.Errorf("not within %v", limit)
		case <-tick.C:
		}
	}
	return nil
}

// waitMaster waits until the boards have elected a master (they listen
// tmax before claiming), at most 15 s; "" if none by then.
func waitMaster(ctx context.Context, base string, exited chan *proc) (string, uint64) {
	var m string
	var epoch uint64
	_ = poll(ctx, 15*time.Second, exited, func() bool { m, epoch = master(ctx, base); return m != "" })
	return m, epoch
}

// waitStore waits until the board at base answers GET /api/config (the
// store seeded into the durable log), at most 15 s; false if not by then.
func waitStore(ctx context.Context, base string, exited chan *proc) bool {
	c := &http.Client{Timeout: time.Second}
	return poll(ctx, 15*time.Second, exited, func() bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/config", nil)
		if err != nil {
			return false
		}
		req.Header.Set("Authorization", "Bearer "+Token)
		resp, err := c.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) == nil
}

// master asks the board at base who the master is; "" if it does not answer.
func master(ctx context.Context, base string) (string, uint64) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/cluster", nil)
	if err != nil {
		return "", 0
	}
	resp, err := (&http.Client{Timeout: time.Second}).Do(req)
	if err != nil {
		return "", 0
	}
	defer resp.Body.Close()
	var v struct {
		Master string `json:"master"`
		Epoch  uint64 `json:"epoch"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v) != nil {
		return "", 0
	}
	return v.Master, v.Epoch
}

// prefixed copies a child's output line by line, each line led by its board.
func prefixed(w io.Writer, name string) io.Writer {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		for sc.Scan() {
			fmt.Fprintf(w, "[%s] %s\n", name, sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	return pw
}
