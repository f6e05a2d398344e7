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
	"sync"
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
	Stdout   io.Writer
	Stderr   io.Writer // children's logs, prefixed with the board name
}

// Run starts the boards, prints their URLs once all are ready, and stops
// them all when ctx is done. It returns an error if a board fails to start
// or exits on its own.
func Run(ctx context.Context, o Options) error {
	if o.Nodes < 1 || o.Nodes > 32 {
		return fmt.Errorf("demo: --nodes %d: want 1 to 32", o.Nodes)
	}
	if o.BasePort < 1 || o.BasePort+100+o.Nodes > 65535 {
		return fmt.Errorf("demo: --base-port %d out of range", o.BasePort)
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

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	exited := make(chan error, len(boards))
	procs := make([]*exec.Cmd, 0, len(boards))
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
		wg.Wait()
	}()
	for i, b := range boards {
		path := filepath.Join(o.Dir, b.Name+".toml")
		if err := os.WriteFile(path, []byte(Config(boards, i, key, cgiDir)), 0o600); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		cmd := exec.Command(o.Exe, "run", "--config", path)
		cmd.Stdout = prefixed(o.Stderr, b.Name)
		cmd.Stderr = prefixed(o.Stderr, b.Name)
		// Own process group: a terminal's Ctrl-C reaches only the demo, which
		// then stops each board once; Pdeathsig stops them if the demo dies.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("demo: start %s: %w", b.Name, err)
		}
		procs = append(procs, cmd)
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cmd.Wait()
			select {
			case <-ctx.Done():
			default:
				exited <- fmt.Errorf("demo: board %s exited: %v", b.Name, err)
			}
		}()
	}
	for _, b := range boards {
		if err := waitReady(ctx, "http://"+b.HTTP, exited); err != nil {
			return fmt.Errorf("demo: board %s: %w", b.Name, err)
		}
	}
	fmt.Fprintf(o.Stdout, "ews demo: %d simulated boards on loopback (token for device actions: %s)\n", len(boards), Token)
	for _, b := range boards {
		fmt.Fprintf(o.Stdout, "  %s  http://%s/\n", b.Name, b.HTTP)
	}
	if m := waitMaster(ctx, "http://"+boards[0].HTTP, exited); m != "" {
		fmt.Fprintf(o.Stdout, "master: %s\n", m)
	}
	fmt.Fprintln(o.Stdout, "press Ctrl-C to stop them all")
	select {
	case <-ctx.Done():
		fmt.Fprintln(o.Stdout, "ews demo: stopping")
		return nil
	case err := <-exited:
		return err
	}
}

func waitReady(ctx context.Context, base string, exited chan error) error {
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
// (its error is put back for Run's main loop) or limit passes.
func poll(ctx context.Context, limit time.Duration, exited chan error, done func() bool) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-exited:
			exited <- err
			return err
		case <-deadline.C:
			return fmt.Errorf("not within %v", limit)
		case <-tick.C:
		}
	}
	return nil
}

// waitMaster waits until the boards have elected a master (they listen
// tmax before claiming), at most 15 s; "" if none by then.
func waitMaster(ctx context.Context, base string, exited chan error) string {
	var m string
	_ = poll(ctx, 15*time.Second, exited, func() bool { m = master(ctx, base); return m != "" })
	return m
}

func master(ctx context.Context, base string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/cluster", nil)
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var v struct {
		Master string `json:"master"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return v.Master
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
