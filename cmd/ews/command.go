package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Exit codes of every subcommand.
const (
	exitOK    = 0
	exitError = 1 // runtime or validation error
	exitUsage = 2 // bad flags or arguments
)

type command struct {
	name  string
	usage string // one line: arguments
	help  string
	run   func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"run", "[--config PATH] [--log-format text|json] [--log-level LEVEL]", "run this board's node", cmdRun},
		{"demo", "[--nodes 3] [--base-port 8081] [--log-level error]", "a local cluster on loopback with simulated boards; prints URLs", tool("demo")},
		{"status", "[--url URL] [--json] [--config PATH]", "the cluster table as seen by any node", cmdStatus},
		{"discover", "[--timeout 2s] [--json]", "list the boards on the LAN (mDNS): name, address, role, version", tool("discover")},
		{"bench", "--url URL --rate R --duration D --mix SPEC", "open-loop load generator with a per-class report", tool("bench")},
		{"config", "check PATH | init | migrate-key | pull | push FILE", "validate a config file, print an annotated example, or pull/push the cluster's configuration store", cmdConfig},
		{"cluster", "init --peers LIST | board NAME | join BUNDLE | migrate OLD | ca BUNDLE", "make the admin bundle once; mint and install each board's own", tool("cluster")},
		{"firmware", "sign --bundle ADMIN BINARY | verify --bundle BUNDLE IMAGE", "sign a build with the cluster's key (boards take only signed firmware)", tool("firmware")},
		{"user", "add|list|rotate|delete [NAME] --url URL [--token-file F]", "manage the cluster's users: roles viewer, operator, admin", cmdUser},
		{"upgrade", "--url URL --binary PATH [--token-file PATH]", "rolling firmware upgrade, one board at a time, master last", tool("upgrade")},
		{"version", "", "print version, commit, Go version and target", cmdVersion},
	}
}

// Main runs the CLI and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "ews: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "ews: firmware for a cluster of embedded web servers\n\nUsage:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  ews %-8s %-60s %s\n", c.name, c.usage, c.help)
	}
	fmt.Fprintln(w, "\nRun `ews COMMAND --help` for a command's flags.")
}

// newFlags builds a FlagSet whose --help prints to stderr and whose errors
// are returned, not exited on.
func newFlags(name, args, help string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ews "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: ews %s %s\n\n%s\n", name, args, help)
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
		if b.Len() > 0 {
			fmt.Fprintf(stderr, "\nFlags:\n%s", b.String())
		}
	}
	return fs
}

// runner is a command's or subcommand's entry point.
type runner func(args []string, stdout, stderr io.Writer) int

// subcommand runs the subcommand of command name that args[0] names, with
// the arguments after it; with none of subs there, it prints name's usage
// (usage, help) and returns exitUsage (exitOK for --help).
func subcommand(name, usage, help string, subs map[string]runner, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if run, ok := subs[args[0]]; ok {
			return run(args[1:], stdout, stderr)
		}
	}
	fs := newFlags(name, usage, help, stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	fs.Usage()
	return exitUsage
}

// parse parses flags; ok false means return code now (0 for --help).
func parse(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return exitOK, true
}

// newLogger builds the process logger: text (the default, also on a
// terminal) or JSON for log collectors.
func newLogger(format, level string, stderr io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("bad --log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	}
	return nil, fmt.Errorf("bad --log-format %q: want text or json", format)
}
