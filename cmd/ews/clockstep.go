package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node"
)

// stepClockOnSignal steps a simulated board's clock while it runs: on
// SIGUSR1 it reads [sim] clock_offset again from the config file at path
// and sets the board's clock to it (node.StepClock), as the history
// checker's nemesis does (docs/NOTES.md, issue 48). A board without [sim],
// or a file that no longer parses, logs why and keeps its clock. Stops
// with ctx.
func stepClockOnSignal(ctx context.Context, path string, n *node.Node, log *slog.Logger) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sig:
			}
			c, err := config.Load(path)
			if err != nil {
				log.Warn("clock: SIGUSR1: the config does not load; the clock stays", "err", err)
				continue
			}
			if err := n.StepClock(c.ClockOffset()); err != nil {
				log.Warn("clock: SIGUSR1 ignored", "err", err)
			}
		}
	}()
}
