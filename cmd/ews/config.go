package main

import (
	"errors"
	"fmt"
	"io"

	"log/slog"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/bootkey"
)

func cmdConfig(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("config", "check PATH | init | migrate-key [PATH]", "check PATH: validate a boot config; prints file:line:col: key: problem and exits 1 on error.\ninit: print an annotated example config (with a fresh cluster key) to stdout.\nmigrate-key [PATH]: move an inline key off the boot partition into /etc/ews/cluster.key (run as root by the unit).", stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() >= 1 && fs.Arg(0) == "migrate-key":
		return migrateKey(fs.Args()[1:], stdout, stderr)
	case fs.NArg() == 1 && fs.Arg(0) == "init":
		fmt.Fprint(stdout, config.Example())
		return exitOK
	case fs.NArg() == 2 && fs.Arg(0) == "check":
		// Load also asks hal what it can know of the devices without the hardware.
		cfg, err := config.Load(fs.Arg(1))
		if err != nil {
			printConfigError(stderr, err)
			return exitError
		}
		if _, err := cfg.ClusterKey(); err != nil && cfg.Cluster.KeyFile != "" {
			// The key file may live only on the board; say so, do not fail.
			fmt.Fprintf(stderr, "warning: %v\n", err)
		}
		fmt.Fprintf(stdout, "%s: ok (board %s, %d peers, %d devices, policy %s)\n",
			cfg.Path, cfg.Node.Name, len(cfg.Cluster.Peers), len(cfg.Devices), cfg.Sched.Policy)
		return exitOK
	}
	fs.Usage()
	return exitUsage
}

// printConfigError prints each config problem on its own line.
func printConfigError(w io.Writer, err error) {
	var es config.Errors
	if errors.As(err, &es) {
		for _, e := range es {
			fmt.Fprintln(w, e.Error())
		}
		return
	}
	fmt.Fprintln(w, err.Error())
}

func migrateKey(args []string, stdout, stderr io.Writer) int {
	if len(args) > 1 {
		fmt.Fprintln(stderr, "ews config migrate-key: at most one PATH")
		return exitUsage
	}
	explicit := ""
	if len(args) == 1 {
		explicit = args[0]
	}
	p, err := config.Find(explicit)
	if err != nil {
		fmt.Fprintf(stderr, "ews config migrate-key: %v\n", err)
		return exitError
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	changed, err := bootkey.MigratePath(p, log, bootkey.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "ews config migrate-key: %v\n", err)
		return exitError
	}
	if changed {
		fmt.Fprintf(stdout, "%s: key moved to its key file\n", p)
	} else {
		fmt.Fprintf(stdout, "%s: nothing to move\n", p)
	}
	return exitOK
}
