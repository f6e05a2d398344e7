package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/config"
)

func cmdConfig(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("config", "check PATH | init", "check PATH: validate a boot config; prints file:line:col: key: problem and exits 1 on error.\ninit: print an annotated example config (with a fresh cluster key) to stdout.", stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() == 1 && fs.Arg(0) == "init":
		fmt.Fprint(stdout, config.Example())
		return exitOK
	case fs.NArg() == 2 && fs.Arg(0) == "check":
		cfg, err := config.Load(fs.Arg(1))
		if err != nil {
			printConfigError(stderr, err)
			return exitError
		}
		// What can be known of the devices without the hardware.
		if errs := hal.Check(cfg); len(errs) > 0 {
			printConfigError(stderr, errs)
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
