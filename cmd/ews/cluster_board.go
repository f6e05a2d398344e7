package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/clustertls"
)

// listFlag is a flag that may be given many times (and takes commas).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// scopeFlags are the Name Constraints of a new CA: `ews cluster init` and
// `ews cluster migrate` take them.
type scopeFlags struct {
	peers              *string
	boards, dns, netws listFlag
}

func addScopeFlags(fs *flag.FlagSet) *scopeFlags {
	s := &scopeFlags{}
	s.peers = fs.String("peers", "", "the cluster's boards, as in cluster.peers: \"ews1=10.0.0.11:7946,...\": their names and addresses are what the CA may certify")
	fs.Var(&s.boards, "board", "a board name the CA may certify (NAME and NAME.local); repeat or comma-separate")
	fs.Var(&s.dns, "dns", "a further DNS name the CA may certify (and its subdomains), e.g. ews.local; repeat")
	fs.Var(&s.netws, "net", "an IP address or CIDR the CA may certify (boards' addresses); repeat")
	return s
}

// scope is the CA's Name Constraints; an error names the bad value.
func (s *scopeFlags) scope() (clustertls.Scope, error) {
	var sc clustertls.Scope
	sc.Boards = append(sc.Boards, s.boards...)
	sc.DNS = append(sc.DNS, s.dns...)
	if *s.peers != "" {
		for _, e := range strings.Split(*s.peers, ",") {
			name, addr, ok := strings.Cut(strings.TrimSpace(e), "=")
			host, _, err := net.SplitHostPort(addr)
			if !ok || name == "" || err != nil {
				return sc, fmt.Errorf("--peers: %q is not name=host:port", e)
			}
			sc.Boards = append(sc.Boards, name)
			if n := clustertls.HostNet(host); n != nil {
				sc.Nets = append(sc.Nets, n)
			} else {
				sc.DNS = append(sc.DNS, host)
			}
		}
	}
	for _, v := range s.netws {
		if n := clustertls.HostNet(v); n != nil {
			sc.Nets = append(sc.Nets, n)
			continue
		}
		_, n, err := net.ParseCIDR(v)
		if err != nil {
			return sc, fmt.Errorf("--net: %q is neither an IP address nor a CIDR", v)
		}
		sc.Nets = append(sc.Nets, n)
	}
	if len(sc.Boards) == 0 {
		return sc, fmt.Errorf("name the cluster's boards (--peers \"ews1=10.0.0.11:7946,...\" or --board NAME...): the CA may certify them and nothing else")
	}
	return sc, nil
}

// describe is the scope in one line for the user.
func describeScope(sc clustertls.Scope) string {
	var nets []string
	for _, n := range sc.Nets {
		nets = append(nets, n.String())
	}
	return fmt.Sprintf("boards %s (and NAME.local)%s, addresses %s, localhost and loopback",
		strings.Join(sc.Boards, " "), prefixed(", names ", sc.DNS), orNone(nets))
}

func prefixed(p string, l []string) string {
	if len(l) == 0 {
		return ""
	}
	return p + strings.Join(l, " ")
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, " ")
}

// readAdmin reads the admin bundle at path, or says what the file is instead.
func readAdmin(path string) (*bundle.Bundle, error) {
	b, err := bundle.Read(path)
	if err != nil {
		return nil, err
	}
	if err := b.NeedAdmin(path); err != nil {
		return nil, err
	}
	return b, nil
}

// clusterBoard is `ews cluster board NAME [--addr IP]... --bundle ADMIN --out FILE`.
func clusterBoard(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster board", "NAME [--addr HOST]... --bundle ADMIN [--out FILE] [--force]",
		"Mint board NAME's own bundle from the admin bundle: gossip key, credentials, session secret, CA\ncertificate, NAME's certificate and key, the firmware verify key; no CA key, no signing key.", stderr)
	var addrs listFlag
	fs.Var(&addrs, "addr", "an address (or DNS name) the board is reached at, a SAN of its certificate; repeat")
	admin := fs.String("bundle", "", "the admin bundle (from ews cluster init)")
	out := fs.String("out", "", "the board bundle to write (mode 0600; default ./NAME"+boardSuffix+")")
	force := fs.Bool("force", false, "overwrite FILE")
	if code, ok := parse(fs, interleave(args, map[string]bool{"force": true})); !ok {
		return code
	}
	if fs.NArg() != 1 || *admin == "" {
		fmt.Fprintln(stderr, "ews cluster board: want NAME and --bundle ADMIN")
		return exitUsage
	}
	if *out == "" {
		*out = fs.Arg(0) + boardSuffix
	}
	a, err := readAdmin(*admin)
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster board: %v\n", err)
		return exitError
	}
	b, err := a.Board(fs.Arg(0), addrs, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster board: %v\n", err)
		return exitError
	}
	if err := bundle.Write(*out, b, *force); err != nil {
		fmt.Fprintf(stderr, "ews cluster board: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "ews: wrote board %s's bundle %s (mode 0600): install it as /etc/ews/%s and set cluster.bundle_file\n", b.Name, *out, bundle.DefaultName)
	return exitOK
}

// clusterMigrate is `ews cluster migrate OLD --out ADMIN [scope]`.
func clusterMigrate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster migrate", "OLD --out ADMIN (--peers LIST | --board NAME...) [--dns NAME]... [--net CIDR]... [--force]",
		"Turn a version 1 or 2 cluster bundle (the same file, CA key included, on every board) into an admin\nbundle: same gossip key, token, session secret and users; a new CA with Name Constraints and a\nfirmware signing key. Then install each board's bundle (deploy.sh --bundle ADMIN, or ews cluster join).", stderr)
	out := fs.String("out", "", "the admin bundle to write (mode 0600)")
	force := fs.Bool("force", false, "overwrite ADMIN")
	sf := addScopeFlags(fs)
	if code, ok := parse(fs, interleave(args, map[string]bool{"force": true})); !ok {
		return code
	}
	if fs.NArg() != 1 || *out == "" {
		fmt.Fprintln(stderr, "ews cluster migrate: want OLD and --out ADMIN")
		return exitUsage
	}
	sc, err := sf.scope()
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster migrate: %v\n", err)
		return exitUsage
	}
	old, err := bundle.Read(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster migrate: %v\n", err)
		return exitError
	}
	b, err := bundle.Migrate(old, sc, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster migrate: %s: %v\n", fs.Arg(0), err)
		return exitError
	}
	if err := bundle.Write(*out, b, *force); err != nil {
		fmt.Fprintf(stderr, "ews cluster migrate: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "ews: wrote the admin bundle %s: the gossip key and token of %s, a new CA for %s, a firmware signing key.\n", *out, fs.Arg(0), describeScope(sc))
	fmt.Fprintf(stdout, "Next: install each board's bundle (scripts/deploy.sh --bundle %s ..., or ews cluster join %s --name NAME on the board),\nremove the old CA from browsers and trust the new one (ews cluster ca %s), and keep %s off the boards.\n", *out, *out, *out, *out)
	return exitOK
}

// serviceOwner is the uid and gid of the service user ews when this
// process may give files to it (root), else -1, -1.
func serviceOwner() (int, int) {
	if os.Geteuid() != 0 {
		return -1, -1
	}
	u, err := user.Lookup("ews")
	if err != nil {
		return -1, -1
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return -1, -1
	}
	return uid, gid
}
