package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ews-firmware/ews/internal/tool/demo"
)

func cmdDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("demo", "[--nodes 3] [--base-port 8081] [--log-level error]", "Start a local cluster of simulated boards on loopback, each its own `ews run` process;\nprint each URL and PID, and the master with a `kill -9` line to watch a takeover.\nA board killed from outside stays dead, the others keep running; Ctrl-C stops them all.", stderr)
	nodes := fs.Int("nodes", 3, "number of boards (1 = standalone)")
	base := fs.Int("base-port", 8081, "HTTP port of the first board; gossip ports start at base+100")
	level := fs.String("log-level", "error", "the boards' log level: debug, info, warn or error (the demo itself prints exits and takeovers)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(stderr, "ews demo: bad --log-level %q: want debug, info, warn or error\n", *level)
		return exitUsage
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := demo.Run(ctx, demo.Options{Nodes: *nodes, BasePort: *base, LogLevel: *level, Stdout: stdout, Stderr: stderr}); err != nil {
		fmt.Fprintf(stderr, "ews demo: %v\n", err)
		return exitError
	}
	return exitOK
}
