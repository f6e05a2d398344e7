package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ews-firmware/ews/internal/demo"
)

func cmdDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("demo", "[--nodes 3] [--base-port 8081]", "Start a local cluster of simulated boards on loopback, each its own `ews run` process;\nprint each URL and the master; Ctrl-C stops them all.", stderr)
	nodes := fs.Int("nodes", 3, "number of boards (1 = standalone)")
	base := fs.Int("base-port", 8081, "HTTP port of the first board; gossip ports start at base+100")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := demo.Run(ctx, demo.Options{Nodes: *nodes, BasePort: *base, Stdout: stdout, Stderr: stderr}); err != nil {
		fmt.Fprintf(stderr, "ews demo: %v\n", err)
		return exitError
	}
	return exitOK
}
