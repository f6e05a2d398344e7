package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ews-firmware/ews/internal/tool/bench"
)

// cmdBench runs the open-loop load generator; the first Ctrl-C stops it and
// prints the partial report.
func cmdBench(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	return bench.Main(ctx, args, stdout, stderr)
}
