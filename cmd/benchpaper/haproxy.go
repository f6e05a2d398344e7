package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// haproxyConfig is HAProxy in front of standalone boards: leastconn, maxconn = each board's
// capacity, a 2 s queue timeout; prio adds the priority class for control paths (a lower class
// is served first from the backend queue).
func haproxyConfig(listen string, bs []*board, prio bool) string {
	var s strings.Builder
	s.WriteString("# ews bench-paper HAProxy (generated)\nglobal\n  maxconn 5000\n\n")
	s.WriteString("defaults\n  mode http\n  option http-keep-alive\n  timeout connect 2s\n  timeout client 30s\n  timeout server 30s\n  timeout queue 2s\n\n")
	fmt.Fprintf(&s, "frontend fe\n  bind %s\n", listen)
	if prio {
		s.WriteString("  http-request set-priority-class int(-10) if { path_beg /api/devices /cgi-bin }\n")
	}
	s.WriteString("  default_backend boards\n\nbackend boards\n  balance leastconn\n")
	for _, b := range bs {
		fmt.Fprintf(&s, "  server %s %s maxconn %d weight %d\n", b.spec.name, b.http, b.spec.capacity, max(b.spec.weight, 1))
	}
	return s.String()
}

// haproxyPath finds the haproxy binary ("" when missing).
func haproxyPath() string {
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/haproxy", "/usr/local/sbin/haproxy"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// startHAProxy checks and starts HAProxy in the foreground and waits until it forwards.
// threads > 0 sets nbthread (the saturation cells run HAProxy on one thread).
func (h *harness) startHAProxy(ctx context.Context, tag string, g *group, prio bool, threads int) (*proc, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	path := filepath.Join(h.tmp, tag+".cfg")
	cfg := haproxyConfig(addr, g.boards, prio)
	if threads > 0 {
		cfg = strings.Replace(cfg, "global\n", fmt.Sprintf("global\n  nbthread %d\n", threads), 1)
	}
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, "", fmt.Errorf("paper: %w", err)
	}
	if out, err := exec.CommandContext(ctx, h.haproxy, "-c", "-f", path).CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("paper: haproxy -c %s: %v: %s", path, err, out)
	}
	p, err := h.procs.start(tag, filepath.Join(h.tmp, tag+".log"), h.haproxy, "-db", "-f", path)
	if err != nil {
		return nil, "", err
	}
	url := "http://" + addr
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(h.opt.startTimeout)
	for {
		if p.exited() {
			return nil, "", fmt.Errorf("paper: haproxy %w: %v (log %s)", errExited, p.err, filepath.Join(h.tmp, tag+".log"))
		}
		if code, _ := get(ctx, c, url+"/readyz"); code == http.StatusOK {
			return p, url, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			h.procs.stop(p, time.Second)
			return nil, "", fmt.Errorf("paper: haproxy did not forward within %v", h.opt.startTimeout)
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}
