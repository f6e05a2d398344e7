package main

import (
	"errors"
	"fmt"
	"io"

	"log/slog"

	"github.com/ews-firmware/ews/internal/bootkey"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/sched"
)

func cmdConfig(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "pull" || args[0] == "push") { // the cluster's store (config_remote.go)
		return configRemote(args[0], args[1:], stdout, stderr)
	}
	fs := newFlags("config", "check PATH | init | migrate-key [PATH] | pull | push FILE", "check PATH: validate a boot config and the secret files it names, as run does; prints every problem as file:line:col: key: problem, in line order, and exits 1 on an error (0 with only warnings).\ninit: print an annotated example config (with a fresh cluster key) to stdout.\nmigrate-key [PATH]: move an inline key and http.token off the boot partition into /etc/ews/cluster.key and /etc/ews/token (run as root by the unit).\npull|push: the cluster's configuration store over the API (ews config pull --help).", stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() >= 1 && fs.Arg(0) == "migrate-key":
		return migrateKey(fs.Args()[1:], stdout, stderr)
	case fs.NArg() == 1 && fs.Arg(0) == "init":
		fmt.Fprint(stdout, config.Example(sched.PolicyNames()...))
		return exitOK
	case fs.NArg() == 2 && fs.Arg(0) == "check":
		return checkConfig(fs.Arg(1), stdout, stderr)
	}
	fs.Usage()
	return exitUsage
}

// checkConfig prints every problem of the file at path, errors and
// warnings together in line order; exit 1 when there is an error, 0 when
// there are only warnings.
func checkConfig(path string, stdout, stderr io.Writer) int {
	cfg, errs, warns := checkAll(path)
	all := append(append(config.Errors{}, errs...), warns...)
	all.Sort()
	for _, e := range all {
		fmt.Fprintln(stderr, e.Error())
	}
	if len(errs) > 0 {
		fmt.Fprintf(stderr, "%s: %s, %s\n", path, count(len(errs), "error"), count(len(warns), "warning"))
		return exitError
	}
	status := "ok"
	if len(warns) > 0 {
		status = count(len(warns), "warning")
	}
	fmt.Fprintf(stdout, "%s: %s (board %s, %d peers, %d devices, policy %s)\n",
		cfg.Path, status, cfg.Node.Name, len(cfg.Cluster.Peers), len(cfg.Devices), cfg.Sched.Policy)
	return exitOK
}

// count is "1 error", "2 errors".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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
	// the token first: each rewrites one line, the key's reload sees the token's
	tokenMoved, err := bootkey.MigrateTokenPath(p, log, bootkey.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "ews config migrate-key: %v\n", err)
		return exitError
	}
	if tokenMoved {
		fmt.Fprintf(stdout, "%s: http.token moved to its token file\n", p)
	}
	changed, err := bootkey.MigratePath(p, log, bootkey.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "ews config migrate-key: %v\n", err)
		return exitError
	}
	if changed {
		fmt.Fprintf(stdout, "%s: key moved to its key file\n", p)
	} else if !tokenMoved {
		fmt.Fprintf(stdout, "%s: nothing to move\n", p)
	}
	return exitOK
}
