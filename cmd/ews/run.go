package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/ews-firmware/ews/internal/bootkey"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/memlimit"
	"github.com/ews-firmware/ews/node"
	"github.com/ews-firmware/ews/node/boardpage"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/firmware"
	"github.com/ews-firmware/ews/node/logring"
)

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", "[--config PATH]", "Run this board's node. Without --config: $EWS_CONFIG, /boot/firmware/ews.toml, /boot/ews.toml, /etc/ews/ews.toml.\nSIGINT/SIGTERM: stop accepting, finish in-flight requests, exit 0; a second signal exits at once.\nSIGUSR1 (a simulated board): read [sim] clock_offset again and step the clock to it.", stderr)
	path := fs.String("config", "", "boot config file")
	format := fs.String("log-format", "text", "log format: text or json")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ews run: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	log, err := newLogger(*format, *level, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ews run: %v\n", err)
		return exitUsage
	}
	// The board page's live log: the last lines, teed from this logger.
	ring := logring.New(logring.DefaultSize)
	log = slog.New(ring.Tee(log.Handler()))
	// a 32-64 MB board: the runtime held to half of it (internal/memlimit)
	if d := memlimit.Set("/proc/meminfo", os.Getenv); d.Limit > 0 {
		log.Info("memory: a small board; the Go runtime's soft limit is set", "total_mib", d.Total>>20, "limit_mib", d.Limit>>20)
	}
	p, err := config.Find(*path)
	if err != nil && *path == "" { // no config anywhere: the first-run page writes one (firstrun.go)
		p, err = firstRun(log, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ews run: %v\n", err)
		return exitError
	}
	// the file, and what the packages it maps onto refuse, each with its line
	cfg, err := config.Load(p, bootconf.CheckConfig)
	if err != nil {
		printConfigError(stderr, err)
		return exitError
	}
	// What `config check` reports, run refuses: the same checks.
	errs, warns := preflight(cfg)
	if len(errs) > 0 {
		printConfigError(stderr, errs)
		return exitError
	}
	for _, w := range warns {
		log.Warn(w.Msg, "file", w.File, "line", w.Line, "key", w.Key)
	}
	// A key inline on the world-readable boot partition moves to
	// /etc/ews/cluster.key; if it cannot, ews runs on and warns each start.
	// So does an inline http.token, to /etc/ews/token (first: each rewrites one line).
	if _, err := bootkey.MigrateToken(cfg, log, bootkey.Options{}); err != nil {
		log.Warn("http.token stays inline on the boot partition, readable by anyone with the SD card", "err", err)
	}
	if _, err := bootkey.Migrate(cfg, log, bootkey.Options{}); err != nil {
		log.Warn("cluster key stays inline on the boot partition, readable by anyone with the SD card", "err", err)
	}
	exe := boardpage.Executable()
	launchSlot(exe, firmwareKey(cfg), log) // a packaged binary hands over to its active firmware slot, if signed (slots.go)
	_, slotted := firmware.SlotsFor(exe)
	// A marker left by an upgrade whose supervisor died (power cut, kill -9)
	// during the trial: this start runs the new binary, so run its trial now.
	if _, pending := firmware.Pending(exe); pending && !slotted && exe != "" && os.Getenv(node.EnvSupervised) != "1" {
		log.Warn("an upgrade's trial was cut short; supervising the new binary until it serves")
		return superviseUpgrade(exe, cfg.Node.HTTP, os.Environ(), nil, log, stderr)
	}
	n, err := node.New(cfg, log, node.WithLogRing(ring), node.WithExecutable(exe))
	if err != nil {
		printConfigError(stderr, err)
		return exitError
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ran := make(chan struct{})
	go func() {
		var s os.Signal
		select {
		case s = <-sigs:
		case <-ran:
			return
		}
		log.Info("signal: shutting down gracefully; send it again to exit at once", "signal", s.String())
		cancel()
		select {
		case s = <-sigs:
		case <-ran:
			return
		}
		log.Warn("second signal: exiting now", "signal", s.String())
		os.Exit(exitError)
	}()
	stepClockOnSignal(ctx, p, n, log)
	var trialFailed atomic.Bool
	commitTrial(ctx, exe, n, log, func() { trialFailed.Store(true); cancel() })
	err = n.Run(ctx)
	close(ran)
	if err != nil {
		log.Error("node stopped", "err", err)
		fmt.Fprintf(stderr, "ews run: %v\n", err)
		return exitError
	}
	if trialFailed.Load() {
		return exitError // the packaged binary rolls the trial back at the next start
	}
	if ctx.Err() != nil {
		return exitOK // a signal, even if a restart was asked for too
	}
	if code, ok := slotComeBack(exe, n.SessionHandoff(), log); ok && n.Exit() != node.ExitStop {
		return code
	}
	return comeBack(n.Exit(), exe, cfg.Node.HTTP, n.SessionHandoff(), sigs, log, stderr)
}
